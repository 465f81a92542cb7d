//! What the caller sent, as a sentence echoes it.

use std::fmt;
use std::io;

use serde_json::Value;

use crate::echo::{Style, render, render_within};

/// What the caller sent, as the sentence echoes it: `'text'`, `42`, `true`, `null`,
/// `array(3)`, compact JSON for objects, `(missing)`, or `(redacted)` for sensitive fields.
///
/// Strings and objects go through [`echo`](crate::echo): cut to 47 characters plus `...` when
/// longer than 50, with control and invisible characters visibly escaped. Rendering reads at
/// most a bounded prefix of the value, so echoing a 10 MB string costs no more than echoing a
/// short one.
///
/// ```
/// use mcp_fusion_wire::Sent;
/// use serde_json::json;
///
/// assert_eq!(Sent::value(&json!("not-an-email")).as_str(), "'not-an-email'");
/// assert_eq!(Sent::value(&json!("line\nbreak")).as_str(), r"'line\nbreak'");
/// assert_eq!(Sent::value(&json!([1, 2, 3])).as_str(), "array(3)");
/// assert_eq!(Sent::value(&json!({"a": 1})).as_str(), r#"{"a":1}"#);
/// assert_eq!(Sent::value(&json!("é".repeat(60))).as_str(), format!("'{}...'", "é".repeat(47)));
/// assert_eq!(Sent::text("billing.pay").as_str(), "'billing.pay'");
/// assert_eq!(Sent::missing().as_str(), "(missing)");
/// assert_eq!(Sent::redacted().as_str(), "(redacted)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sent(String);

impl Sent {
    /// Echoes a JSON value.
    pub fn value(value: &Value) -> Sent {
        Sent(match value {
            Value::String(s) => render(s, Style::Quoted),
            Value::Array(items) => format!("array({})", items.len()),
            Value::Object(_) => json(value),
            other => other.to_string(),
        })
    }

    /// Echoes a name or a text the caller sent (a tool name, an action name, a key).
    pub fn text(text: &str) -> Sent {
        Sent(render(text, Style::Quoted))
    }

    /// Echoes what another server said (an upstream's error message): escaped as every echo
    /// is, but kept to 300 characters, since its words are what the caller acts on
    /// (`Invalid time format. Expected HH:MM`).
    ///
    /// ```
    /// use mcp_fusion_wire::Sent;
    ///
    /// let said = format!("ENOENT: no such file or directory, open '{}'", "a/".repeat(200));
    /// assert_eq!(Sent::words(&said).as_str().chars().count(), 302);
    /// assert_eq!(Sent::words("bad\nRecovery: x").as_str(), r"'bad\nRecovery: x'");
    /// ```
    pub fn words(text: &str) -> Sent {
        Sent(render_within(text, Style::Quoted, 300))
    }

    /// The field was absent.
    pub fn missing() -> Sent {
        Sent("(missing)".to_owned())
    }

    /// What kind of value was sent, never the value: `a string`, `a number`, `a boolean`,
    /// `null`, `array(3)`, `an object` — for errors that repeat no value the caller sent.
    ///
    /// ```
    /// use mcp_fusion_wire::Sent;
    /// use serde_json::json;
    ///
    /// assert_eq!(Sent::kind(&json!("ana@example.com")).as_str(), "a string");
    /// assert_eq!(Sent::kind(&json!([1, 2])).as_str(), "array(2)");
    /// ```
    pub fn kind(value: &Value) -> Sent {
        Sent(match value {
            Value::Array(items) => format!("array({})", items.len()),
            other => crate::value_kind(other).to_owned(),
        })
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

/// Compact JSON of any `value`, cut and escaped as an echo is.
pub(crate) fn json(value: &Value) -> String {
    render(&bounded_json(value), Style::Json)
}

/// Compact JSON of `value`, stopping once more than enough characters for the cut are written.
fn bounded_json(value: &Value) -> String {
    // Four bytes a character at most: this many bytes always hold more than 50 characters.
    const LIMIT: usize = 51 * 4;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sent_renders_each_json_kind() {
        assert_eq!(Sent::value(&json!(42)).as_str(), "42");
        assert_eq!(Sent::value(&json!(1.5)).as_str(), "1.5");
        assert_eq!(Sent::value(&json!(true)).as_str(), "true");
        assert_eq!(Sent::value(&json!(null)).as_str(), "null");
        assert_eq!(Sent::value(&json!([])).as_str(), "array(0)");
        assert_eq!(Sent::value(&json!("it's")).as_str(), r"'it\'s'");
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
        // JSON escapes controls itself; invisible characters are escaped on top.
        assert_eq!(Sent::value(&json!({"a": "x\n\u{202e}"})).as_str(), r#"{"a":"x\n\u{202e}"}"#);
    }

    #[test]
    fn sent_of_a_huge_object_reads_only_a_prefix() {
        let big = json!({"blob": "z".repeat(10 * 1024 * 1024)});
        assert_eq!(Sent::value(&big).as_str().chars().count(), 50);
    }
}
