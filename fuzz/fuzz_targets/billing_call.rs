//! `tools/call` of the demo's `billing` tool, in process over a real SQLite file, with any
//! arguments: JSON text as sent (seeds are real calls), or objects drawn from the bytes that
//! lean on the demo's action and field names.
//!
//! Every call ends in a result with structured content, or in an error whose text is an
//! envelope (`tool_error` or `validation_error`, never bare text). No error or warning text
//! repeats a string the call sent past the 50-character echo cut (its first 50 characters,
//! raw or XML-escaped), and none repeats the value of a `writeOnly` field of the tool's
//! schema. The demo marks no field sensitive today; the check follows its schema if it does.

#![no_main]

use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use billing_server::{Options, Store, server};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::FusionServer;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{EnvelopeKind, Sent, escape_attr, escape_text, parse};
use mcp_fusion_fuzz::{object, strings, value};
use serde_json::{Map, Value, json};

const ACTIONS: &[&str] = &["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice"];
const FIELDS: &[&str] = &[
    "action",
    "id",
    "amount_cents",
    "currency",
    "customer_email",
    "due_date",
    "status",
    "limit",
    "cursor",
    "reason",
    "idempotency_key",
];

/// Longest echo the envelope keeps whole: a longer string is cut to 47 characters and `...`.
const ECHO_CUT: usize = 50;

struct Demo {
    server: FusionServer,
    write_only: Vec<String>,
    // Holds the database file for as long as the process runs.
    _dir: tempfile::TempDir,
}

fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("billing.db")).unwrap();
        let server = server(store, &Options::default()).unwrap();
        let mut write_only = Vec::new();
        for tool in server.tools() {
            write_only_names(&Value::Object((*tool.input_schema).clone()), &mut write_only);
        }
        Demo { server, write_only, _dir: dir }
    })
}

/// Names of the properties anywhere in `schema` that say `writeOnly: true`.
fn write_only_names(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, property) in properties {
                    if property.get("writeOnly") == Some(&json!(true)) {
                        out.push(name.clone());
                    }
                }
            }
            map.values().for_each(|v| write_only_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| write_only_names(v, out)),
        _ => {}
    }
}

/// Values sent under any of `names`, at any depth.
fn values_named(arguments: &Value, names: &[String], out: &mut Vec<Value>) {
    match arguments {
        Value::Object(map) => {
            for (key, v) in map {
                if names.contains(key) {
                    out.push(v.clone());
                }
                values_named(v, names, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| values_named(v, names, out)),
        _ => {}
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
}

fn arguments(u: &mut Unstructured<'_>) -> Result<Option<Map<String, Value>>> {
    if u.ratio(1, 16)? {
        return Ok(None);
    }
    let mut arguments = object(u, FIELDS, 1)?;
    if u.ratio(7, 8)? {
        let action = if u.ratio(7, 8)? { json!(u.choose(ACTIONS)?) } else { value(u, FIELDS, 3)? };
        arguments.insert("action".into(), action);
    }
    Ok(Some(arguments))
}

fn texts(result: &rmcp::model::CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect()
}

/// The guidance texts of the call with `sent`, every occurrence of `string` in it (key or
/// value) replaced by a neutral one.
fn guidance_without(sent: &Value, string: &str) -> Vec<String> {
    fn replaced(value: &Value, string: &str) -> Value {
        match value {
            Value::String(s) if s == string => json!("x"),
            Value::Object(map) => Value::Object(
                map.iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        (if k == string { format!("replaced_{i}") } else { k.clone() }, replaced(v, string))
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| replaced(v, string)).collect()),
            other => other.clone(),
        }
    }
    let Value::Object(arguments) = replaced(sent, string) else { unreachable!("the arguments are an object") };
    let result = runtime().block_on(demo().server.call("billing", Some(arguments), RequestInfo::default()));
    texts(&result).into_iter().map(str::to_owned).collect()
}

fuzz_target!(|data: &[u8]| {
    let arguments = match serde_json::from_slice::<Value>(data) {
        Ok(Value::Object(map)) => Some(map),
        Ok(_) => None,
        Err(_) => match arguments(&mut Unstructured::new(data)) {
            Ok(arguments) => arguments,
            Err(_) => return,
        },
    };
    let demo = demo();
    let result = runtime().block_on(demo.server.call("billing", arguments.clone(), RequestInfo::default()));
    let texts = texts(&result);

    // What the model reads as guidance: the error, or the warnings after a result.
    let guidance: Vec<&str> = if result.is_error == Some(true) {
        let text = texts.first().copied().unwrap_or_else(|| panic!("an error without text: {result:?}"));
        let kind = parse(text).kind;
        assert!(matches!(kind, EnvelopeKind::ToolError | EnvelopeKind::ValidationError), "not an envelope: {text}");
        texts
    } else {
        assert!(result.structured_content.is_some(), "a result without structured content: {result:?}");
        for warning in texts.iter().skip(1) {
            assert_eq!(parse(warning).kind, EnvelopeKind::ToolError, "a warning that is no envelope: {warning}");
        }
        texts.into_iter().skip(1).collect()
    };

    let sent = Value::Object(arguments.unwrap_or_default());
    let mut long = Vec::new();
    strings(&sent, &mut long);
    // What the envelopes may show of each string sent: its echo (whole when short, cut when
    // long), raw or escaped for XML text or attributes.
    let echoes: Vec<String> = long
        .iter()
        .flat_map(|sent| {
            let echo = Sent::text(sent).as_str().to_owned();
            let whole = if sent.chars().count() <= ECHO_CUT { sent.clone() } else { String::new() };
            [escape_text(&echo), escape_attr(&echo), whole, echo]
        })
        .filter(|echo| !echo.is_empty())
        .collect();
    for string in long.iter().filter(|s| s.chars().count() > ECHO_CUT) {
        // A cut echo is 47 characters and `...`: the first 50 of a value that has `...` there
        // look the same, so such a value proves nothing.
        let head: String = string.chars().take(ECHO_CUT).collect();
        if head.chars().skip(ECHO_CUT - 3).eq("...".chars()) {
            continue;
        }
        let forms = [escape_text(&head), escape_attr(&head), head];
        for text in &guidance {
            // Nor does a form of the head that an allowed echo holds: a short value sent on
            // its own (ten NULs come back as the text `\u{0}` ten times, which is also how a
            // long value of that very text begins), or the escaped echo of another key (`"`
            // comes back as `&quot;`, the raw head of a key that was sent as `&quot;`).
            for form in forms.iter().filter(|form| !echoes.iter().any(|echo| echo.contains(form.as_str()))) {
                // Nor a form the envelope holds without this string: the fuzzer writes values
                // that begin like the envelope's own text about another key.
                assert!(
                    !text.contains(form.as_str())
                        || guidance_without(&sent, string).iter().any(|t| t.contains(form.as_str())),
                    "echoed past the cut: {form:?} in\n{text}"
                );
            }
        }
    }
    let mut secrets = Vec::new();
    values_named(&sent, &demo.write_only, &mut secrets);
    for secret in secrets {
        let shown = match &secret {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // Shorter values are words any envelope may hold ("EUR", "1").
        if shown.chars().count() < 6 {
            continue;
        }
        for text in &guidance {
            assert!(!text.contains(&shown), "a writeOnly value in an envelope: {shown:?} in\n{text}");
        }
    }
});
