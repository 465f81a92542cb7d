//! The parse vectors: envelope texts and the fields this crate's parser reads from them, one
//! case a line in `vectors/parse-vectors.jsonl`. The view's parser (`FusionApp.parse` in
//! `crates/fusion/src/apps/fusion-app.js`) is held to the same file by
//! `tests/apps/envelope.test.mjs`, so the two readers of an envelope agree on every case.
//!
//! The file is written by [`generate`], and a test fails while it differs from what
//! [`generate`] writes now; `UPDATE_VECTORS=1 cargo test -p mcp-fusion-wire --test
//! parse_vectors` rewrites it. Each case is generated with the value its `<retry_after>` states
//! (worked out from the number written, not by the parser), and generation stops if the parser
//! reads another, so the file never records a parser bug as expected.
//!
//! `retry_after` is the integer's decimal digits as a JSON string: a JSON number above 2^53
//! does not survive a JavaScript `JSON.parse`, which is how the two parsers came to disagree.

use mcp_fusion_wire::{Envelope, EnvelopeKind, Severity, ToolError, parse};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

/// What `tests/apps/envelope.test.mjs` counts too.
const CASES_IN_FILE: usize = 263;

const REGENERATE: &str = "UPDATE_VECTORS=1 cargo test -p mcp-fusion-wire --test parse_vectors";

/// The file's text, once rewritten from [`generate`] when `UPDATE_VECTORS=1` (before either
/// test reads it).
fn file() -> &'static (PathBuf, String) {
    static FILE: OnceLock<(PathBuf, String)> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/parse-vectors.jsonl");
        if std::env::var_os("UPDATE_VECTORS").is_some_and(|v| v == "1") {
            std::fs::write(&path, generate()).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}; write it with {REGENERATE}", path.display()));
        (path, text)
    })
}

#[test]
fn the_file_is_what_the_generator_writes() {
    let (path, found) = file();
    let wanted = generate();
    if *found != wanted {
        let (found, wanted): (Vec<_>, Vec<_>) = (found.lines().collect(), wanted.lines().collect());
        let at = found.iter().zip(&wanted).take_while(|(f, w)| f == w).count();
        panic!(
            "{} is stale ({} lines, the generator writes {}; first difference on line {}):\n  file      {}\n  generated {}\nrewrite it with {REGENERATE}",
            path.display(),
            found.len(),
            wanted.len(),
            at + 1,
            found.get(at).unwrap_or(&"(end of file)"),
            wanted.get(at).unwrap_or(&"(end of file)"),
        );
    }
}

#[test]
fn every_vector_parses_to_its_expected_fields() {
    let (path, text) = file();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (number, line) in text.lines().enumerate() {
        let case: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", number + 1));
        let id = case["id"].as_str().unwrap_or_else(|| panic!("line {}: no id", number + 1));
        let envelope_text = case["text"].as_str().unwrap_or_else(|| panic!("case {id}: no text"));
        let read = fields(&parse(envelope_text));
        checked += 1;
        if read != case["expected"] {
            failures.push(format!("case {id}:\n  expected {}\n  parsed   {read}", case["expected"]));
        }
    }
    assert_eq!(checked, CASES_IN_FILE, "{} should hold {CASES_IN_FILE} cases", path.display());
    assert!(failures.is_empty(), "{} of {checked} vectors parse differently:\n{}", failures.len(), failures.join("\n"));
}

/// The fields both parsers expose, as the file records them.
fn fields(envelope: &Envelope) -> Value {
    let error = &envelope.error;
    let kind = match envelope.kind {
        EnvelopeKind::ToolError => "tool_error",
        EnvelopeKind::ValidationError => "validation_error",
        EnvelopeKind::Text => "text",
    };
    json!({
        "kind": kind,
        "code": error.code.as_str(),
        "severity": error.severity.as_str(),
        "message": error.message,
        "recovery": error.recovery,
        "available_actions": error.available_actions,
        "details": error.details.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "retry_after": error.retry_after.map(|s| s.to_string()),
        "is_error": envelope.is_error(),
    })
}

struct Generator {
    lines: Vec<String>,
}

impl Generator {
    /// Adds a case whose `<retry_after>` states `seconds` (`None`: no delay).
    fn case(&mut self, id: String, text: String, seconds: Option<u128>) {
        let envelope = parse(&text);
        // A u128 stands for a number written past u64::MAX, which reads as no delay.
        let stated = seconds.filter(|&s| s > 0).and_then(|s| u64::try_from(s).ok());
        assert_eq!(envelope.error.retry_after, stated, "case {id}: the parser reads {text:?} differently");
        let line = json!({ "id": id, "text": text, "expected": fields(&envelope) });
        self.lines.push(line.to_string());
    }

