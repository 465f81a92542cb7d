//! Value-free text: words another party wrote (an upstream's error message) with every value
//! of the call taken out, for servers whose errors must not repeat what a caller sent.

use serde_json::Value;

/// What stands where a value of the call was.
pub const VALUE_LEFT_OUT: &str = "(a value you sent)";

/// `text` with each value of `arguments` taken out: every string of two characters or more,
/// as sent and as an echo quotes it, and every number of two digits or more — where no
/// letter, digit, `_` or `.` touches it, so a value inside a longer word stays. Object keys
/// stay: they are field names. Longer values go first, so a value inside another leaves no
/// piece behind.
///
/// ```
/// use mcp_fusion_wire::{VALUE_LEFT_OUT, values_left_out};
/// use serde_json::json;
///
/// let said = "no customer ana@example.com with balance 2500 (limit 2)";
/// let text = values_left_out(said, &json!({"email": "ana@example.com", "amount": 2500, "limit": 2}));
/// assert_eq!(text, format!("no customer {VALUE_LEFT_OUT} with balance {VALUE_LEFT_OUT} (limit 2)"));
/// ```
pub fn values_left_out(text: &str, arguments: &Value) -> String {
    let mut strings = Vec::new();
    let mut numbers = Vec::new();
    collect(arguments, &mut strings, &mut numbers);
    strings.sort_by_key(|s| std::cmp::Reverse(s.len()));
    strings.dedup();
    let mut out = text.to_owned();
    for value in &strings {
        let echoed = crate::Sent::text(value);
        // An echo cut to its first characters still holds them: take out the quoted form first.
        let escaped = crate::echo(value);
        for form in [echoed.as_str(), value.as_str(), escaped.as_str()] {
            out = replace_standalone(&out, form);
        }
    }
    numbers.sort_by_key(|n| std::cmp::Reverse(n.len()));
    numbers.dedup();
    for number in &numbers {
        out = replace_standalone(&out, number);
    }
    out
}

impl crate::ToolError {
    /// The error with each value of `arguments` taken out of its message, recovery and
    /// details (see [`values_left_out`]); the actions it names stay.
    pub fn without_values(mut self, arguments: &Value) -> crate::ToolError {
        self.message = values_left_out(&self.message, arguments);
        if let Some(recovery) = self.recovery.take() {
            self.recovery = Some(values_left_out(&recovery, arguments));
        }
        for (_, value) in &mut self.details {
            *value = values_left_out(value, arguments);
        }
        self
    }
}

fn collect(value: &Value, strings: &mut Vec<String>, numbers: &mut Vec<String>) {
    match value {
        Value::String(s) if s.chars().count() >= 2 => strings.push(s.clone()),
        Value::Number(n) => {
            let text = n.to_string();
            if text.chars().filter(char::is_ascii_digit).count() >= 2 {
                numbers.push(text);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect(item, strings, numbers)),
        Value::Object(fields) => fields.values().for_each(|field| collect(field, strings, numbers)),
        _ => {}
    }
}

/// `text` with `value` taken out where no letter, digit or `_` touches it, nor a point that
/// continues it (`2500.5`, `a.b`): a point that ends a sentence leaves it standalone.
fn replace_standalone(text: &str, value: &str) -> String {
    if value.is_empty() || !text.contains(value) {
        return text.to_owned();
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // The character next to the value, and the one beyond it on the same side.
    let touches = |next: Option<char>, beyond: Option<char>| match next {
        Some('.') => beyond.is_some_and(word),
        Some(c) => word(c),
        None => false,
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(value) {
        let mut before = rest[..at].chars().rev().chain(out.chars().rev());
        let (next_before, beyond_before) = (before.next(), before.next());
        let mut after = rest[at + value.len()..].chars();
        let (next_after, beyond_after) = (after.next(), after.next());
        out.push_str(&rest[..at]);
        if touches(next_before, beyond_before) || touches(next_after, beyond_after) {
            out.push_str(value);
        } else {
            out.push_str(VALUE_LEFT_OUT);
        }
        rest = &rest[at + value.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_values_escaped_echoes_and_numbers_inside_others_are_handled() {
        let arguments = json!({"card": {"holder": "Zoë\nX", "pin": 4821}, "tags": ["vip-2026"], "n": 7});
        let said = "holder 'Zoë\\nX' pin 4821 tag vip-2026 id 48210 n 7";
        assert_eq!(
            values_left_out(said, &arguments),
            format!("holder {VALUE_LEFT_OUT} pin {VALUE_LEFT_OUT} tag {VALUE_LEFT_OUT} id 48210 n 7")
        );
    }

    #[test]
    fn a_value_that_ends_a_sentence_is_left_out_and_one_inside_a_longer_number_or_name_is_not() {
        let arguments = json!({"id": "SECRET-42", "amount": 25});
        assert_eq!(
            values_left_out("No customer SECRET-42. Paid 25.", &arguments),
            format!("No customer {VALUE_LEFT_OUT}. Paid {VALUE_LEFT_OUT}.")
        );
        assert_eq!(
            values_left_out("Paid 25.5 to SECRET-42.b and 1.25", &arguments),
            "Paid 25.5 to SECRET-42.b and 1.25"
        );
    }
}
