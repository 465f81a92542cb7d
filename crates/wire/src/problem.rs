//! The vocabulary of validation problems: what was wrong with one field, written as a sentence
//! the model can act on: `{Problem}. You sent: {sent}. Expected {expectation}.`

use std::fmt::{self, Write as _};
use std::io;

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// What kind of JSON value `value` is, in words: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
pub fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Longest `{sent}` rendering kept whole, in characters.
const SENT_MAX_CHARS: usize = 50;
/// Characters kept when a `{sent}` rendering is cut; `...` follows.
const SENT_CUT_CHARS: usize = 47;
/// Allowed values listed before the rest is counted instead.
const MAX_LISTED_VALUES: usize = 25;

/// One problem with one field: the path of the offending value and its sentence.
///
/// Build it from a [`ProblemKind`] with [`FieldProblem::new`], or give the text yourself.
///
/// ```
/// use mcp_fusion_wire::{FieldPath, FieldProblem, ProblemKind, Sent};
/// use serde_json::json;
///
/// let path = FieldPath::root().key("items").index(1).key("qty");
/// let problem = FieldProblem::new(&path, &ProblemKind::InvalidType { expected: vec!["integer".into()] }, &Sent::value(&json!("two")));
/// assert_eq!(problem.name, "items.1.qty");
/// assert_eq!(problem.text, "Invalid type. You sent: 'two'. Expected an integer.");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldProblem {
    /// The path of the offending value (`items.1.qty`, or `(root)`).
    pub name: String,
    /// The whole sentence, ending with a period.
    pub text: String,
}

impl FieldProblem {
    /// The sentence for `kind` at `path`, echoing `sent`.
    pub fn new(path: &FieldPath, kind: &ProblemKind, sent: &Sent) -> FieldProblem {
        FieldProblem { name: path.to_string(), text: kind.sentence(sent) }
    }
}

/// Where a value sits in the arguments: keys and array indices from the argument object.
///
/// Rendered with `.` between segments (`items.1.qty`); the argument object itself is `(root)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: Vec<PathSegment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PathSegment {
    Key(String),
    Index(usize),
}

impl FieldPath {
    /// The argument object itself.
    pub fn root() -> FieldPath {
        FieldPath::default()
    }

    /// This path followed by an object key.
    pub fn key(mut self, key: impl Into<String>) -> FieldPath {
        self.segments.push(PathSegment::Key(key.into()));
        self
    }

    /// This path followed by an array index.
    pub fn index(mut self, index: usize) -> FieldPath {
        self.segments.push(PathSegment::Index(index));
        self
    }

    /// Appends an object key in place.
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.segments.push(PathSegment::Key(key.into()));
    }

    /// Appends an array index in place.
    pub fn push_index(&mut self, index: usize) {
        self.segments.push(PathSegment::Index(index));
    }

    /// Whether this is the argument object itself.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether the path has no segments (it is the root).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("(root)");
        }
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_char('.')?;
            }
            match segment {
                PathSegment::Key(key) => f.write_str(key)?,
                PathSegment::Index(index) => write!(f, "{index}")?,
            }
        }
        Ok(())
    }
}

/// What the caller sent, as the sentence echoes it: `'text'`, `42`, `true`, `null`,
/// `array(3)`, compact JSON for objects, `(missing)`, or `(redacted)` for sensitive fields.
///
/// Long strings and objects are cut to 47 characters plus `...` when longer than 50, on a
/// character boundary. Rendering reads at most a bounded prefix of the value, so echoing a
/// 10 MB string costs no more than echoing a short one.
///
/// ```
/// use mcp_fusion_wire::Sent;
/// use serde_json::json;
///
/// assert_eq!(Sent::value(&json!("not-an-email")).as_str(), "'not-an-email'");
/// assert_eq!(Sent::value(&json!([1, 2, 3])).as_str(), "array(3)");
/// assert_eq!(Sent::value(&json!({"a": 1})).as_str(), r#"{"a":1}"#);
/// assert_eq!(Sent::value(&json!("é".repeat(60))).as_str(), format!("'{}...'", "é".repeat(47)));
/// assert_eq!(Sent::missing().as_str(), "(missing)");
/// assert_eq!(Sent::redacted().as_str(), "(redacted)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sent(String);