    /// A case with `body` as the text of a rate-limited error's `<retry_after>`.
    fn body(&mut self, id: &str, body: &str, seconds: Option<u128>) {
        let text = format!(
            "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>Too many calls.</message>\n\
             <retry_after>{body}</retry_after>\n</tool_error>"
        );
        self.case(format!("retry_after/{id}"), text, seconds);
    }
}

/// SplitMix64: the generated batch is the same on every run and every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

const TWO_53: u64 = 1 << 53;

fn generate() -> String {
    let mut g = Generator { lines: Vec::new() };
    written_by_hand(&mut g);
    generated_batch(&mut g);
    assert_eq!(g.lines.len(), CASES_IN_FILE, "the generator writes {} cases", g.lines.len());
    g.lines.iter().map(|l| format!("{l}\n")).collect()
}

fn written_by_hand(g: &mut Generator) {
    let max = u128::from(u64::MAX);
    let safe = u128::from(TWO_53);
    for (id, body, seconds) in [
        ("zero", "0 seconds", None),
        ("zero_bare", "0", None),
        ("one", "1 seconds", Some(1)),
        ("one_bare", "1", Some(1)),
        ("thirty", "30 seconds", Some(30)),
        ("thirty_s", "30s", Some(30)),
        ("two_53_minus_1", "9007199254740991 seconds", Some(safe - 1)),
        ("two_53", "9007199254740992 seconds", Some(safe)),
        ("two_53_plus_1", "9007199254740993 seconds", Some(safe + 1)),
        ("two_53_plus_1_bare", "9007199254740993", Some(safe + 1)),
        ("two_53_plus_2", "9007199254740994 seconds", Some(safe + 2)),
        ("two_53_plus_3", "9007199254740995 seconds", Some(safe + 3)),
        ("two_63", "9223372036854775808 seconds", Some(1 << 63)),
        ("u64_max_minus_1", "18446744073709551614 seconds", Some(max - 1)),
        ("u64_max", "18446744073709551615 seconds", Some(max)),
        ("u64_max_bare", "18446744073709551615", Some(max)),
        ("u64_max_plus_1", "18446744073709551616 seconds", Some(max + 1)),
        ("u64_max_times_10", "184467440737095516150 seconds", Some(max * 10)),
        ("twenty_three_digits", "99999999999999999999999 seconds", Some(99_999_999_999_999_999_999_999)),
        ("forty_digits", "1234567890123456789012345678901234567890", None),
        ("leading_zeros", "007 seconds", Some(7)),
        ("leading_zeros_only", "000 seconds", None),
        ("leading_zeros_two_53_plus_1", "00000000000000000000009007199254740993 seconds", Some(safe + 1)),
        ("leading_zeros_u64_max", "0000000000000000000000000018446744073709551615", Some(max)),
        ("leading_zeros_u64_max_plus_1", "000000000000000018446744073709551616", Some(max + 1)),
        ("empty", "", None),
        ("junk", "soon", None),
        ("junk_before_number", "in 30 seconds", None),
        ("letters_then_digits", "abc123", None),
        ("decimal", "3.5 seconds", Some(3)),
        ("decimal_big", "9007199254740993.5 seconds", Some(safe + 1)),
        ("exponent", "1e3", Some(1)),
        ("hex", "0x10", None),
        ("underscore", "1_000", Some(1)),
        ("thousands_comma", "1,000", Some(1)),
        ("negative", "-5 seconds", None),
        ("negative_big", "-9007199254740993", None),
        ("negative_zero", "-0", None),
        ("plus_sign", "+5", None),
        ("space_inside", "5 0", Some(5)),
        ("space_before", " 5s", Some(5)),
        ("space_before_big", "  9007199254740993 seconds", Some(safe + 1)),
        ("newline_around", "\n  42 seconds\n", Some(42)),
        ("newline_around_u64_max", "\n  18446744073709551615\n", Some(max)),
        ("tab_before", "\t7", Some(7)),
        ("space_after_only", "12   ", Some(12)),
        // Rust's trim_start: Unicode White_Space, which holds U+0085 but not U+FEFF or U+200B.
        ("no_break_space", "\u{a0}8", Some(8)),
        ("ideographic_space", "\u{3000}18014398509481985", Some(2 * safe + 1)),
        ("next_line", "\u{85}10", Some(10)),
        ("byte_order_mark", "\u{feff}11", None),
        ("zero_width_space", "\u{200b}12", None),
        ("arabic_indic_digit", "\u{663}", None),
        ("fullwidth_digits", "\u{ff11}\u{ff12}", None),
        // The body is read as written: an entity is no digit.
        ("entity_digit", "&#49;2", None),
    ] {
        g.body(id, body, seconds);
    }

    let head = "<tool_error code=\"SERVER_BUSY\">\n<message>Busy.</message>\n";
    for (id, tail, seconds) in [
        ("self_closing", "<retry_after/>\n</tool_error>", None),
        (
            "first_wins_big",
            "<retry_after>9007199254740993 seconds</retry_after>\n<retry_after>2 seconds</retry_after>\n</tool_error>",
            Some(u128::from(TWO_53) + 1),
        ),
        (
            "first_wins_junk",
            "<retry_after>soon</retry_after>\n<retry_after>9007199254740993</retry_after>\n</tool_error>",
            None,
        ),
        ("unclosed_root", "<retry_after>18446744073709551615 seconds</retry_after>\n", Some(u128::from(u64::MAX))),
        ("unclosed_element", "<retry_after>9007199254740993 seconds", None),
    ] {
        g.case(format!("retry_after/{id}"), format!("{head}{tail}"), seconds);
    }

    // The other fields beside a large delay: a warning, a critical error, a validation error.
    let big = TWO_53 + 1;
    let warning = ToolError::new("HANDOFF_CONNECTING", "Connecting.").warning().retry_after(big);
    g.case("retry_after/warning".into(), warning.render(), Some(big.into()));
    let critical = ToolError::new("INTERNAL_ERROR", "Down & out <now>.")
        .critical()
        .suggest("Wait, then retry.")
        .actions(["ops.status", "ops.retry"])
        .details([("region", "eu-west-1"), ("retry_at", "18446744073709551615")])
        .retry_after(u64::MAX);
    g.case("retry_after/critical_with_everything".into(), critical.render(), Some(u64::MAX.into()));
    let validation = "<validation_error action=\"billing.create\">\n<field name=\"amount\">must be above 0.</field>\n\
                      <retry_after>9007199254740993 seconds</retry_after>\n</validation_error>";
    g.case("retry_after/validation_error".into(), validation.into(), Some(u128::from(TWO_53) + 1));
    let text = "Upstream said: <retry_after>9007199254740993</retry_after>";
    g.case("retry_after/not_an_envelope".into(), text.into(), None);
}

