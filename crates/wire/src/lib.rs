//! The MCP Fusion error contract: every failure of a tool call as a structured envelope a
//! language model can act on, rendered byte-exactly and parsed back.
//!
//! This crate is pure: no async, no I/O, no MCP SDK. It holds the model ([`ErrorCode`],
//! [`Severity`], [`ToolError`], [`ValidationError`], [`ContractAwareness`]), the rendering of
//! each envelope, and the [`parse`]r that reads any of them back.
//!
//! # A tool error
//!
//! ```
//! use mcp_fusion_wire::ToolError;
//!
//! let err = ToolError::not_found("No invoice with that ID")
//!     .suggest("List invoices first, then retry with a real ID")
//!     .actions(["billing.list_invoices"])
//!     .detail("requestedId", "inv_2026_9999");
//! assert_eq!(err.render(), r#"<tool_error code="NOT_FOUND" severity="error">
//! <message>No invoice with that ID</message>
//! <recovery>List invoices first, then retry with a real ID</recovery>
//! <available_actions>
//!   <action>billing.list_invoices</action>
//! </available_actions>
//! <details>
//!   <detail key="requestedId">inv_2026_9999</detail>
//! </details>
//! </tool_error>"#);
//! assert!(err.to_call_result().is_error);
//! ```
//!
//! # A warning
//!
//! Guidance on the success path: the same envelope, sent with `isError: false`.
//!
//! ```
//! use mcp_fusion_wire::ToolError;
//!
//! let warning = ToolError::deprecated("billing.search is deprecated.")
//!     .suggest("Use billing.list_invoices instead.")
//!     .actions(["billing.list_invoices"]);
//! assert_eq!(warning.render(), r#"<tool_error code="DEPRECATED" severity="warning">
//! <message>billing.search is deprecated.</message>
//! <recovery>Use billing.list_invoices instead.</recovery>
//! <available_actions>
//!   <action>billing.list_invoices</action>
//! </available_actions>
//! </tool_error>"#);
//! assert!(!warning.to_call_result().is_error);
//! ```
//!
//! # A critical error with a retry delay
//!
//! ```
//! use mcp_fusion_wire::{ErrorCode, ToolError};
//!
//! let err = ToolError::new(ErrorCode::HandoffUpstreamUnavailable, "Upstream \"crm\" is down & restarting.")
//!     .critical()
//!     .retry_after(30);
//! assert_eq!(err.render(), r#"<tool_error code="HANDOFF_UPSTREAM_UNAVAILABLE" severity="critical">
//! <message>Upstream "crm" is down &amp; restarting.</message>
//! <retry_after>30 seconds</retry_after>
//! </tool_error>"#);
//! ```
//!
//! # A validation error, written to heal
//!
//! ```
//! use mcp_fusion_wire::{Bound, Expectation, FieldPath, FieldProblem, ProblemKind, Sent, ValidationError};
//! use serde_json::json;
//!
//! let args = json!({"customer_email": "not-an-email", "amount_cents": 0});
//! let err = ValidationError::new("billing.create_invoice")
//!     .field(FieldProblem::new(
//!         &FieldPath::root().key("amount_cents"),
//!         &ProblemKind::TooSmall(Bound::Number { limit: 1.into(), exclusive: false }),
//!         &Sent::value(&args["amount_cents"]),
//!     ))
//!     .field(FieldProblem::new(
//!         &FieldPath::root().key("currency"),
//!         &ProblemKind::Missing { expected: Expectation::of_types(vec!["string".into()]) },
//!         &Sent::missing(),
//!     ))
//!     .field(FieldProblem::new(
//!         &FieldPath::root().key("customer_email"),
//!         &ProblemKind::InvalidFormat { format: "email".into() },
//!         &Sent::value(&args["customer_email"]),
//!     ));
//! assert_eq!(err.render(), r#"<validation_error action="billing.create_invoice">
//! <field name="amount_cents">Too small. You sent: 0. Expected at least 1.</field>
//! <field name="currency">Missing required field. You sent: (missing). Expected a string.</field>
//! <field name="customer_email">Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com.</field>
//! <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
//! </validation_error>"#);
//! ```
//!
//! # Contract awareness on top
//!
//! ```
//! use mcp_fusion_wire::{ChangeSeverity, ContractAwareness, ContractChange, FieldProblem, ValidationError};
//!
//! let err = ValidationError::new("billing.get_invoice")
//!     .field(FieldProblem { name: "customer_id".into(), text: "Missing required field. You sent: (missing). Expected a string.".into() })
//!     .with_contract_awareness(ContractAwareness {
//!         tool: "billing".into(),
//!         action: "billing.get_invoice".into(),
//!         changes: vec![ContractChange {
//!             severity: ChangeSeverity::Breaking,
//!             field: "actions.get_invoice.required".into(),
//!             description: "Action \"get_invoice\" now requires new fields: [customer_id]".into(),
//!             before: Some(r#"["id"]"#.into()),
//!             after: Some(r#"["customer_id","id"]"#.into()),
//!         }],
//!     });
//! assert_eq!(err.render(), r#"<validation_error action="billing.get_invoice">
//! <field name="customer_id">Missing required field. You sent: (missing). Expected a string.</field>
//! <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
//! <contract_awareness>
//!   <system_note>IMPORTANT: The behavioral contract for tool "billing" has changed since your last calibration.</system_note>
//!   <action>billing.get_invoice</action>
//!   <change_count>1</change_count>
//!   <max_severity>BREAKING</max_severity>
//!   <instructions>Review the contract changes below and adjust your next invocation accordingly. These changes may explain why your previous arguments were rejected.</instructions>
//!   <contract_changes>
//!     <change severity="BREAKING" field="actions.get_invoice.required">
//!       <description>Action "get_invoice" now requires new fields: [customer_id]</description>
//!       <before>["id"]</before>
//!       <after>["customer_id","id"]</after>
//!     </change>
//!   </contract_changes>
//! </contract_awareness>
//! </validation_error>"#);
//! ```
//!
//! # Parsing any of them back
//!
//! ```
//! use mcp_fusion_wire::{parse, Envelope, ToolError};
//!
//! let err = ToolError::rate_limited("Slow down.", 12).detail("limit", 100);
//! assert_eq!(parse(&err.render()), Envelope::from(err.clone()));
//! assert_eq!(parse(&err.render()).error, err);
//! ```

