//! The vocabulary of validation problems: what was wrong with one field, written as a sentence
//! the model can act on: `{Problem}. You sent: {sent}. Expected {expectation}.`
//!
//! Every kind is written from what the schema says and what was sent — never from a
//! validator's or a decoder's own message, which may quote the value whole.

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::expectation::{
    Expectation, Side, bound_phrase, few_words, first_sentence, format_expectation, quoted_list, values_phrase,
};
use crate::path::FieldPath;
use crate::sent::Sent;
use crate::shape::Shape;

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

/// How a value retyped is sent: `an integer, without the quotes`, `a string, in quotes`.
fn retyped_kind(retyped: &Value, expected: &Expectation) -> &'static str {
    match retyped {
        Value::String(_) => "a string, in quotes",
        Value::Bool(_) => "a boolean, without the quotes",
        Value::Number(n) if n.is_f64() || !expected.types.iter().any(|t| t == "integer") => {
            "a number, without the quotes"
        }
        _ => "an integer, without the quotes",
    }
}

/// One problem with one field: the path of the offending value and its sentence.
///
/// Build it from a [`ProblemKind`] with [`FieldProblem::new`], or give the text yourself.
///
/// ```
/// use mcp_fusion_wire::{Expectation, FieldPath, FieldProblem, ProblemKind, Sent};
/// use serde_json::json;
///
/// let path = FieldPath::root().key("items").index(1).key("qty");
/// let problem = FieldProblem::new(&path, &ProblemKind::InvalidType { expected: Expectation::of_types(vec!["integer".into()]), retyped: None }, &Sent::value(&json!("two")));
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

/// A known field offered instead of a key the schema does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownField {
    /// The field's name.
    pub name: String,
    /// Its description, if it has one (the sentence quotes the first words of it).
    pub description: Option<String>,
}

/// Why an unknown key points at a known field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suggestion {
    /// The names are spelled alike (`customer_emial` → `customer_email`).
    Spelling(String),
    /// The key's words match what the field is described as (`page_size` → `limit`, "How many
    /// invoices per page").
    Meaning(KnownField),
    /// A few fields whose words match the key as well as each other's (`lines` → `head`,
    /// `tail`): each is named with a few words of its description, for the caller to pick.
    Either(Vec<KnownField>),
}

/// Why a sub-schema applied to the value, told beside the problem it found.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `dependentSchemas`: the rules that apply because a field is present.
    Sent {
        /// The field whose presence brings the rules in.
        field: String,
    },
    /// `if` / `then` / `else`: the rules of the branch that applied.
    If {
        /// Whether the `if` held (`then` applied) or not (`else` applied).
        holds: bool,
        /// What the `if` asks, as field and value pairs, when it says so plainly; empty when it
        /// says more than the sentence can.
        facts: Vec<(String, Value)>,
    },
}

