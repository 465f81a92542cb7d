//! Typed action inputs: their schema, their decoding, and the rules a schema cannot express.

use mcp_fusion_wire::FieldPath;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Arguments the schema accepted that still did not decode into the input type (a custom
/// `Deserialize` refused them, say): where, and what the decoder said.
///
/// What the decoder said may quote the value sent, so it goes to the log, never to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    path: FieldPath,
    message: String,
}

impl DecodeError {
    /// Where it failed.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// What the decoder said.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Decodes `arguments` as a `T`, keeping the path of a failure.
    pub fn decode<T: DeserializeOwned>(arguments: &Value) -> Result<T, DecodeError> {
        serde_path_to_error::deserialize(arguments).map_err(|error| {
            let mut path = FieldPath::root();
            for segment in error.path().iter() {
                match segment {
                    serde_path_to_error::Segment::Seq { index } => path.push_index(*index),
                    serde_path_to_error::Segment::Map { key } => path.push_key(key.as_str()),
                    serde_path_to_error::Segment::Enum { variant } => path.push_key(variant.as_str()),
                    serde_path_to_error::Segment::Unknown => {}
                }
            }
            DecodeError { path, message: error.into_inner().to_string() }
        })
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for DecodeError {}

/// A type a handler can take as its input: every `Deserialize + JsonSchema` type, and
/// [`Validated<T>`] for inputs with custom rules.
pub trait ActionInput: Sized + Send + Sync + 'static {
    /// The JSON Schema of the arguments.
    fn input_schema(generator: &mut SchemaGenerator) -> Schema;

    /// Decodes the (already schema-checked) arguments.
    fn from_arguments(arguments: &Value) -> Result<Self, DecodeError>;

    /// Problems found by rules the schema cannot express.
    fn check(&self) -> Vec<FieldIssue> {
        Vec::new()
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + Sync + 'static> ActionInput for T {
    fn input_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.root_schema_for::<T>()
    }

    fn from_arguments(arguments: &Value) -> Result<Self, DecodeError> {
        DecodeError::decode(arguments)
    }
}

/// The input of an action that takes no arguments: an empty object.
///
/// `#[action]` gives it to the builder for a handler written without an input; with the
/// builder, take it as the handler's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
pub struct NoInput {}

impl JsonSchema for NoInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoInput".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({"type": "object", "properties": {}})
    }
}

/// Rules of an input type that its JSON Schema cannot express (a date in the future, two
/// fields that must agree). Take the input as [`Validated<T>`] to have them checked; their
/// problems are reported like schema problems, in the same `<validation_error>`.
///
/// ```
/// use mcp_fusion::{FieldIssue, Validate};
/// use mcp_fusion_wire::FieldPath;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Refund { amount_cents: u64, max_cents: u64 }
///
/// impl Validate for Refund {
///     fn validate(&self) -> Vec<FieldIssue> {
///         if self.amount_cents <= self.max_cents {
///             return vec![];
///         }
///         vec![FieldIssue::new(
///             FieldPath::root().key("amount_cents"),
///             "Refund exceeds the limit",
///             format!("at most {} cents", self.max_cents),
///         )]
///     }
/// }
/// ```
pub trait Validate {
    /// The problems found; empty when the input is fine.
    fn validate(&self) -> Vec<FieldIssue>;
}

/// An input whose [`Validate`] rules run after the schema check, before the handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Validate + Send + Sync + 'static> ActionInput for Validated<T> {
    fn input_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.root_schema_for::<T>()
    }

    fn from_arguments(arguments: &Value) -> Result<Self, DecodeError> {
        DecodeError::decode(arguments).map(Validated)
    }

    fn check(&self) -> Vec<FieldIssue> {
        self.0.validate()
    }
}

/// One problem found by a custom rule: where, what is wrong, and what would be right.
///
/// It renders as `{problem}. You sent: {value at path}. Expected {expected}.`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldIssue {
    /// The field.
    pub path: FieldPath,
    /// What is wrong, as a sentence fragment.
    pub problem: String,
    /// What would be right, as a sentence fragment (`a date after 2026-01-31`).
    pub expected: String,
}

impl FieldIssue {
    /// A problem with the field at `path`.
    pub fn new(path: FieldPath, problem: impl Into<String>, expected: impl Into<String>) -> FieldIssue {
        FieldIssue { path, problem: problem.into(), expected: expected.into() }
    }
}