impl Sent {
    /// Echoes a JSON value.
    pub fn value(value: &Value) -> Sent {
        Sent(match value {
            Value::String(s) => format!("'{}'", cut(s)),
            Value::Array(items) => format!("array({})", items.len()),
            Value::Object(_) => cut(&bounded_json(value)).into_owned(),
            other => other.to_string(),
        })
    }

    /// The field was absent.
    pub fn missing() -> Sent {
        Sent("(missing)".to_owned())
    }

    /// The field is sensitive: its value is never echoed.
    pub fn redacted() -> Sent {
        Sent("(redacted)".to_owned())
    }

    /// The echo as it appears after `You sent: `.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Cuts `s` to 47 characters plus `...` when it is longer than 50 characters.
fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    // Byte offset of the 51st character, if there is one: only then is the text too long.
    match s.char_indices().nth(SENT_MAX_CHARS) {
        None => s.into(),
        Some(_) => {
            let end = s.char_indices().nth(SENT_CUT_CHARS).map_or(s.len(), |(i, _)| i);
            format!("{}...", &s[..end]).into()
        }
    }
}

/// Compact JSON of `value`, stopping once more than enough characters for [`cut`] are written.
fn bounded_json(value: &Value) -> String {
    // Four bytes a character at most: this many bytes always hold more than 50 characters.
    const LIMIT: usize = (SENT_MAX_CHARS + 1) * 4;
    struct Bounded(Vec<u8>);
    impl io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = LIMIT.saturating_sub(self.0.len());
            if room == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::with_capacity(64));
    // Stopping early is the point: the error only says the limit was reached.
    let _ = serde_json::to_writer(&mut out, value);
    match String::from_utf8(out.0) {
        Ok(s) => s,
        // The limit may fall inside a character; drop the partial tail.
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    }
}

/// What a bound counts.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// Characters of a string (`minLength` / `maxLength`).
    Characters(u64),
    /// Items of an array (`minItems` / `maxItems`).
    Items(u64),
    /// Properties of an object (`minProperties` / `maxProperties`).
    Properties(u64),
    /// A number (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`).
    Number {
        /// The limit.
        limit: Number,
        /// Whether the limit itself is excluded.
        exclusive: bool,
    },
}

/// The kind of a validation problem, named after the issue codes the contract's seed uses.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A required field is absent. `expected` names what to send (`a string`); empty means
    /// any value.
    Missing {
        /// The expected type names (`string`, `integer`, …), or empty.
        expected: Vec<String>,
    },
    /// The value has the wrong JSON type.
    InvalidType {
        /// The accepted JSON type names: `string`, `number`, `integer`, `boolean`, `object`,
        /// `array`, `null`.
        expected: Vec<String>,
    },
    /// A string does not have the named `format` (`email`, `uri`, `uuid`, `date-time`, …).
    InvalidFormat {
        /// The JSON Schema format name.
        format: String,
    },
    /// A string does not match the `pattern`.
    PatternMismatch {
        /// The regular expression.
        pattern: String,
    },
    /// Below a lower bound.
    TooSmall(Bound),
    /// Above an upper bound.
    TooBig(Bound),
    /// Not one of the allowed values (`enum`, or `const` with one value).
    InvalidValue {
        /// The allowed values.
        allowed: Vec<Value>,
    },
    /// An argument key the action does not know.
    UnrecognizedKey {
        /// The unknown key.
        key: String,
        /// The closest known field, if one is close.
        suggestion: Option<String>,
        /// Every known field at that level, listed when nothing is close.
        known: Vec<String>,
    },
    /// The value matches none of the alternatives (`oneOf` / `anyOf`).
    InvalidUnion {
        /// A description of each alternative (`a string`, `an object with "id"`).
        options: Vec<String>,
    },
    /// The value matches more than one alternative of a `oneOf`.
    AmbiguousUnion,
    /// A number is not a multiple of `factor`.
    NotMultipleOf {
        /// The factor.
        factor: Number,
    },
    /// An array holds the same item twice (`uniqueItems`).
    DuplicateItems,
    /// A rule from user code: the problem and the expectation, each a sentence fragment.
    Custom {
        /// What is wrong (`Amount exceeds the open balance`).
        problem: String,
        /// What would be right (`at most 1500 cents`).
        expected: String,
    },
}