/// The kind of a validation problem, one per JSON Schema keyword (named after the issue codes
/// the contract's seed uses where it has one).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A required field is absent; `expected` says what to send.
    Missing {
        /// What the field's schema asks for.
        expected: Expectation,
    },
    /// A field `dependentRequired` asks for because another field was sent.
    MissingBecause {
        /// The field whose presence requires this one.
        present: String,
        /// What the missing field's schema asks for.
        expected: Expectation,
    },
    /// The value has the wrong JSON type; `expected` says all the schema asks, as for a
    /// missing field (the type, its bounds or values, a format, the description's words).
    InvalidType {
        /// What the field's schema asks for.
        expected: Expectation,
        /// The value sent, written as the type expected (`2500` for `"2500"`), when the
        /// schema accepts it so: then it is the whole fix, and the sentence says it first.
        retyped: Option<Value>,
    },
    /// As [`InvalidType`](ProblemKind::InvalidType) with a value retyped, for an error that
    /// repeats no value: the value sent, written as the type expected, meets every rule of
    /// the field, and the sentence says so without writing it.
    RetypedWithoutValue {
        /// What the field's schema asks for.
        expected: Expectation,
        /// The value sent, written as the type expected; never rendered.
        retyped: Value,
    },
    /// `null` sent for a field that may be left out but is not nullable.
    NullForOptional {
        /// What the field takes when it is sent.
        expected: Expectation,
    },
    /// No value is accepted here (a `false` schema, `not: {}`).
    NothingAllowed {
        /// Whether it is a field (a property whose schema is `false`), which is fixed by
        /// leaving it out.
        field: bool,
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
        /// A value that matches, from the schema's `examples` or `default`.
        example: Option<Value>,
    },
    /// The pattern could not be evaluated on the value (too complex for the regex engine).
    PatternUnchecked {
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
    /// A value the schema forbids (`not`).
    Forbidden {
        /// The forbidden shape (`a string`, `exactly 'x'`), or `None` when saying it would
        /// reveal a sensitive value.
        shape: Option<Shape>,
    },
    /// Too few (or no) items match `contains` (`minContains`).
    TooFewMatching {
        /// How many must match.
        min: u64,
        /// What a matching item is.
        shape: Shape,
    },
    /// Too many items match `contains` (`maxContains`).
    TooManyMatching {
        /// How many may match.
        max: u64,
        /// What a matching item is.
        shape: Shape,
    },
    /// The number of items that match `contains` is outside `minContains`..=`maxContains`.
    MatchingBetween {
        /// How many must match.
        min: u64,
        /// How many may match.
        max: u64,
        /// What a matching item is.
        shape: Shape,
    },
    /// Items beyond those the schema describes (`prefixItems` with `items: false`,
    /// `unevaluatedItems`, `additionalItems`).
    UnexpectedItems {
        /// How many items the schema describes.
        max: u64,
    },
    /// A key of an object breaks `propertyNames`; `rule` is what the key itself broke.
    InvalidKey {
        /// The problem of the key, as a value.
        rule: Box<ProblemKind>,
    },
    /// An argument key the action does not know.
    UnrecognizedKey {
        /// The unknown key, as sent.
        key: String,
        /// The known field it most likely means, if one is close.
        suggestion: Option<Suggestion>,
        /// Every known field at that level, listed when nothing is close.
        known: Vec<KnownField>,
        /// The patterns other keys may match (`patternProperties`).
        patterns: Vec<String>,
    },
    /// The value matches none of the alternatives (`oneOf` / `anyOf`).
    InvalidUnion {
        /// Each alternative (`a string`, `an object with the required field 'id'`).
        options: Vec<Shape>,
    },
    /// The value matches none of the alternatives, and one is closest: its own problems are
    /// reported at their fields, beside this line.
    ClosestUnion {
        /// The alternative with the fewest problems.
        closest: Shape,
        /// The other alternatives.
        others: Vec<Shape>,
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
    /// An integer past what 64 bits hold (beyond `u64::MAX`, below `i64::MIN`): it was read as
    /// a 64-bit float, whose digits past the 16th are lost, and would reach the tool rounded.
    BeyondExactIntegers,
    /// A string is not valid in its `contentEncoding` (`base64`).
    InvalidEncoding {
        /// The encoding.
        encoding: String,
    },
    /// A string does not hold its `contentMediaType` (`application/json`).
    InvalidContent {
        /// The media type.
        media_type: String,
    },
    /// The value passed the schema but the action could not take it (its input type decodes
    /// more strictly than the schema says).
    NotAccepted {
        /// What the schema at that field asks for.
        expected: Expectation,
    },
    /// A sub-schema's problem, with why the sub-schema applied (`dependentSchemas`, `if`).
    Because {
        /// Why the rules applied.
        condition: Condition,
        /// The problem they found.
        problem: Box<ProblemKind>,
    },
    /// A keyword this vocabulary has no sentence of its own for: named, with the schema's
    /// value for it, never with a validator's message.
    SchemaRule {
        /// The keyword (`x-even`).
        keyword: String,
        /// The keyword's value in the schema.
        rule: Value,
    },
    /// A mounted upstream refused the arguments (JSON-RPC `-32602`, an API's 400 or 422); its
    /// message is quoted and escaped as any echo is, and kept to 300 characters, since its
    /// words are what the caller fixes the call by.
    UpstreamRefused {
        /// The upstream's namespace.
        upstream: String,
        /// What it said.
        message: String,
        /// What the field its words name takes, from the tool's schema; `None` when they
        /// name no field.
        expected: Option<Expectation>,
    },
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
            ProblemKind::Missing { .. } | ProblemKind::MissingBecause { .. } => "missing",
            ProblemKind::InvalidType { .. }
            | ProblemKind::RetypedWithoutValue { .. }
            | ProblemKind::NullForOptional { .. } => "invalid_type",
            ProblemKind::InvalidFormat { .. }
            | ProblemKind::PatternMismatch { .. }
            | ProblemKind::PatternUnchecked { .. }
            | ProblemKind::InvalidEncoding { .. }
            | ProblemKind::InvalidContent { .. } => "invalid_format",
            ProblemKind::TooSmall(_) | ProblemKind::TooFewMatching { .. } | ProblemKind::MatchingBetween { .. } => {
                "too_small"
            }
            ProblemKind::TooBig(_) | ProblemKind::TooManyMatching { .. } | ProblemKind::UnexpectedItems { .. } => {
                "too_big"
            }
            ProblemKind::InvalidValue { .. }
            | ProblemKind::Forbidden { .. }
            | ProblemKind::NotAccepted { .. }
            | ProblemKind::NothingAllowed { .. } => "invalid_value",
            ProblemKind::InvalidKey { .. } => "invalid_key",
            ProblemKind::UnrecognizedKey { .. } => "unrecognized_keys",
            ProblemKind::InvalidUnion { .. } | ProblemKind::ClosestUnion { .. } | ProblemKind::AmbiguousUnion => {
                "invalid_union"
            }
            ProblemKind::NotMultipleOf { .. } => "not_multiple_of",
            ProblemKind::DuplicateItems => "not_unique",
            ProblemKind::BeyondExactIntegers => "too_big",
            ProblemKind::Because { problem, .. } => problem.code(),
            ProblemKind::SchemaRule { .. } | ProblemKind::Custom { .. } | ProblemKind::UpstreamRefused { .. } => {
                "custom"
            }
        }
    }

    /// The sentence: `{Problem}. You sent: {sent}. Expected {expectation}.`
    pub fn sentence(&self, sent: &Sent) -> String {
        let (problem, expected) = self.parts();
        let problem = problem.trim_end_matches('.');
        let expected = expected.trim_end_matches('.');
        format!("{problem}. You sent: {sent}. Expected {expected}.")
    }

    /// The problem and the expectation, each a sentence fragment. One arm per kind: the list
    /// is long because the schema language is.
    fn parts(&self) -> (String, String) {
        match self {
            ProblemKind::Missing { expected } => ("Missing required field".into(), expected.missing_phrase()),
            ProblemKind::MissingBecause { present, expected } => {
                (format!("Missing field, required because {} is sent", Sent::text(present)), expected.missing_phrase())
            }
            ProblemKind::InvalidType { expected, retyped: None } => ("Invalid type".into(), expected.phrase()),
            // The value retyped meets every other rule of the field, so its type is all to say.
            ProblemKind::InvalidType { expected, retyped: Some(retyped) } => {
                ("Invalid type".into(), format!("{} ({})", Sent::value(retyped), retyped_kind(retyped, expected)))
            }
            ProblemKind::RetypedWithoutValue { expected, retyped } => {
                ("Invalid type".into(), format!("the value you sent as {}", retyped_kind(retyped, expected)))
            }
            ProblemKind::NullForOptional { expected } => (
                "This field does not take null".into(),
                format!("the field left out (it is optional), or {}", expected.phrase()),
            ),
            ProblemKind::NothingAllowed { field: true } => {
                ("This field is not accepted".into(), "the field left out".into())
            }
            ProblemKind::NothingAllowed { field: false } => (
                "No value is accepted here".into(),
                "no value at all: the schema refuses every value at this place".into(),
            ),
            ProblemKind::InvalidFormat { format } => (format!("Invalid {format} format"), format_expectation(format)),
            ProblemKind::PatternMismatch { pattern, example } => {
                let mut expected = format!("a string matching the pattern /{pattern}/");
                if let Some(example) = example {
                    expected.push_str(&format!(", like {}", Sent::value(example)));
                }
                ("Does not match the required pattern".into(), expected)
            }
            ProblemKind::PatternUnchecked { pattern } => (
                "Could not be checked against the required pattern".into(),
                format!("a shorter or simpler string matching the pattern /{pattern}/"),
            ),
            ProblemKind::TooSmall(bound) => {
                (bound_problem(bound, Side::Lower).into(), bound_expected(bound, Side::Lower))
            }
            ProblemKind::TooBig(bound) => {
                (bound_problem(bound, Side::Upper).into(), bound_expected(bound, Side::Upper))
            }
            ProblemKind::InvalidValue { allowed } => ("Invalid value".into(), values_phrase(allowed)),
            ProblemKind::Forbidden { shape } => (
                "Not allowed here".into(),
                match shape {
                    Some(shape) if shape.is_anything() => "no value at all: the schema refuses every value here".into(),
                    Some(shape) => format!("anything but {}", shape.phrase()),
                    None => "another value than the one the schema forbids".into(),
                },
            ),
            ProblemKind::TooFewMatching { min, shape } => {
                let problem = if *min <= 1 { "No item matches" } else { "Too few items match" };
                (problem.into(), matching(*min, "at least", shape))
            }
            ProblemKind::TooManyMatching { max, shape } => {
                ("Too many items match".into(), matching(*max, "at most", shape))
            }
            ProblemKind::MatchingBetween { min, max, shape } => (
                "The number of matching items is out of range".into(),
                format!("{} and {}", matching(*min, "at least", shape), matching(*max, "at most", &Shape::default())),
            ),
            ProblemKind::UnexpectedItems { max } => (
                "More items than the schema describes".into(),
                format!("at most {max} {}", if *max == 1 { "item" } else { "items" }),
            ),
            ProblemKind::InvalidKey { rule } => ("Invalid key".into(), format!("every key to be {}", rule.parts().1)),
            ProblemKind::UnrecognizedKey { key, suggestion, known, patterns } => {
                unrecognized(key, suggestion.as_ref(), known, patterns)
            }
            ProblemKind::InvalidUnion { options } => {
                ("Matches none of the allowed shapes".into(), crate::expectation::alternatives_phrase(options))
            }
            ProblemKind::ClosestUnion { closest, others } => {
                let others: Vec<String> = others.iter().map(Shape::phrase).collect();
                let alternatives = match others.as_slice() {
                    [] => String::new(),
                    [one] => format!(", or else {one}"),
                    _ => format!(", or else one of: {}", others.join("; ")),
                };
                (
                    "Matches none of the allowed shapes".into(),
                    format!("{} (the closest: fix what the other lines say){alternatives}", closest.phrase()),
                )
            }
            ProblemKind::AmbiguousUnion => {
                ("Matches more than one of the allowed shapes".into(), "a value matching exactly one of them".into())
            }
            ProblemKind::NotMultipleOf { factor } => {
                (format!("Not a multiple of {factor}"), format!("a multiple of {factor}"))
            }
            ProblemKind::DuplicateItems => ("Items are not unique".into(), "every item to be different".into()),
            ProblemKind::BeyondExactIntegers => (
                "This integer is beyond the integers this server carries exactly (64 bits): it would reach the tool rounded".into(),
                format!(
                    "an integer from {} to {}; send one in that range, or ask the user what the value should be",
                    i64::MIN,
                    u64::MAX
                ),
            ),
            ProblemKind::InvalidEncoding { encoding } => {
                (format!("Not valid {encoding}"), format!("a string in {encoding} encoding"))
            }
            ProblemKind::InvalidContent { media_type } => {
                (format!("Not valid {media_type} content"), format!("a string holding {media_type}"))
            }
            ProblemKind::NotAccepted { expected } => {
                let words = expected.description.as_deref().and_then(first_sentence);
                let shape = Expectation { description: None, ..expected.clone() }.phrase();
                let expected = match words {
                    Some(words) => format!("a value the action accepts: {shape} ({words})"),
                    None => format!("a value the action accepts: {shape} in the form the tool's description gives"),
                };
                ("Not accepted by the action".into(), expected)
            }
            ProblemKind::Because { condition, problem } => {
                let (inner, expected) = problem.parts();
                (format!("{} ({})", inner.trim_end_matches('.'), condition_phrase(condition)), expected)
            }
            ProblemKind::SchemaRule { keyword, rule } => (
                format!("Fails the schema's {} rule", Sent::text(keyword)),
                format!("a value that satisfies {}: {}", Sent::text(keyword), Sent::value(rule)),
            ),
            ProblemKind::UpstreamRefused { upstream, message, expected } => (
                format!("Upstream \"{upstream}\" refused the arguments: {}", Sent::words(message)),
                match expected {
                    Some(expected) => expected.described_phrase(),
                    None => "arguments its input schema accepts (the tool in tools/list shows it)".into(),
                },
            ),
            ProblemKind::Custom { problem, expected } => (problem.clone(), expected.clone()),
        }
    }
}

