//! Validation that heals: arguments checked against the action's compiled JSON Schema, every
//! problem written as a sentence the model can act on — "{Problem}. You sent: {value}.
//! Expected {what}." — with sensitive values redacted.

mod closing;
mod converted;
mod describe;
mod document;
mod expectation;
mod fields;
#[cfg(test)]
mod leaks;
mod left_out;
mod retyped;
mod schema;
mod sentences;
mod suggest;
#[cfg(test)]
mod table;

use document::Document;
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError as SchemaError, Validator};
use mcp_fusion_wire::{FieldPath, FieldProblem, ProblemKind, Segment, Sent};
use serde_json::{Map, Number, Value};

pub(crate) use closing::close_unknown_keys;
pub(crate) use fields::described_fields;
pub(crate) use schema::{
    input_generator, into_object, is_object_schema, output_generator, property_names, required_names,
};

use crate::input::{DecodeError, FieldIssue};
use describe::expectation;

/// Field lines listed before the rest are counted in one closing line.
const MAX_PROBLEMS: usize = 25;

/// Whether string formats (`email`, `date`, `uuid`, …) are checked, or only described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Formats {
    /// A value that is not of its format is refused.
    Asserted,
    /// Formats are annotations, as JSON Schema 2020-12 makes them by default.
    Annotated,
}

/// The compiled checks of one action's arguments.
#[derive(Debug)]
pub(crate) struct Checker {
    validator: Validator,
    document: Document,
    /// Paths (`card.number`) whose values are never echoed, besides `writeOnly` fields.
    sensitive: Vec<String>,
    /// Whether the schema says `writeOnly` anywhere: when not, and no path is marked, no echo
    /// needs the walk through the schema that finds out.
    any_write_only: bool,
    /// Whether no value sent is repeated: what was sent is said by its kind (`a string`); a
    /// did-you-mean still names the allowed value it points to.
    value_free: bool,
}

impl Checker {
    /// Compiles `schema` as it is: closing objects to unknown keys is the caller's choice
    /// ([`close_unknown_keys`]).
    pub(crate) fn new(
        schema: &Map<String, Value>,
        sensitive: Vec<String>,
        formats: Formats,
    ) -> Result<Checker, String> {
        let schema = Value::Object(schema.clone());
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(formats == Formats::Asserted)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        let any_write_only = schema.to_string().contains("\"writeOnly\"");
        Ok(Checker { validator, document: Document::new(schema), sensitive, any_write_only, value_free: false })
    }

    /// The same checks, whose sentences repeat no value sent: only field names, declared
    /// constraints and allowed values.
    pub(crate) fn value_free(mut self, value_free: bool) -> Checker {
        self.value_free = value_free;
        self
    }

    /// The problems of `arguments` against the schema, in a stable order (by path); empty when
    /// they are valid.
    pub(crate) fn check(&self, arguments: &Value) -> Vec<FieldProblem> {
        // The validator takes a whole float for an integer: one past 64 bits passes it, rounded.
        let beyond = self.beyond_exact_integers(arguments);
        if self.validator.is_valid(arguments) {
            return if beyond.is_empty() { beyond } else { finish(beyond, arguments) };
        }
        let errors: Vec<SchemaError<'_>> = self.validator.iter_errors(arguments).collect();
        let mut problems = Vec::new();
        self.problems(&errors, arguments, &mut problems);
        // A bound the rounded value misses (`maximum` 18446744073709551615) says less than why.
        problems.retain(|problem| !beyond.iter().any(|wide| wide.name == problem.name));
        // Every error was taken for another's echo (keys a failed schema left unevaluated):
        // said one by one, so an invalid call never passes for a valid one.
        if problems.is_empty() && beyond.is_empty() {
            for error in &errors {
                self.problems(std::slice::from_ref(error), arguments, &mut problems);
            }
        }
        problems.extend(beyond);
        finish(problems, arguments)
    }

    /// A value the schema accepted and the input type did not: said from the schema at that
    /// field and the value sent, never from the decoder's message (which may quote the value).
    /// The problem is said of the deepest field the schema describes: a decoder may fail
    /// inside a value the schema leaves open (an enum's tag inside an object).
    pub(crate) fn decode_problem(&self, error: &DecodeError, arguments: &Value) -> Vec<FieldProblem> {
        let along = self.pointers_along(error.path());
        let mut path = error.path().clone();
        while path.len() + 1 > along.len().max(1) {
            path = path.parent();
        }
        let expected = along.last().map(|pointer| expectation(&self.document, pointer)).unwrap_or_default();
        let kind = ProblemKind::NotAccepted { expected };
        vec![FieldProblem::new(&path, &kind, &self.sent(&path, value_at_path(arguments, &path)))]
    }