/// Numbers spread over every bit length, then many above 2^53, near its edges, and past u64::MAX,
/// in the shapes servers write them.
fn generated_batch(g: &mut Generator) {
    let mut rng = SplitMix(0x5e_ed0f_2053);
    let mut numbers: Vec<u128> = Vec::new();
    for bits in 1..=64u32 {
        let top = 1u64 << (bits - 1);
        numbers.push(u128::from(top | (rng.next() & (top - 1))));
    }
    for _ in 0..100 {
        numbers.push(u128::from(TWO_53 + rng.next() % (u64::MAX - TWO_53 + 1)));
    }
    for k in 4..=13 {
        numbers.push(u128::from(TWO_53 + k));
    }
    for k in 2..=11 {
        numbers.push(u128::from(u64::MAX - k));
    }
    for _ in 0..8 {
        numbers.push(u128::from(u64::MAX) + 1 + u128::from(rng.next()));
    }
    for exponent in 20..28 {
        numbers.push(10u128.pow(exponent) + u128::from(rng.next() % 1000));
    }

    const CODES: [&str; 4] = ["RATE_LIMITED", "SERVER_BUSY", "HANDOFF_UPSTREAM_UNAVAILABLE", "TIMEOUT"];
    const SEVERITIES: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Critical];
    for (i, &n) in numbers.iter().enumerate() {
        let id = format!("generated/{i:03}");
        match (i % 4, u64::try_from(n)) {
            // As this crate renders it, with other fields around it.
            (0, Ok(seconds)) => {
                let mut error = ToolError::new(CODES[i / 4 % CODES.len()], format!("Call {i} refused."))
                    .severity(SEVERITIES[i % SEVERITIES.len()].clone())
                    .retry_after(seconds);
                if i % 3 == 0 {
                    error = error.suggest("Retry later.").details([("limit", seconds.to_string())]);
                }
                if i % 5 == 0 {
                    error = error.actions(["billing.list", "billing.get"]);
                }
                g.case(id, error.render(), Some(n));
            }
            (form, _) => {
                let body = match form {
                    1 => format!("{n}"),
                    2 => format!(" {n}s"),
                    3 => format!("0{n} seconds (rate limit)"),
                    _ => format!("\n  {n} seconds\n"),
                };
                let text = format!(
                    "<tool_error code=\"{}\">\n<message>Call {i} refused.</message>\n<retry_after>{body}</retry_after>\n</tool_error>",
                    CODES[i % CODES.len()]
                );
                g.case(id, text, Some(n));
            }
        }
    }
}
