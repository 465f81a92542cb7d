//! Validation that heals: arguments checked against the action's compiled JSON Schema, every
//! problem written as a sentence the model can act on — "{Problem}. You sent: {value}.
//! Expected {what}." — with sensitive values redacted.

mod schema;
mod sentences;

use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError as SchemaError, Validator};
use mcp_fusion_wire::{FieldPath, FieldProblem, ProblemKind, Sent};
use serde_json::{Map, Value};

pub(crate) use schema::{
    input_generator, into_object, is_object_schema, output_generator, portable_input, property_names, required_names,
};

use crate::input::{DecodeError, FieldIssue};

/// Field lines listed before the rest are counted in one closing line.
const MAX_PROBLEMS: usize = 25;

/// The compiled checks of one action's arguments.
#[derive(Debug)]
pub(crate) struct Checker {
    validator: Validator,
    schema: Value,
    /// Paths (`card.number`) whose values are never echoed, besides `writeOnly` fields.
    sensitive: Vec<String>,
}

impl Checker {
    /// Compiles `schema`; formats are asserted (email, uri, uuid, date, date-time, …).
    pub(crate) fn new(schema: &Map<String, Value>, sensitive: Vec<String>) -> Result<Checker, String> {
        let schema = Value::Object(schema.clone());
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        Ok(Checker { validator, schema, sensitive })
    }

    /// The problems of `arguments` against the schema, in a stable order (by path); empty when
    /// they are valid.
    pub(crate) fn check(&self, arguments: &Value) -> Vec<FieldProblem> {
        if self.validator.is_valid(arguments) {
            return Vec::new();
        }
        let mut problems = Vec::new();
        for error in self.validator.iter_errors(arguments) {
            self.map_error(&error, arguments, &mut problems);
        }
        finish(problems, arguments)
    }

    /// A problem found while decoding into the input type after the schema accepted it.
    pub(crate) fn decode_problem(&self, error: &DecodeError, arguments: &Value) -> Vec<FieldProblem> {
        let value = value_at(arguments, error.segments());
        let kind = ProblemKind::Custom {
            problem: "Invalid value".into(),
            expected: error.message().trim().trim_end_matches('.').to_owned(),
        };
        vec![FieldProblem::new(error.path(), &kind, &self.sent(error.path(), value))]
    }

    /// The problems of custom rules, echoing the values they point at.
    pub(crate) fn rule_problems(&self, issues: Vec<FieldIssue>, arguments: &Value) -> Vec<FieldProblem> {
        let problems = issues
            .into_iter()
            .map(|issue| {
                let value = value_at_path(arguments, &issue.path);
                let kind = ProblemKind::Custom { problem: issue.problem, expected: issue.expected };
                FieldProblem::new(&issue.path, &kind, &self.sent(&issue.path, value))
            })
            .collect();
        finish(problems, arguments)
    }

    /// The echo of a value: redacted when the field or one of its parents is sensitive.
    pub(super) fn sent(&self, path: &FieldPath, value: Option<&Value>) -> Sent {
        if self.is_sensitive(path) {
            return Sent::redacted();
        }
        value.map_or_else(Sent::missing, Sent::value)
    }

    fn is_sensitive(&self, path: &FieldPath) -> bool {
        let rendered = path.to_string();
        let marked = self
            .sensitive
            .iter()
            .any(|s| rendered == *s || rendered.strip_prefix(s.as_str()).is_some_and(|rest| rest.starts_with('.')));
        marked || write_only_along(&self.schema, &rendered)
    }

    pub(super) fn schema_at(&self, pointer: &str) -> Option<&Value> {
        self.schema.pointer(pointer)
    }
}

/// Sorted by path (stable, so the schema's order holds within a field), capped with a
/// closing count.
fn finish(mut problems: Vec<FieldProblem>, arguments: &Value) -> Vec<FieldProblem> {
    problems.sort_by(|a, b| a.name.cmp(&b.name));
    problems.dedup();
    if problems.len() > MAX_PROBLEMS {
        let more = problems.len() - (MAX_PROBLEMS - 1);
        problems.truncate(MAX_PROBLEMS - 1);
        let kind = ProblemKind::Custom {
            problem: format!("{more} more problems are not listed"),
            expected: "the fields above fixed first; the rest are reported on the next call".into(),
        };
        problems.push(FieldProblem::new(&FieldPath::root(), &kind, &Sent::value(arguments)));
    }
    problems
}

/// The error's instance path, telling object keys from array indices by walking the value
/// (the validator reads an all-digit key back as an index).
pub(super) fn instance_path(error: &SchemaError<'_>, root: &Value) -> FieldPath {
    let mut path = FieldPath::root();
    let mut current = Some(root);
    for segment in error.instance_path().iter() {
        let key = match &segment {
            LocationSegment::Property(key) => key.to_string(),
            LocationSegment::Index(index) => index.to_string(),
        };
        match current {
            Some(Value::Array(items)) => {
                let index = key.parse::<usize>().unwrap_or(usize::MAX);
                current = items.get(index);
                path.push_index(index);
            }
            Some(Value::Object(map)) => {
                current = map.get(&key);
                path.push_key(key);
            }
            _ => {
                current = None;
                path.push_key(key);
            }
        }
    }
    path
}