/// `Too short`, `Too many items`, `Too big`.
fn bound_problem(bound: &Bound, side: Side) -> &'static str {
    match (bound, side) {
        (Bound::Characters(_), Side::Lower) => "Too short",
        (Bound::Characters(_), Side::Upper) => "Too long",
        (Bound::Items(_), Side::Lower) => "Too few items",
        (Bound::Items(_), Side::Upper) => "Too many items",
        (Bound::Properties(_), Side::Lower) => "Too few properties",
        (Bound::Properties(_), Side::Upper) => "Too many properties",
        (Bound::Number { .. }, Side::Lower) => "Too small",
        (Bound::Number { .. }, Side::Upper) => "Too big",
    }
}

/// `at most 100`, `a number less than 100`, `at least 2 items`.
fn bound_expected(bound: &Bound, side: Side) -> String {
    match bound {
        Bound::Number { exclusive: true, .. } => format!("a number {}", bound_phrase(bound, side)),
        _ => bound_phrase(bound, side),
    }
}

/// `at least 2 items that are exactly 'a'`; `at least 1 item` when any item counts.
fn matching(count: u64, least_most: &str, shape: &Shape) -> String {
    let (noun, verb) = if count == 1 { ("item", "is") } else { ("items", "are") };
    if shape.is_anything() {
        return format!("{least_most} {count} {noun}");
    }
    format!("{least_most} {count} {noun} that {verb} {}", shape.phrase())
}