    /// Writes the whole floats of `arguments` (`30.0`) as integers (`30`) where the schema asks
    /// for an integer, as the validator already reads them; `true` when it changed any.
    pub(crate) fn whole_numbers(&self, arguments: &mut Value) -> bool {
        self.whole_numbers_in(arguments, "")
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
        if self.value_free {
            return value.map_or_else(Sent::missing, Sent::kind);
        }
        if self.is_sensitive(path) {
            return Sent::redacted();
        }
        value.map_or_else(Sent::missing, Sent::value)
    }

    /// Whether no sentence may repeat the value at `path`, or a value derived from it: the
    /// field is sensitive, or no value is repeated at all.
    pub(super) fn hides_value(&self, path: &FieldPath) -> bool {
        self.value_free || self.is_sensitive(path)
    }

    pub(super) fn is_sensitive(&self, path: &FieldPath) -> bool {
        if self.sensitive.is_empty() && !self.any_write_only {
            return false;
        }
        let rendered = path.to_string();
        let marked = self
            .sensitive
            .iter()
            .any(|s| rendered == *s || rendered.strip_prefix(s.as_str()).is_some_and(|rest| rest.starts_with('.')));
        // Through whatever applies at each step (`$ref`, `allOf`, a union's branches): a
        // secret's flag may sit on any of them.
        marked
            || self.pointers_along(path).iter().any(|pointer| {
                let members = self.document.members(pointer).unwrap_or_else(|| vec![pointer.clone()]);
                members.iter().filter_map(|m| self.document.at(m)).any(write_only)
            })
    }

    /// The schemas from the root to `path`, as far as the schema describes it (a path into an
    /// object the schema leaves open ends early): the pointer of each.
    pub(super) fn pointers_along(&self, path: &FieldPath) -> Vec<String> {
        let mut along = vec![String::new()];
        for segment in path.segments() {
            match along.last().and_then(|pointer| self.step(pointer, segment)) {
                Some(next) => along.push(next),
                None => break,
            }
        }
        along
    }

    /// The schema one step into the one at `pointer`: a property, an item, through whatever
    /// applies with it (`$ref`, `allOf`, the branches of `anyOf` / `oneOf`).
    pub(super) fn step(&self, pointer: &str, segment: Segment<'_>) -> Option<String> {
        let members = self.document.members(pointer).unwrap_or_else(|| vec![pointer.to_owned()]);
        let found = |keyword: &str, key: Option<&str>| {
            members.iter().find_map(|member| {
                let at = match key {
                    Some(key) => format!("{member}/{keyword}/{}", document::escape(key)),
                    None => format!("{member}/{keyword}"),
                };
                self.document.at(&at).filter(|s| s.is_object()).map(|_| at)
            })
        };
        match segment {
            Segment::Key(key) => found("properties", Some(key)).or_else(|| found("additionalProperties", None)),
            Segment::Index(index) => found("prefixItems", Some(&index.to_string())).or_else(|| found("items", None)),
        }
    }

    /// The integers of `arguments`, where the schema asks for one, that were read as floats
    /// past 64 bits: their digits past the 16th are lost, so the value would reach the tool
    /// (or an upstream) rounded. Each is refused at its path rather than carried changed.
    pub(crate) fn beyond_exact_integers(&self, arguments: &Value) -> Vec<FieldProblem> {
        let mut out = Vec::new();
        // Every call passes here: a walk that allocates nothing first, the one that names paths
        // only for a call that holds such a number.
        if holds_beyond_exact(arguments) {
            self.beyond_exact_in(arguments, "", &FieldPath::root(), &mut out);
        }
        out
    }

