//! The `<validation_error>` envelope: rejected arguments, one sentence per problem, written so
//! the model fixes its own call.

use crate::call_result::CallResult;
use crate::contract::ContractAwareness;
use crate::escape::{push_attr, push_text};
use crate::problem::FieldProblem;

/// The closing instruction of every validation error. Models tend to apologise to the user
/// instead of calling again; this tells them not to.
pub const VALIDATION_RECOVERY: &str = "Fix the fields above and call the tool again. Do not explain the error.";

const CLOSE_TAG: &str = "</validation_error>";

/// Rejected arguments of one action: every problem found, in a stable order.
///
/// ```
/// use mcp_fusion_wire::{FieldPath, FieldProblem, ProblemKind, Sent, ValidationError};
/// use serde_json::json;
///
/// let err = ValidationError::new("billing.create_invoice")
///     .field(FieldProblem::new(
///         &FieldPath::root().key("customer_email"),
///         &ProblemKind::InvalidFormat { format: "email".into() },
///         &Sent::value(&json!("not-an-email")),
///     ));
/// assert_eq!(err.render(), "\
/// <validation_error action=\"billing.create_invoice\">
/// <field name=\"customer_email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com.</field>
/// <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
/// </validation_error>");
/// assert!(err.to_call_result().is_error);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValidationError {
    /// The qualified action (`billing.get_invoice`).
    pub action: String,
    /// The problems, one `<field>` line each.
    pub fields: Vec<FieldProblem>,
    /// The contract changes of this action, when self-healing is configured.
    pub contract_awareness: Option<ContractAwareness>,
}

impl ValidationError {
    /// A validation error of `action` with no problems yet.
    pub fn new(action: impl Into<String>) -> ValidationError {
        ValidationError { action: action.into(), fields: Vec::new(), contract_awareness: None }
    }

    /// Adds one problem.
    pub fn field(mut self, problem: FieldProblem) -> ValidationError {
        self.fields.push(problem);
        self
    }

    /// Attaches the contract-awareness block (replacing any earlier one: it appears once).
    pub fn with_contract_awareness(mut self, awareness: ContractAwareness) -> ValidationError {
        self.contract_awareness = Some(awareness);
        self
    }

    /// The message a parser reports for this error: `Invalid arguments for {action}.`
    pub fn message(&self) -> String {
        format!("Invalid arguments for {}.", self.action)
    }

    /// Renders the envelope.
    pub fn render(&self) -> String {
        let fields: usize = self.fields.iter().map(|f| f.name.len() + f.text.len() + 24).sum();
        let mut out = String::with_capacity(160 + self.action.len() + fields);
        out.push_str("<validation_error action=\"");
        push_attr(&mut out, &self.action);
        out.push_str("\">\n");
        for problem in &self.fields {
            out.push_str("<field name=\"");
            push_attr(&mut out, &problem.name);
            out.push_str("\">");
            push_text(&mut out, &problem.text);
            out.push_str("</field>\n");
        }
        out.push_str("<recovery>");
        out.push_str(VALIDATION_RECOVERY);
        out.push_str("</recovery>\n");
        if let Some(awareness) = &self.contract_awareness {
            awareness.render_into(&mut out);
            out.push('\n');
        }
        out.push_str(CLOSE_TAG);
        out
    }

    /// The MCP result: one text block, `isError: true`.
    pub fn to_call_result(&self) -> CallResult {
        CallResult { text: self.render(), is_error: true }
    }
}

impl From<ValidationError> for CallResult {
    fn from(error: ValidationError) -> CallResult {
        error.to_call_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(name: &str, text: &str) -> FieldProblem {
        FieldProblem { name: name.into(), text: text.into() }
    }

    #[test]
    fn fields_in_order_and_escaped() {
        let err = ValidationError::new("a&b.<c>").field(problem("x\"y", "1 < 2 & 'q'.")).field(problem("(root)", "z."));
        assert_eq!(
            err.render(),
            "<validation_error action=\"a&amp;b.&lt;c&gt;\">\n\
             <field name=\"x&quot;y\">1 &lt; 2 &amp; 'q'.</field>\n\
             <field name=\"(root)\">z.</field>\n\
             <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
             </validation_error>"
        );
    }
}