/// `because 'a' is sent`, `because 'kind' is 'card'`, `because 'kind' is not 'card'`.
fn condition_phrase(condition: &Condition) -> String {
    match condition {
        Condition::Sent { field } => format!("because {} is sent", Sent::text(field)),
        Condition::If { holds: true, facts } if facts.is_empty() => {
            "because the value meets the schema's 'if' condition".into()
        }
        Condition::If { holds: false, facts } if facts.is_empty() => {
            "because the value does not meet the schema's 'if' condition".into()
        }
        Condition::If { holds, facts } => {
            let verb = if *holds { "is" } else { "is not" };
            let facts: Vec<String> = facts
                .iter()
                .map(|(field, value)| format!("{} {verb} {}", Sent::text(field), Sent::value(value)))
                .collect();
            format!("because {}", facts.join(if *holds { " and " } else { " or " }))
        }
    }
}

/// A field's name with a few words of its description: `'id' (the invoice id)`.
fn described(field: &KnownField) -> String {
    match field.description.as_deref().and_then(few_words) {
        Some(about) => format!("{} ({about})", Sent::text(&field.name)),
        None => Sent::text(&field.name).to_string(),
    }
}

/// The sentence parts of an unknown key: the field it most likely means and why, or the
/// known fields with a few words each, and the patterns other keys may match.
fn unrecognized(
    key: &str,
    suggestion: Option<&Suggestion>,
    known: &[KnownField],
    patterns: &[String],
) -> (String, String) {
    let key = Sent::text(key);
    let matching = |patterns: &[String]| {
        let shown: Vec<String> = patterns.iter().map(|p| format!("/{p}/")).collect();
        format!("keys matching {}", crate::shape::either(&shown))
    };
    match suggestion {
        Some(Suggestion::Spelling(name)) => (
            format!("Unrecognized key {key} (did you mean {}?)", Sent::text(name)),
            format!("only known fields; rename it to {} or remove it", Sent::text(name)),
        ),
        // The field's description is in `tools/list`; here the name alone is what to act on.
        Some(Suggestion::Meaning(field)) => {
            let name = Sent::text(&field.name);
            (
                format!("Unrecognized key {key} (did you mean {name}?)"),
                format!("only known fields; provide the value as {name} instead"),
            )
        }
        Some(Suggestion::Either(fields)) => {
            let names: Vec<String> = fields.iter().map(|field| Sent::text(&field.name).to_string()).collect();
            let either = |names: &[String]| match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.concat(),
            };
            let described: Vec<String> = fields.iter().map(described).collect();
            (
                format!("Unrecognized key {key} (did you mean {}?)", either(&names)),
                format!("only known fields; provide the value as the one you mean of {}", either(&described)),
            )
        }
        None if known.is_empty() && patterns.is_empty() => {
            (format!("Unrecognized key {key}"), "no fields here; remove it".into())
        }
        None if known.is_empty() => {
            (format!("Unrecognized key {key}"), format!("only {}; remove it", matching(patterns)))
        }
        None => {
            let listed = if known.iter().all(|field| field.description.is_none()) {
                quoted_list(&known.iter().map(|field| field.name.clone()).collect::<Vec<_>>())
            } else {
                known.iter().map(described).collect::<Vec<_>>().join(", ")
            };
            let others = if patterns.is_empty() { String::new() } else { format!(", or {}", matching(patterns)) };
            (format!("Unrecognized key {key}"), format!("only the known fields {listed}{others}; remove it"))
        }
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
    fn paths() {
        assert_eq!(FieldPath::root().to_string(), "(root)");
        assert_eq!(FieldPath::root().key("items").index(1).key("qty").to_string(), "items.1.qty");
        // A key the caller made up is shown escaped and cut, like any echo.
        assert_eq!(FieldPath::root().key("a\nb").to_string(), r"a\nb");
        assert_eq!(FieldPath::root().key(r"back\slash").to_string(), r"back\\slash");
        assert_eq!(FieldPath::root().key("k".repeat(10_000)).to_string(), format!("{}...", "k".repeat(47)));
    }

    #[test]
    fn sentences_for_each_kind() {
        let string = || Expectation::of_types(vec!["string".into()]);
        assert_eq!(
            ProblemKind::Missing { expected: string() }.sentence(&Sent::missing()),
            "Missing required field. You sent: (missing). Expected a string."
        );
        assert_eq!(
            ProblemKind::MissingBecause { present: "card_number".into(), expected: string() }
                .sentence(&Sent::missing()),
            "Missing field, required because 'card_number' is sent. You sent: (missing). Expected a string."
        );
        assert_eq!(
            line(
                ProblemKind::InvalidType {
                    expected: Expectation::of_types(vec!["integer".into(), "string".into(), "null".into()]),
                    retyped: None,
                },
                json!(true)
            ),
            "Invalid type. You sent: true. Expected an integer, a string or null."
        );
        let integer = Expectation::of_types(vec!["integer".into()]);
        assert_eq!(
            ProblemKind::RetypedWithoutValue { expected: integer, retyped: json!(2500) }
                .sentence(&Sent::kind(&json!("2500"))),
            "Invalid type. You sent: a string. Expected the value you sent as an integer, without the quotes."
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
            line(ProblemKind::PatternMismatch { pattern: "^inv_[a-z0-9_]+$".into(), example: None }, json!("INV-1")),
            "Does not match the required pattern. You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/."
        );
        assert_eq!(
            line(
                ProblemKind::PatternMismatch {
                    pattern: "^inv_[a-z0-9_]+$".into(),
                    example: Some(json!("inv_2026_0001"))
                },
                json!("INV-1")
            ),
            "Does not match the required pattern. You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_2026_0001'."
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
                ProblemKind::InvalidUnion {
                    options: vec![
                        Shape { value: Expectation::of_types(vec!["string".into()]), ..Shape::default() },
                        Shape { value: Expectation::of_types(vec!["integer".into()]), ..Shape::default() }
                    ]
                },
                json!(null)
            ),
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
    fn unknown_keys_point_at_the_field_they_mean() {
        let known =
            |name: &str, about: Option<&str>| KnownField { name: name.into(), description: about.map(Into::into) };
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "nmae".into(),
                    suggestion: Some(Suggestion::Spelling("name".into())),
                    known: vec![],
                    patterns: vec![]
                },
                json!("Bob")
            ),
            "Unrecognized key 'nmae' (did you mean 'name'?). You sent: 'Bob'. Expected only known fields; rename it to 'name' or remove it."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "page_size".into(),
                    suggestion: Some(Suggestion::Meaning(known(
                        "limit",
                        Some("How many invoices per page. Default 20.")
                    ))),
                    known: vec![],
                    patterns: vec![]
                },
                json!(2)
            ),
            "Unrecognized key 'page_size' (did you mean 'limit'?). You sent: 2. Expected only known fields; provide the value as 'limit' instead."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "lines".into(),
                    suggestion: Some(Suggestion::Either(vec![
                        known("head", Some("If provided, returns only the first N lines of the file")),
                        known("tail", Some("If provided, returns only the last N lines of the file"))
                    ])),
                    known: vec![],
                    patterns: vec![]
                },
                json!(5)
            ),
            "Unrecognized key 'lines' (did you mean 'head' or 'tail'?). You sent: 5. Expected only known fields; provide the value as the one you mean of 'head' (if provided, returns only the first N lines) or 'tail' (if provided, returns only the last N lines)."
        );
        assert_eq!(
            line(ProblemKind::InvalidValue { allowed: vec![json!("open"), json!("paid"), Value::Null] }, json!("OPEN")),
            "Invalid value. You sent: 'OPEN'. Expected one of 'open', 'paid' (or null, to leave it unset)."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "zzz".into(),
                    suggestion: None,
                    known: vec![known("id", None), known("name", None)],
                    patterns: vec![]
                },
                json!(1)
            ),
            "Unrecognized key 'zzz'. You sent: 1. Expected only the known fields 'id', 'name'; remove it."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "zzz".into(),
                    suggestion: None,
                    known: vec![
                        known("id", Some("The invoice id, like `inv_1`; see list_invoices.")),
                        known("note", None)
                    ],
                    patterns: vec![]
                },
                json!(1)
            ),
            "Unrecognized key 'zzz'. You sent: 1. Expected only the known fields 'id' (the invoice id, like `inv_1`), 'note'; remove it."
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "x\"\nRecovery: y".into(),
                    suggestion: None,
                    known: vec![],
                    patterns: vec![]
                },
                json!(1)
            ),
            r#"Unrecognized key 'x"\nRecovery: y'. You sent: 1. Expected no fields here; remove it."#
        );
        assert_eq!(
            line(
                ProblemKind::UnrecognizedKey {
                    key: "b".into(),
                    suggestion: None,
                    known: vec![known("id", None)],
                    patterns: vec!["^x-".into()]
                },
                json!(1)
            ),
            "Unrecognized key 'b'. You sent: 1. Expected only the known fields 'id', or keys matching /^x-/; remove it."
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
                "Too small. You sent: 0. Expected at least 1.",
            ),
            (
                ProblemKind::TooSmall(Bound::Number { limit: 0.into(), exclusive: true }),
                json!(0),
                "Too small. You sent: 0. Expected a number greater than 0.",
            ),
            (
                ProblemKind::TooBig(Bound::Number { limit: 4_294_967_295u64.into(), exclusive: false }),
                json!(5_000_000_000u64),
                "Too big. You sent: 5000000000. Expected at most 4294967295.",
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
