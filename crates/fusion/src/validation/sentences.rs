//! From the validator's errors to the problems the model reads: one kind of problem per JSON
//! Schema keyword, each written from the schema and the value, never from the validator's own
//! message text.

use jsonschema::ValidationError as SchemaError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use mcp_fusion_wire::{Bound, FieldPath, FieldProblem, ProblemKind, Sent};
use serde_json::{Number, Value};

use super::{Checker, instance_path, parent_pointer};
use crate::catalog::closest;

impl Checker {
    /// The problems one validator error stands for, appended to `out`.
    pub(super) fn map_error(&self, error: &SchemaError<'_>, root: &Value, out: &mut Vec<FieldProblem>) {
        let path = instance_path(error, root);
        let instance = error.instance();
        let kind = match error.kind() {
            ValidationErrorKind::Required { property } => {
                return out.push(self.missing(&path, property.as_str().unwrap_or_default(), error));
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                return self.unrecognized(&path, unexpected, error, out);
            }
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                match self.union(error, context, root, out) {
                    Some(kind) => kind,
                    None => return,
                }
            }
            other => keyword_problem(other, error),
        };
        out.push(FieldProblem::new(&path, &kind, &self.sent(&path, Some(instance))));
    }

    /// A required property that was not sent, with the type its schema gives.
    fn missing(&self, path: &FieldPath, name: &str, error: &SchemaError<'_>) -> FieldProblem {
        let parent = self.schema_at(parent_pointer(error.schema_path().as_str()));
        let expected =
            parent.and_then(|p| p.get("properties")).and_then(|p| p.get(name)).map(type_names).unwrap_or_default();
        let path = path.clone().key(name);
        FieldProblem::new(&path, &ProblemKind::Missing { expected }, &Sent::missing())
    }

    /// One problem per key the schema does not know, each with the closest known key.
    fn unrecognized(
        &self,
        path: &FieldPath,
        unexpected: &[String],
        error: &SchemaError<'_>,
        out: &mut Vec<FieldProblem>,
    ) {
        let known: Vec<String> = self
            .schema_at(parent_pointer(error.schema_path().as_str()))
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        for key in unexpected {
            let suggestion = closest(key, known.iter().map(String::as_str)).map(str::to_owned);
            let field = path.clone().key(key.as_str());
            let value = error.instance().get(key.as_str());
            let kind = ProblemKind::UnrecognizedKey { key: key.clone(), suggestion, known: known.clone() };
            out.push(FieldProblem::new(&field, &kind, &self.sent(&field, value)));
        }
    }

    /// The problem of a value that matches none of a union's branches, or `None` when the
    /// branch's own errors were reported instead.
    fn union(
        &self,
        error: &SchemaError<'_>,
        context: &[Vec<SchemaError<'_>>],
        root: &Value,
        out: &mut Vec<FieldProblem>,
    ) -> Option<ProblemKind> {
        let branches = self.schema_at(error.schema_path().as_str()).and_then(Value::as_array);
        // `Option<T>` is `anyOf: [T, null]`: for a non-null value, T's own errors say more.
        if let Some(branches) = branches
            && !error.instance().is_null()
            && let [only] = non_null_branches(branches).as_slice()
        {
            for error in &context[*only] {
                self.map_error(error, root, out);
            }
            return None;
        }
        // A Rust enum whose variants carry docs becomes `oneOf` of `const`s: it is a list of
        // allowed values, and reads best as one.
        if let Some(allowed) = branches.and_then(|b| b.iter().map(constant_values).collect::<Option<Vec<_>>>()) {
            return Some(ProblemKind::InvalidValue { allowed: allowed.concat() });
        }
        let options = branches.map(|b| b.iter().map(describe_schema).collect()).unwrap_or_default();
        Some(ProblemKind::InvalidUnion { options })
    }
}

