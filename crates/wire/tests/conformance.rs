//! Every case of the TypeScript implementation's wire vectors, rendered by this crate, must be
//! byte-identical to what the vector expects. A mismatch names the case and shows a diff.
//! Read the other way, every expected envelope text must parse back to the fields the case's
//! input gave, as the reference client reads it.

use mcp_fusion_wire::conformance::{Case, Expected, parse_case, run_case};
use mcp_fusion_wire::{Envelope, EnvelopeKind, parse};
use serde_json::{Value, json};

const VECTORS: &str = include_str!("vectors/wire-vectors.jsonl");
const CASES_IN_FILE: usize = 185;

/// A vector whose recorded input lost a detail its expected text shows. The TypeScript
/// generator rendered details `{__proto__: "polluted", constructor: "c", toString: "t"}` (an
/// own `__proto__` key, first), but dumping the input dropped the `__proto__` pair. The case is
/// checked against its input with that pair restored, and the check fails if the vector is
/// ever repaired (then this entry must go) or our output differs in any other way.
const INPUT_LOST_PROTO_DETAIL: &str = "tool_error/escape/details_proto_key";

#[test]
fn every_vector_renders_byte_for_byte() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (number, line) in VECTORS.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let mut case = parse_case(line).unwrap_or_else(|e| panic!("line {}: {e}", number + 1));
        let expected = case.expected.clone().unwrap_or_else(|| panic!("case {}: no `expected`", case.id));
        if case.id == INPUT_LOST_PROTO_DETAIL {
            assert_input_lost_proto_detail(&case, &expected);
            restore_proto_detail(&mut case);
        }
        let outcome = run_case(&case).unwrap_or_else(|e| panic!("line {}: {e}", number + 1));
        ran += 1;
        if !outcome.matches(&expected) {
            failures.push(report(&case.id, &expected, &outcome.text, outcome.is_error));
        }
    }
    assert_eq!(ran, CASES_IN_FILE, "the vectors file should hold {CASES_IN_FILE} cases");
    assert!(failures.is_empty(), "{} of {ran} vectors differ:\n\n{}", failures.len(), failures.join("\n"));
}

/// The defect is real: the input as recorded cannot produce the expected text.
fn assert_input_lost_proto_detail(case: &Case, expected: &Expected) {
    let as_recorded = run_case(case).expect("the recorded input runs");
    assert!(
        !as_recorded.matches(expected),
        "{INPUT_LOST_PROTO_DETAIL} now renders as recorded: the vector was repaired, drop its special case"
    );
    assert!(expected.text.contains("<detail key=\"__proto__\">polluted</detail>"));
}

fn restore_proto_detail(case: &mut Case) {
    let details = case.input["details"].as_array_mut().expect("the case has details");
    assert!(!details.iter().any(|d| d[0] == "__proto__"));
    details.insert(0, json!(["__proto__", "polluted"]));
}

fn report(id: &str, expected: &Expected, actual: &str, is_error: Option<bool>) -> String {
    let mut out = format!("case {id}:\n");
    if expected.is_error != is_error {
        out += &format!("  is_error: expected {:?}, got {:?}\n", expected.is_error, is_error);
    }
    if expected.text != actual {
        let at = expected.text.bytes().zip(actual.bytes()).take_while(|(a, b)| a == b).count();
        out += &format!("  text differs from byte {at}\n{}", line_diff(&expected.text, actual));
    }
    out
}