mod budget;
mod call_result;
mod code;
pub mod conformance;
mod contract;
mod converted;
mod echo;
mod escape;
mod expectation;
mod parse;
mod path;
mod problem;
mod protocol_error;
mod rebuilt;
mod report;
mod sent;
mod severity;
mod shape;
mod tool_error;
mod validation;
mod value_free;

pub use budget::{DEFAULT_ENVELOPE_BUDGET, MIN_ENVELOPE_BUDGET};
pub use call_result::{CallResult, NotAResult, ParsedResult, parse_call_result};
pub use code::ErrorCode;
pub use contract::{CONTRACT_INSTRUCTIONS, ChangeSeverity, ContractAwareness, ContractChange, UnknownChangeSeverity};
pub use converted::{Conversion, converted_warning};
pub use echo::{echo, is_invisible};
pub use escape::{escape_attr, escape_text, unescape};
pub use expectation::Expectation;
pub use parse::{Envelope, EnvelopeKind, parse};
pub use path::{FieldPath, Segment};
pub use problem::{Bound, Condition, FieldProblem, KnownField, ProblemKind, Suggestion, value_kind};
pub use protocol_error::{INVALID_PARAMS, ProtocolError, names_an_unknown_tool};
pub use rebuilt::visible;
pub use sent::Sent;
pub use severity::Severity;
pub use shape::{Fields, Shape};
pub use tool_error::{INTERNAL_ERROR_RECOVERY, ToolError, ToolErrorFields};
pub use validation::{VALIDATION_RECOVERY, ValidationError};
pub use value_free::{VALUE_LEFT_OUT, values_left_out};

/// The crate README's examples (its crates.io page), compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadme;