impl ProblemKind {
    /// The issue code of this kind, as the seed's validator names it (`invalid_type`, …).
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::Missing { .. } => "missing",
            ProblemKind::InvalidType { .. } => "invalid_type",
            ProblemKind::InvalidFormat { .. } | ProblemKind::PatternMismatch { .. } => "invalid_format",
            ProblemKind::TooSmall(_) => "too_small",
            ProblemKind::TooBig(_) => "too_big",
            ProblemKind::InvalidValue { .. } => "invalid_value",
            ProblemKind::UnrecognizedKey { .. } => "unrecognized_keys",
            ProblemKind::InvalidUnion { .. } | ProblemKind::AmbiguousUnion => "invalid_union",
            ProblemKind::NotMultipleOf { .. } => "not_multiple_of",
            ProblemKind::DuplicateItems => "not_unique",
            ProblemKind::Custom { .. } => "custom",
        }
    }

    /// The sentence: `{Problem}. You sent: {sent}. Expected {expectation}.`
    pub fn sentence(&self, sent: &Sent) -> String {
        let (problem, expected) = self.parts();
        let problem = problem.trim_end_matches('.');
        let expected = expected.trim_end_matches('.');
        format!("{problem}. You sent: {sent}. Expected {expected}.")
    }

    fn parts(&self) -> (String, String) {
        match self {
            ProblemKind::Missing { expected } => ("Missing required field".into(), types_phrase(expected, "a value")),
            ProblemKind::InvalidType { expected } => ("Invalid type".into(), types_phrase(expected, "another type")),
            ProblemKind::InvalidFormat { format } => (format!("Invalid {format} format"), format_expectation(format)),
            ProblemKind::PatternMismatch { pattern } => {
                ("Does not match the required pattern".into(), format!("a string matching the pattern /{pattern}/"))
            }
            ProblemKind::TooSmall(bound) => bound_parts(bound, Side::Lower),
            ProblemKind::TooBig(bound) => bound_parts(bound, Side::Upper),
            ProblemKind::InvalidValue { allowed } => ("Invalid value".into(), values_phrase(allowed)),
            ProblemKind::UnrecognizedKey { key, suggestion, known } => match suggestion {
                Some(name) => (
                    format!("Unrecognized key '{key}' (did you mean '{name}'?)"),
                    format!("only known fields; rename it to '{name}' or remove it"),
                ),
                None if known.is_empty() => (format!("Unrecognized key '{key}'"), "no fields here; remove it".into()),
                None => (
                    format!("Unrecognized key '{key}'"),
                    format!("only the known fields {}; remove it", quoted_list(known)),
                ),
            },
            ProblemKind::InvalidUnion { options } => (
                "Matches none of the allowed shapes".into(),
                match options.as_slice() {
                    [] => "a value matching one of the allowed shapes".into(),
                    [one] => one.clone(),
                    _ => format!("one of: {}", options.join("; ")),
                },
            ),
            ProblemKind::AmbiguousUnion => {
                ("Matches more than one of the allowed shapes".into(), "a value matching exactly one of them".into())
            }
            ProblemKind::NotMultipleOf { factor } => {
                (format!("Not a multiple of {factor}"), format!("a multiple of {factor}"))
            }
            ProblemKind::DuplicateItems => ("Items are not unique".into(), "every item to be different".into()),
            ProblemKind::Custom { problem, expected } => (problem.clone(), expected.clone()),
        }
    }
}