    fn beyond_exact_in(&self, value: &Value, pointer: &str, path: &FieldPath, out: &mut Vec<FieldProblem>) {
        match value {
            Value::Number(number) if beyond_exact(number) && self.accepts_integer(pointer) => {
                // Never the value as read: it is not the one sent.
                out.push(FieldProblem::new(path, &ProblemKind::BeyondExactIntegers, &Sent::kind(value)));
            }
            Value::Object(map) => {
                for (key, item) in map {
                    if let Some(inner) = self.step(pointer, Segment::Key(key)) {
                        self.beyond_exact_in(item, &inner, &path.clone().key(key.as_str()), out);
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if let Some(inner) = self.step(pointer, Segment::Index(index)) {
                        self.beyond_exact_in(item, &inner, &path.clone().index(index), out);
                    }
                }
            }
            _ => {}
        }
    }

    /// See [`Checker::whole_numbers`].
    fn whole_numbers_in(&self, value: &mut Value, pointer: &str) -> bool {
        match value {
            Value::Number(number) if self.accepts_integer(pointer) => match whole(number) {
                Some(whole) => {
                    *number = whole;
                    true
                }
                None => false,
            },
            Value::Object(map) => {
                let mut changed = false;
                for (key, item) in map.iter_mut() {
                    if let Some(inner) = self.step(pointer, Segment::Key(key)) {
                        changed |= self.whole_numbers_in(item, &inner);
                    }
                }
                changed
            }
            Value::Array(items) => {
                let mut changed = false;
                for (index, item) in items.iter_mut().enumerate() {
                    if let Some(inner) = self.step(pointer, Segment::Index(index)) {
                        changed |= self.whole_numbers_in(item, &inner);
                    }
                }
                changed
            }
            _ => false,
        }
    }

    /// Whether the schema at `pointer` (or the non-null branch of an optional one) takes
    /// integers.
    fn accepts_integer(&self, pointer: &str) -> bool {
        let members = self.document.members(pointer).unwrap_or_else(|| vec![pointer.to_owned()]);
        members.iter().filter_map(|m| self.document.at(m)).any(|schema| match schema.get("type") {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
            _ => false,
        })
    }

    pub(super) fn schema_at(&self, pointer: &str) -> Option<&Value> {
        self.document.at(pointer)
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

/// Whether `value` holds, anywhere, a number [`beyond_exact`].
fn holds_beyond_exact(value: &Value) -> bool {
    match value {
        Value::Number(number) => beyond_exact(number),
        Value::Object(map) => map.values().any(holds_beyond_exact),
        Value::Array(items) => items.iter().any(holds_beyond_exact),
        _ => false,
    }
}

/// Whether `number` is a whole float of 2^63 or more in magnitude: an integer literal that
/// fits 64 bits is read as one (`i64`, `u64`), so such a float was an integer past them
/// (`18446744073709551616`, `-9223372036854775809`) or one written as a float (`1e20`), and
/// past 2^63 a float holds only every 2048th integer: the value sent may not be this one.
fn beyond_exact(number: &Number) -> bool {
    const TWO_TO_THE_63: f64 = 9_223_372_036_854_775_808.0;
    number.is_f64() && number.as_f64().is_some_and(|float| float.fract() == 0.0 && float.abs() >= TWO_TO_THE_63)
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

/// Whether `schema` says `writeOnly`, itself or in one of its alternatives (a sensitive
/// `Option<T>` may carry the flag on `T`).
fn write_only(schema: &Value) -> bool {
    let flagged = |s: &Value| s.get("writeOnly").and_then(Value::as_bool).unwrap_or(false);
    flagged(schema)
        || ["anyOf", "oneOf", "allOf"].iter().filter_map(|k| schema.get(*k)?.as_array()).flatten().any(flagged)
}

/// The value at `path` in the arguments.
fn value_at_path<'v>(root: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().try_fold(root, |value, segment| match (value, segment) {
        (Value::Object(map), Segment::Key(key)) => map.get(key),
        (Value::Array(items), Segment::Index(index)) => items.get(index),
        _ => None,
    })
}

/// A float with no fractional part, as an integer (when it fits one).
fn whole(number: &Number) -> Option<Number> {
    if number.is_i64() || number.is_u64() {
        return None;
    }
    let float = number.as_f64()?;
    if float.fract() != 0.0 || !float.is_finite() {
        return None;
    }
    // 2^63 and 2^64 are exact as floats: below them the cast is exact too.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&float) {
        Some(Number::from(float as i64))
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&float) {
        Some(Number::from(float as u64))
    } else {
        None
    }
}

pub(super) fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checker(schema: Value) -> Checker {
        Checker::new(schema.as_object().unwrap(), vec!["secret".into()], Formats::Asserted).unwrap()
    }

    fn lines(checker: &Checker, args: Value) -> Vec<String> {
        checker.check(&args).into_iter().map(|p| format!("{}: {}", p.name, p.text)).collect()
    }

    #[test]
    fn integers_past_64_bits_are_refused_at_their_path_never_rounded() {
        let c = checker(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "ratio": {"type": "number"}
            }
        }));
        let refused = |n: &str| {
            "n: This integer is beyond the integers this server carries exactly (64 bits): it would reach the tool \
             rounded. You sent: a number. Expected an integer from -9223372036854775808 to 18446744073709551615; send \
             one in that range, or ask the user what the value should be."
                .replace("{n}", n)
        };
        for sent in ["18446744073709551616", "-9223372036854775809", "1e20", "123456789012345678901234567890"] {
            let args: Value = serde_json::from_str(&format!("{{\"n\": {sent}}}")).unwrap();
            assert_eq!(lines(&c, args), [refused(sent)], "{sent}");
        }
        let args: Value = serde_json::from_str(r#"{"ids": [1, 18446744073709551616]}"#).unwrap();
        assert_eq!(c.check(&args).iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["ids.1"]);
        // What 64 bits hold passes, as sent; a float where the schema takes any number is a float.
        for sent in [r#"{"n": 18446744073709551615}"#, r#"{"n": -9223372036854775808}"#, r#"{"ratio": 1e20}"#] {
            assert!(lines(&c, serde_json::from_str(sent).unwrap()).is_empty(), "{sent}");
        }
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