fn value_at<'v>(root: &'v Value, keys: &[String]) -> Option<&'v Value> {
    keys.iter().try_fold(root, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    })
}

fn value_at_path<'v>(root: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    if path.is_root() {
        return Some(root);
    }
    let rendered = path.to_string();
    let keys: Vec<String> = rendered.split('.').map(str::to_owned).collect();
    value_at(root, &keys)
}

/// Whether a schema on the way to `path` (`a.0.b`) says `writeOnly: true`.
fn write_only_along(schema: &Value, path: &str) -> bool {
    let is_write_only = |s: &Value| s.get("writeOnly").and_then(Value::as_bool).unwrap_or(false);
    if path == "(root)" {
        return is_write_only(schema);
    }
    let mut current = schema;
    for key in path.split('.') {
        if is_write_only(current) {
            return true;
        }
        let next = current
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| key.parse::<usize>().ok().and_then(|_| current.get("items")))
            .or_else(|| {
                // Through `anyOf` / `oneOf` (optional fields): the first branch that has the key.
                ["anyOf", "oneOf"]
                    .iter()
                    .filter_map(|k| current.get(*k)?.as_array())
                    .flatten()
                    .find_map(|branch| branch.get("properties").and_then(|p| p.get(key)).filter(|s| s.is_object()))
            });
        match next {
            Some(next) => current = next,
            None => return false,
        }
    }
    is_write_only(current)
}

pub(super) fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checker(schema: Value) -> Checker {
        Checker::new(schema.as_object().unwrap(), vec!["secret".into()]).unwrap()
    }

    fn lines(checker: &Checker, args: Value) -> Vec<String> {
        checker.check(&args).into_iter().map(|p| format!("{}: {}", p.name, p.text)).collect()
    }

    #[test]
    fn numeric_object_keys_stay_keys() {
        let c = checker(json!({
            "type": "object",
            "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}
        }));
        assert_eq!(lines(&c, json!({"m": {"0": "x"}})), ["m.0: Invalid type. You sent: 'x'. Expected an integer."]);
    }

    #[test]
    fn sensitive_marked_and_write_only_are_redacted() {
        let c = checker(json!({
            "type": "object",
            "properties": {
                "secret": {"type": "string", "minLength": 5},
                "password": {"type": "string", "writeOnly": true, "minLength": 5},
                "nested": {"type": "object", "properties": {"pin": {"type": "string", "writeOnly": true, "pattern": "^[0-9]+$"}}}
            }
        }));
        assert_eq!(
            lines(&c, json!({"secret": "abc", "password": "hunter", "nested": {"pin": "x"}})),
            [
                "nested.pin: Does not match the required pattern. You sent: (redacted). Expected a string matching the pattern /^[0-9]+$/.",
                "secret: Too short. You sent: (redacted). Expected at least 5 characters.",
            ]
        );
        assert_eq!(
            lines(&c, json!({"password": "abc"})),
            ["password: Too short. You sent: (redacted). Expected at least 5 characters."]
        );
    }

    #[test]
    fn optional_struct_reports_its_own_errors() {
        let c = checker(json!({
            "type": "object",
            "properties": {"addr": {"anyOf": [
                {"type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"], "additionalProperties": false},
                {"type": "null"}
            ]}}
        }));
        assert_eq!(
            lines(&c, json!({"addr": {}})),
            ["addr.zip: Missing required field. You sent: (missing). Expected a string."]
        );
    }

    #[test]
    fn real_unions_list_their_shapes() {
        let c = checker(json!({
            "type": "object",
            "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"const": true}]}}
        }));
        assert_eq!(
            lines(&c, json!({"v": 1.5})),
            [
                "v: Matches none of the allowed shapes. You sent: 1.5. Expected one of: a string; an integer; exactly true."
            ]
        );
    }

    #[test]
    fn documented_enum_variants_read_as_allowed_values() {
        let c = checker(json!({
            "type": "object",
            "properties": {"currency": {"oneOf": [
                {"const": "EUR", "description": "Euro"}, {"const": "USD", "description": "US dollar"}
            ]}}
        }));
        assert_eq!(
            lines(&c, json!({"currency": "eur"})),
            ["currency: Invalid value. You sent: 'eur'. Expected one of 'EUR', 'USD'."]
        );
    }

    #[test]
    fn many_problems_are_capped() {
        let c = checker(json!({"type": "object", "properties": {}, "additionalProperties": false}));
        let args: Map<String, Value> = (0..10_000).map(|i| (format!("k{i:05}"), json!(i))).collect();
        let problems = c.check(&Value::Object(args));
        assert_eq!(problems.len(), MAX_PROBLEMS);
        assert_eq!(problems.last().unwrap().name, "(root)");
        assert!(problems.last().unwrap().text.starts_with("9976 more problems are not listed."));
    }
}