#[derive(Clone, Copy)]
enum Side {
    Lower,
    Upper,
}

fn bound_parts(bound: &Bound, side: Side) -> (String, String) {
    let (problem, quantity, unit_one, unit_many) = match (bound, side) {
        (Bound::Characters(n), Side::Lower) => ("Too short", *n, "character", "characters"),
        (Bound::Characters(n), Side::Upper) => ("Too long", *n, "character", "characters"),
        (Bound::Items(n), Side::Lower) => ("Too few items", *n, "item", "items"),
        (Bound::Items(n), Side::Upper) => ("Too many items", *n, "item", "items"),
        (Bound::Properties(n), Side::Lower) => ("Too few properties", *n, "property", "properties"),
        (Bound::Properties(n), Side::Upper) => ("Too many properties", *n, "property", "properties"),
        (Bound::Number { limit, exclusive }, side) => {
            let (problem, relation) = match (side, exclusive) {
                (Side::Lower, false) => ("Too small", "greater than or equal to"),
                (Side::Lower, true) => ("Too small", "greater than"),
                (Side::Upper, false) => ("Too big", "less than or equal to"),
                (Side::Upper, true) => ("Too big", "less than"),
            };
            return (problem.into(), format!("a number {relation} {limit}"));
        }
    };
    let least_most = match side {
        Side::Lower => "at least",
        Side::Upper => "at most",
    };
    let unit = if quantity == 1 { unit_one } else { unit_many };
    (problem.into(), format!("{least_most} {quantity} {unit}"))
}