/// The problem of a keyword that concerns the value alone. One arm per keyword: the list is
/// long because the schema language is, and each arm is one line.
fn keyword_problem(kind: &ValidationErrorKind, error: &SchemaError<'_>) -> ProblemKind {
    match kind {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
            };
            ProblemKind::InvalidType { expected }
        }
        ValidationErrorKind::Format { format } => ProblemKind::InvalidFormat { format: format.clone() },
        ValidationErrorKind::Pattern { pattern } => ProblemKind::PatternMismatch { pattern: pattern.clone() },
        ValidationErrorKind::MinLength { limit } => ProblemKind::TooSmall(Bound::Characters(*limit)),
        ValidationErrorKind::MaxLength { limit } => ProblemKind::TooBig(Bound::Characters(*limit)),
        ValidationErrorKind::MinItems { limit } => ProblemKind::TooSmall(Bound::Items(*limit)),
        ValidationErrorKind::MaxItems { limit } => ProblemKind::TooBig(Bound::Items(*limit)),
        ValidationErrorKind::MinProperties { limit } => ProblemKind::TooSmall(Bound::Properties(*limit)),
        ValidationErrorKind::MaxProperties { limit } => ProblemKind::TooBig(Bound::Properties(*limit)),
        ValidationErrorKind::Minimum { limit } => number_bound(limit, false, ProblemKind::TooSmall),
        ValidationErrorKind::ExclusiveMinimum { limit } => number_bound(limit, true, ProblemKind::TooSmall),
        ValidationErrorKind::Maximum { limit } => number_bound(limit, false, ProblemKind::TooBig),
        ValidationErrorKind::ExclusiveMaximum { limit } => number_bound(limit, true, ProblemKind::TooBig),
        ValidationErrorKind::Enum { options } => {
            ProblemKind::InvalidValue { allowed: options.as_array().cloned().unwrap_or_default() }
        }
        ValidationErrorKind::Constant { expected_value } => {
            ProblemKind::InvalidValue { allowed: vec![Value::clone(expected_value)] }
        }
        ValidationErrorKind::MultipleOf { multiple_of } => match Number::from_f64(*multiple_of) {
            Some(factor) => ProblemKind::NotMultipleOf { factor },
            None => ProblemKind::Custom { problem: error.to_string(), expected: "a valid number".into() },
        },
        ValidationErrorKind::UniqueItems => ProblemKind::DuplicateItems,
        ValidationErrorKind::OneOfMultipleValid { .. } => ProblemKind::AmbiguousUnion,
        // A property whose schema is `false` may not be sent at all.
        ValidationErrorKind::FalseSchema => {
            ProblemKind::Custom { problem: "This field is not accepted".into(), expected: "the field removed".into() }
        }
        _ => ProblemKind::Custom {
            problem: sentence_fragment(&error.to_string()),
            expected: "a value the schema accepts".into(),
        },
    }
}

fn non_null_branches(branches: &[Value]) -> Vec<usize> {
    branches
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) != Some("null"))
        .map(|(i, _)| i)
        .collect()
}

fn number_bound(limit: &Value, exclusive: bool, kind: fn(Bound) -> ProblemKind) -> ProblemKind {
    match limit {
        Value::Number(limit) => kind(Bound::Number { limit: limit.clone(), exclusive }),
        other => ProblemKind::Custom { problem: "Out of range".into(), expected: format!("a number within {other}") },
    }
}

/// The JSON type names a schema accepts.
fn type_names(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The values a `const`, an `enum` or a `{"type": "null"}` schema allows, if it is one of those.
fn constant_values(schema: &Value) -> Option<Vec<Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    (schema.get("type").and_then(Value::as_str) == Some("null")).then(|| vec![Value::Null])
}

/// A few words for one alternative of a union: `null`, `a string`, `an object with 'id', 'name'`.
fn describe_schema(schema: &Value) -> String {
    if let Some(value) = schema.get("const") {
        return format!("exactly {}", Sent::value(value));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values.iter().map(|v| Sent::value(v).to_string()).collect();
        return format!("one of {}", listed.join(", "));
    }
    let types = type_names(schema);
    let phrase = ProblemKind::InvalidType { expected: types.clone() }.sentence(&Sent::missing());
    // "Invalid type. You sent: (missing). Expected {phrase}." → the phrase.
    let mut described = phrase
        .rsplit_once(". Expected ")
        .map(|(_, e)| e.trim_end_matches('.').to_owned())
        .unwrap_or_else(|| "a value".to_owned());
    if types.iter().any(|t| t == "object")
        && let Some(properties) = schema.get("properties").and_then(Value::as_object)
    {
        let names: Vec<String> = properties.keys().map(|k| format!("'{k}'")).collect();
        described = format!("{described} with fields {}", names.join(", "));
    }
    described
}

/// An error message as a fragment that can take a period: first letter up, trailing period
/// removed.
fn sentence_fragment(message: &str) -> String {
    let trimmed = message.trim().trim_end_matches('.');
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Invalid value".to_owned(),
    }
}