/// The lines between the common head and tail, as `-expected` / `+actual`.
fn line_diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    let head = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = e[head..].iter().rev().zip(a[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let mut out = String::new();
    for line in &e[head.saturating_sub(2)..head] {
        out += &format!("     {line:?}\n");
    }
    for line in &e[head..e.len() - tail] {
        out += &format!("   - {line:?}\n");
    }
    for line in &a[head..a.len() - tail] {
        out += &format!("   + {line:?}\n");
    }
    out
}

#[test]
fn a_broken_byte_fails_loudly_with_id_and_diff() {
    let line = VECTORS.lines().find(|l| l.contains("\"tool_error/realistic/NOT_FOUND\"")).unwrap();
    let case = parse_case(line).unwrap();
    let mut expected = case.expected.clone().unwrap();
    expected.text = expected.text.replacen("p_123", "p_124", 1);
    let outcome = run_case(&case).unwrap();
    assert!(!outcome.matches(&expected));
    let text = report(&case.id, &expected, &outcome.text, outcome.is_error);
    assert!(text.starts_with("case tool_error/realistic/NOT_FOUND:\n  text differs from byte 69\n"), "{text}");
    assert!(text.contains("   - \"<message>Project 'p_124' does not exist.</message>\"\n"), "{text}");
    assert!(text.contains("   + \"<message>Project 'p_123' does not exist.</message>\"\n"), "{text}");
}

#[test]
fn each_vector_also_parses_back_to_what_rendered_it() {
    for line in VECTORS.lines() {
        let case = parse_case(line).unwrap();
        if !matches!(case.kind.as_str(), "tool_error" | "error_builder") {
            continue;
        }
        let expected = case.expected.unwrap();
        let envelope = parse(&expected.text);
        assert_eq!(envelope.kind, EnvelopeKind::ToolError, "{}", case.id);
        assert_eq!(Some(envelope.is_error()), expected.is_error, "{}", case.id);
        assert_eq!(envelope.error.render(), expected.text, "{}: parse then render", case.id);
        let code = case.input.get("code").and_then(Value::as_str).unwrap();
        assert_eq!(envelope.error.code.as_str(), code, "{}", case.id);
    }
}

/// The cases of the file that are envelopes (`tool_error` and `error_builder`); the rest are
/// `escape_text` and `escape_attr` cases.
const ENVELOPE_CASES_IN_FILE: usize = 170;

#[test]
fn every_expected_text_parses_back_to_its_input_fields() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in VECTORS.lines().filter(|l| !l.trim().is_empty()) {
        let mut case = parse_case(line).unwrap();
        if !matches!(case.kind.as_str(), "tool_error" | "error_builder") {
            continue;
        }
        let expected = case.expected.clone().unwrap_or_else(|| panic!("case {}: no `expected`", case.id));
        if case.id == INPUT_LOST_PROTO_DETAIL {
            assert_input_lost_proto_detail(&case, &expected);
            restore_proto_detail(&mut case);
        }
        let envelope = parse(&expected.text);
        let (wanted, read) = (Fields::of_input(&case), Fields::of_envelope(&envelope));
        checked += 1;
        if envelope.kind != EnvelopeKind::ToolError {
            failures.push(format!("case {}: read as {:?}", case.id, envelope.kind));
        } else if Some(envelope.is_error()) != expected.is_error {
            failures.push(format!(
                "case {}: is_error {} but the vector says {:?}",
                case.id,
                envelope.is_error(),
                expected.is_error
            ));
        } else if read != wanted {
            failures.push(format!("case {}:\n  input  {wanted:?}\n  parsed {read:?}", case.id));
        }
    }
    assert_eq!(checked, ENVELOPE_CASES_IN_FILE);
    assert!(failures.is_empty(), "{} of {checked} vectors parse differently:\n{}", failures.len(), failures.join("\n"));
}

/// The fields a reader gets from an envelope, as plain text.
#[derive(Debug, PartialEq, Eq)]
struct Fields {
    code: String,
    message: String,
    severity: String,
    recovery: Option<String>,
    available_actions: Vec<String>,
    details: Vec<(String, String)>,
    retry_after: Option<u64>,
}

impl Fields {
    fn of_envelope(envelope: &Envelope) -> Fields {
        let error = &envelope.error;
        Fields {
            code: error.code.as_str().to_owned(),
            message: error.message.clone(),
            severity: error.severity.as_str().to_owned(),
            recovery: error.recovery.clone(),
            available_actions: error.available_actions.clone(),
            details: error.details.clone(),
            retry_after: error.retry_after,
        }
    }

    /// What the case's input says, read from its JSON alone (an `error_builder` chain applied
    /// as the reference builder applies it), so this crate's builder is not its own oracle.
    fn of_input(case: &Case) -> Fields {
        let input = &case.input;
        let text = |v: &Value| v.as_str().unwrap_or_else(|| panic!("case {}: {v} is not a string", case.id)).to_owned();
        let list = |v: &Value| v.as_array().unwrap_or_else(|| panic!("case {}: {v} is not a list", case.id)).clone();
        let mut fields = Fields {
            code: text(&input["code"]),
            message: text(&input["message"]),
            severity: "error".to_owned(),
            recovery: None,
            available_actions: Vec::new(),
            details: Vec::new(),
            retry_after: None,
        };
        let mut apply = |method: &str, args: &[Value]| match method {
            "suggest" => fields.recovery = Some(text(&args[0])).filter(|r| !r.is_empty()),
            "actions" => fields.available_actions.extend(args.iter().map(text)),
            "severity" => fields.severity = text(&args[0]),
            "warning" | "critical" => fields.severity = method.to_owned(),
            // A key set again keeps its place and takes the new value.
            "details" => {
                for pair in list(&args[0]) {
                    let (key, value) = (text(&pair[0]), text(&pair[1]));
                    match fields.details.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, v)) => *v = value,
                        None => fields.details.push((key, value)),
                    }
                }
            }
            // Zero seconds means no delay.
            "retry_after" => fields.retry_after = args[0].as_u64().filter(|&s| s > 0),
            other => panic!("case {}: unknown method {other:?}", case.id),
        };
        match case.kind.as_str() {
            "tool_error" => {
                for (key, method) in [
                    ("suggestion", "suggest"),
                    ("severity", "severity"),
                    ("details", "details"),
                    ("retry_after", "retry_after"),
                ] {
                    if let Some(value) = input.get(key).filter(|v| !v.is_null()) {
                        apply(method, std::slice::from_ref(value));
                    }
                }
                if let Some(actions) = input.get("available_actions").filter(|v| !v.is_null()) {
                    apply("actions", &list(actions));
                }
            }
            _ => {
                for call in input.get("chain").map(&list).unwrap_or_default() {
                    let args = call.get("args").map(&list).unwrap_or_default();
                    apply(&text(&call["method"]), &args);
                }
            }
        }
        fields
    }
}