/// `a string`, `a string or null`, `an integer, a string or null`.
fn types_phrase(types: &[String], none: &str) -> String {
    let phrases: Vec<String> = types.iter().map(|t| type_phrase(t)).collect();
    match phrases.as_slice() {
        [] => none.to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn type_phrase(json_type: &str) -> String {
    match json_type {
        "null" => "null".into(),
        "integer" | "object" | "array" => format!("an {json_type}"),
        "string" | "number" | "boolean" => format!("a {json_type}"),
        other => format!("a value of type {other}"),
    }
}

fn format_expectation(format: &str) -> String {
    let described = match format {
        "email" | "idn-email" => "a valid email address, like name@example.com",
        "uri" | "iri" => "an absolute URI, like https://example.com/path",
        "uri-reference" | "iri-reference" => "a URI or relative reference, like /path or https://example.com",
        "uuid" => "a UUID, like 123e4567-e89b-12d3-a456-426614174000",
        "date-time" => "an RFC 3339 date-time, like 2026-01-31T09:30:00Z",
        "date" => "a date as YYYY-MM-DD, like 2026-01-31",
        "time" => "a time as HH:MM:SS with an offset, like 09:30:00Z",
        "duration" => "an ISO 8601 duration, like P3DT4H",
        "ipv4" => "an IPv4 address, like 192.168.0.1",
        "ipv6" => "an IPv6 address, like 2001:db8::1",
        "hostname" | "idn-hostname" => "a hostname, like api.example.com",
        "regex" => "a valid regular expression",
        "json-pointer" => "a JSON pointer, like /items/0",
        _ => return format!("a string in {format} format"),
    };
    described.to_owned()
}

/// `'EUR'`, `one of 'EUR', 'USD', 'BRL'`.
fn values_phrase(allowed: &[Value]) -> String {
    let shown: Vec<String> = allowed.iter().take(MAX_LISTED_VALUES).map(|v| Sent::value(v).0).collect();
    let more = allowed.len().saturating_sub(MAX_LISTED_VALUES);
    match (shown.as_slice(), more) {
        ([], _) => "no value at all (nothing is allowed here); remove it".into(),
        ([one], 0) => format!("exactly {one}"),
        (_, 0) => format!("one of {}", shown.join(", ")),
        (_, more) => format!("one of {} (and {more} more)", shown.join(", ")),
    }
}

fn quoted_list(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(MAX_LISTED_VALUES).map(|n| format!("'{n}'")).collect();
    match names.len().saturating_sub(MAX_LISTED_VALUES) {
        0 => shown.join(", "),
        more => format!("{} (and {more} more)", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(kind: ProblemKind, sent: Value) -> String {
        kind.sentence(&Sent::value(&sent))
    }

    #[test]
    fn sent_renders_each_json_kind() {
        assert_eq!(Sent::value(&json!(42)).as_str(), "42");
        assert_eq!(Sent::value(&json!(1.5)).as_str(), "1.5");
        assert_eq!(Sent::value(&json!(true)).as_str(), "true");
        assert_eq!(Sent::value(&json!(null)).as_str(), "null");
        assert_eq!(Sent::value(&json!([])).as_str(), "array(0)");
        assert_eq!(Sent::value(&json!("it's")).as_str(), "'it's'");
        assert_eq!(Sent::value(&json!({})).as_str(), "{}");
    }

    #[test]
    fn sent_cuts_at_fifty_characters() {
        let fifty = "x".repeat(50);
        assert_eq!(Sent::value(&json!(fifty)).as_str(), format!("'{fifty}'"));
        let fifty_one = "x".repeat(51);
        assert_eq!(Sent::value(&json!(fifty_one)).as_str(), format!("'{}...'", "x".repeat(47)));
        // Four-byte characters: the cut never lands inside one.
        let rockets = "🚀".repeat(60);
        assert_eq!(Sent::value(&json!(rockets)).as_str(), format!("'{}...'", "🚀".repeat(47)));
    }

    #[test]
    fn sent_cuts_objects_as_compact_json() {
        let object = json!({"name": "a".repeat(100)});
        let expected = format!("{}...", &format!("{{\"name\":\"{}", "a".repeat(100))[..47]);
        assert_eq!(Sent::value(&object).as_str(), expected);
        let wide = json!({"k": "ü".repeat(300)});
        assert_eq!(Sent::value(&wide).as_str().chars().count(), 50);
    }

    #[test]
    fn sent_of_a_huge_object_reads_only_a_prefix() {
        let big = json!({"blob": "z".repeat(10 * 1024 * 1024)});
        assert_eq!(Sent::value(&big).as_str().chars().count(), 50);
    }

    #[test]
    fn paths() {
        assert_eq!(FieldPath::root().to_string(), "(root)");
        assert_eq!(FieldPath::root().key("items").index(1).key("qty").to_string(), "items.1.qty");
    }

    #[test]
    fn sentences_for_each_kind() {
        assert_eq!(
            ProblemKind::Missing { expected: vec!["string".into()] }.sentence(&Sent::missing()),
            "Missing required field. You sent: (missing). Expected a string."
        );
        assert_eq!(
            line(
                ProblemKind::InvalidType { expected: vec!["integer".into(), "string".into(), "null".into()] },
                json!(true)
            ),
            "Invalid type. You sent: true. Expected an integer, a string or null."
        );
        assert_eq!(
            line(ProblemKind::InvalidFormat { format: "email".into() }, json!("not-an-email")),
            "Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com."
        );
        assert_eq!(
            line(ProblemKind::InvalidFormat { format: "date".into() }, json!("31/01/2026")),
            "Invalid date format. You sent: '31/01/2026'. Expected a date as YYYY-MM-DD, like 2026-01-31."
        );
        assert_eq!(
            line(ProblemKind::PatternMismatch { pattern: "^inv_[a-z0-9_]+$".into() }, json!("INV-1")),
            "Does not match the required pattern. You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/."
        );
        assert_eq!(
            line(ProblemKind::InvalidValue { allowed: vec![json!("EUR"), json!("USD"), json!("BRL")] }, json!("eur")),
            "Invalid value. You sent: 'eur'. Expected one of 'EUR', 'USD', 'BRL'."
        );
        assert_eq!(
            line(ProblemKind::InvalidValue { allowed: vec![json!(1)] }, json!(2)),
            "Invalid value. You sent: 2. Expected exactly 1."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey { key: "nmae".into(), suggestion: Some("name".into()), known: vec![] },
                json!("Bob")
            ),
            "Unrecognized key 'nmae' (did you mean 'name'?). You sent: 'Bob'. Expected only known fields; rename it to 'name' or remove it."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "zzz".into(),
                    suggestion: None,
                    known: vec!["id".into(), "name".into()]
                },
                json!(1)
            ),
            "Unrecognized key 'zzz'. You sent: 1. Expected only the known fields 'id', 'name'; remove it."
        );
        assert_eq!(
            line(ProblemKind::InvalidUnion { options: vec!["a string".into(), "an integer".into()] }, json!(null)),
            "Matches none of the allowed shapes. You sent: null. Expected one of: a string; an integer."
        );
        assert_eq!(
            line(ProblemKind::NotMultipleOf { factor: Number::from_f64(0.5).unwrap() }, json!(0.7)),
            "Not a multiple of 0.5. You sent: 0.7. Expected a multiple of 0.5."
        );
        assert_eq!(
            line(ProblemKind::DuplicateItems, json!([1, 1])),
            "Items are not unique. You sent: array(2). Expected every item to be different."
        );
        assert_eq!(
            line(
                ProblemKind::Custom {
                    problem: "Amount exceeds the open balance.".into(),
                    expected: "at most 1500 cents.".into()
                },
                json!(2000)
            ),
            "Amount exceeds the open balance. You sent: 2000. Expected at most 1500 cents."
        );
    }

    #[test]
    fn bounds_have_singular_and_plural() {
        let cases = [
            (
                ProblemKind::TooSmall(Bound::Characters(1)),
                json!(""),
                "Too short. You sent: ''. Expected at least 1 character.",
            ),
            (
                ProblemKind::TooSmall(Bound::Characters(2)),
                json!("a"),
                "Too short. You sent: 'a'. Expected at least 2 characters.",
            ),
            (
                ProblemKind::TooBig(Bound::Characters(1)),
                json!("ab"),
                "Too long. You sent: 'ab'. Expected at most 1 character.",
            ),
            (
                ProblemKind::TooBig(Bound::Characters(200)),
                json!("a"),
                "Too long. You sent: 'a'. Expected at most 200 characters.",
            ),
            (
                ProblemKind::TooSmall(Bound::Items(1)),
                json!([]),
                "Too few items. You sent: array(0). Expected at least 1 item.",
            ),
            (
                ProblemKind::TooBig(Bound::Items(3)),
                json!([1, 2, 3, 4]),
                "Too many items. You sent: array(4). Expected at most 3 items.",
            ),
            (
                ProblemKind::TooSmall(Bound::Properties(1)),
                json!({}),
                "Too few properties. You sent: {}. Expected at least 1 property.",
            ),
            (
                ProblemKind::TooSmall(Bound::Number { limit: 1.into(), exclusive: false }),
                json!(0),
                "Too small. You sent: 0. Expected a number greater than or equal to 1.",
            ),
            (
                ProblemKind::TooSmall(Bound::Number { limit: 0.into(), exclusive: true }),
                json!(0),
                "Too small. You sent: 0. Expected a number greater than 0.",
            ),
            (
                ProblemKind::TooBig(Bound::Number { limit: 100.into(), exclusive: false }),
                json!(101),
                "Too big. You sent: 101. Expected a number less than or equal to 100.",
            ),
            (
                ProblemKind::TooBig(Bound::Number { limit: 100.into(), exclusive: true }),
                json!(100),
                "Too big. You sent: 100. Expected a number less than 100.",
            ),
        ];
        for (kind, sent, expected) in cases {
            assert_eq!(line(kind, sent), expected);
        }
    }

    #[test]
    fn long_value_lists_are_counted() {
        let allowed: Vec<Value> = (0..30).map(|i| json!(i)).collect();
        let text = line(ProblemKind::InvalidValue { allowed }, json!(99));
        assert!(text.ends_with("24 (and 5 more)."), "{text}");
    }
}
