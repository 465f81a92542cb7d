//! Property tests: nothing sensitive, long or deceptive leaves through a validation error,
//! whatever the schema and whatever was sent.

use mcp_fusion_wire::ValidationError;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::Checker;

/// A constraint on one field, likely to be broken by a random value: (`schema`, whether the
/// value sent is a number).
fn constraint(which: usize, secret: &Value) -> Value {
    match (which, secret) {
        (0, _) => json!({"type": "string", "minLength": 500}),
        (1, _) => json!({"type": "string", "maxLength": 3}),
        (2, _) => json!({"type": "string", "pattern": "^[0-9]+$"}),
        (3, _) => json!({"enum": ["a", "b"]}),
        (4, _) => json!({"type": "string", "format": "email"}),
        (5, _) => json!({"not": {"const": secret}}),
        (6, _) => json!({"not": {"type": ["string", "number"]}}),
        (7, _) => json!({"type": "boolean"}),
        (8, _) => json!({"oneOf": [{"type": "boolean"}, {"type": "array"}]}),
        (9, Value::Number(_)) => json!({"type": "integer", "maximum": 5, "multipleOf": 7}),
        (9, _) => json!({"type": "string", "const": "zzz"}),
        (10, _) => json!({"type": "object"}),
        _ => json!({"type": "string", "minLength": 500, "description": "A secret."}),
    }
}

/// The schema and arguments with `field` (holding `value`) placed at the top, in a nested
/// object, as an array item, behind `Option`'s `anyOf`, behind a `$ref`, or in an `allOf`. The field is sensitive because its
/// schema says `writeOnly` or because the action marks its path sensitive.
fn placed(place: usize, field: Value, value: Value, write_only: bool) -> (Value, Value, Vec<String>) {
    let mut field = field;
    if write_only {
        field["writeOnly"] = json!(true);
    }
    let (schema, arguments, path) = match place {
        0 => (json!({"properties": {"secret": field}}), json!({"secret": value}), "secret"),
        1 => (
            json!({"properties": {"card": {"type": "object", "properties": {"number": field}}}}),
            json!({"card": {"number": value}}),
            "card.number",
        ),
        2 => {
            (json!({"properties": {"pins": {"type": "array", "items": field}}}), json!({"pins": ["x", value]}), "pins")
        }
        3 => (
            json!({"properties": {"secret": {"anyOf": [field, {"type": "null"}]}}}),
            json!({"secret": value}),
            "secret",
        ),
        4 => (
            json!({"properties": {"secret": {"$ref": "#/$defs/Secret"}}, "$defs": {"Secret": field}}),
            json!({"secret": value}),
            "secret",
        ),
        _ => (json!({"properties": {"secret": {"allOf": [field]}}}), json!({"secret": value}), "secret"),
    };
    let marked = if write_only { Vec::new() } else { vec![path.to_owned()] };
    (schema, arguments, marked)
}

fn rendered(schema: &Value, arguments: &Value, sensitive: Vec<String>) -> Option<String> {
    rendered_as(schema, arguments, sensitive, false)
}

fn rendered_as(schema: &Value, arguments: &Value, sensitive: Vec<String>, value_free: bool) -> Option<String> {
    let checker = Checker::new(schema.as_object()?, sensitive, super::Formats::Asserted).ok()?.value_free(value_free);
    let fields = checker.check(arguments);
    (!fields.is_empty()).then(|| ValidationError { action: "a.b".into(), fields, contract_awareness: None }.render())
}

/// Every character an envelope line may not hold raw: controls (the envelope's own line
/// breaks aside) and invisible or bidirectional formatting.
fn deceptive(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_sensitive_value_is_never_echoed(
        text in "[A-Za-z0-9]{12,40}",
        number in 1_000_000_007u64..u64::MAX,
        as_number in any::<bool>(),
        which in 0usize..12,
        place in 0usize..6,
        write_only in any::<bool>(),
    ) {
        let secret = if as_number { json!(number) } else { json!(text) };
        let (schema, arguments, sensitive) = placed(place, constraint(which, &secret), secret.clone(), write_only);
        if let Some(envelope) = rendered(&schema, &arguments, sensitive) {
            let shown = match &secret { Value::String(s) => s.clone(), other => other.to_string() };
            prop_assert!(!envelope.contains(&shown), "{envelope}");
        }
    }

    #[test]
    fn value_free_checks_echo_no_value_of_any_field(
        text in "[A-Za-z0-9]{12,40}",
        number in 1_000_000_007u64..u64::MAX,
        as_number in any::<bool>(),
        which in 0usize..12,
        place in 0usize..6,
    ) {
        let value = if as_number { json!(number) } else { json!(text) };
        let (schema, arguments, _) = placed(place, constraint(which, &value), value.clone(), false);
        if let Some(envelope) = rendered_as(&schema, &arguments, Vec::new(), true) {
            let shown = match &value { Value::String(s) => s.clone(), other => other.to_string() };
            prop_assert!(!envelope.contains(&shown), "{envelope}");
        }
    }

    #[test]
    fn a_long_or_deceptive_value_is_cut_and_escaped(
        value in "[a-z\\n\\r\\t\\u{0}\\u{1b}\\u{7}\\u{202e}\\u{2066}'\"\\\\ ]{51,400}",
        which in 0usize..5,
        place in 0usize..6,
    ) {
        let (schema, arguments, _) = placed(place, constraint(which, &json!(value)), json!(value), false);
        if let Some(envelope) = rendered(&schema, &arguments, Vec::new()) {
            let raw: Vec<char> = value.chars().collect();
            for window in raw.windows(48) {
                let window: String = window.iter().collect();
                prop_assert!(!envelope.contains(&window), "{envelope}");
            }
            prop_assert!(!envelope.chars().any(deceptive), "{envelope:?}");
            // One line per field, between the opening tag and the recovery.
            for line in envelope.lines().filter(|l| l.starts_with("<field")) {
                prop_assert!(line.ends_with("</field>"), "{line:?}");
                prop_assert!(line.chars().count() < 400, "{line:?}");
            }
        }
    }

    #[test]
    fn an_unknown_key_is_echoed_like_a_value(key in "[a-z\\n\\u{202e}\"'<>&]{1,300}") {
        let schema = json!({"properties": {"id": {"type": "string"}}, "additionalProperties": false});
        let mut arguments = serde_json::Map::new();
        arguments.insert(key.clone(), json!(1));
        if let Some(envelope) = rendered(&schema, &Value::Object(arguments), Vec::new()) {
            prop_assert!(!envelope.chars().any(deceptive), "{envelope:?}");
            prop_assert!(envelope.lines().count() == 4, "{envelope:?}");
            prop_assert!(envelope.len() < 600, "{}", envelope.len());
        }
    }
}
