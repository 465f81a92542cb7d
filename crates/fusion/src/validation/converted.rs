//! Forgiving scalars: a string that spells a number or a boolean, sent where the schema expects
//! that number or boolean, read as what it spells — only when the reading loses nothing and the
//! whole call is valid once read. Anything else stays a refusal with its sentence.

use mcp_fusion_wire::{Conversion, FieldPath};
use serde_json::{Number, Value};

use super::retyped::value_at_mut;
use super::{Checker, instance_path, value_at_path};

/// More significant digits than this, and a decimal may not survive as a 64-bit float.
const EXACT_DIGITS: usize = 15;

impl Checker {
    /// `arguments` with every string the validator refused read as the number or boolean it
    /// spells, and what was read — when every refusal is such a string and the arguments so
    /// read are valid. `None` leaves the call to be refused as sent.
    pub(crate) fn converted(&self, arguments: &Value) -> Option<(Value, Vec<Conversion>)> {
        let paths: Vec<FieldPath> =
            self.validator.iter_errors(arguments).map(|error| instance_path(&error, arguments)).collect();
        let mut read = arguments.clone();
        let mut conversions: Vec<Conversion> = Vec::new();
        for path in paths {
            if conversions.iter().any(|done| done.field == path) {
                continue;
            }
            let Some(Value::String(text)) = value_at_path(arguments, &path) else {
                return None;
            };
            let scalar = spelled_scalar(text)?;
            *value_at_mut(&mut read, &path)? = scalar.clone();
            let sent = (!self.hides_value(&path)).then(|| text.clone());
            conversions.push(Conversion { field: path, sent, read: scalar });
        }
        let valid = self.validator.is_valid(&read) && self.beyond_exact_integers(&read).is_empty();
        (!conversions.is_empty() && valid).then_some((read, conversions))
    }
}

/// The number or boolean `text` spells exactly: `true`, `false`, or a JSON number literal
/// (no sign but `-`, no leading zeros, no spaces) that a 64-bit integer or float holds
/// without loss.
fn spelled_scalar(text: &str) -> Option<Value> {
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if text.trim() != text {
        return None;
    }
    let number: Number = serde_json::from_str(text).ok()?;
    let (mantissa, _) = text.split_once(['e', 'E']).unwrap_or((text, ""));
    if !mantissa.contains('.') && mantissa.len() == text.len() {
        // Written as an integer: held exactly, or not read.
        return (!number.is_f64()).then_some(Value::Number(number));
    }
    let digits = mantissa.trim_start_matches('-').replace('.', "");
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    let float = number.as_f64()?;
    let underflowed = float == 0.0 && !significant.is_empty();
    (significant.len() <= EXACT_DIGITS && float.is_finite() && !underflowed).then_some(Value::Number(number))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checker(schema: Value) -> Checker {
        Checker::new(schema.as_object().unwrap(), Vec::new(), super::super::Formats::Asserted).unwrap()
    }

    #[test]
    fn a_nullable_field_is_read_and_a_union_of_objects_is_left_refused() {
        let nullable = checker(json!({"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}));
        let (read, conversions) = nullable.converted(&json!({"n": "7"})).expect("read");
        assert_eq!((read, conversions.len()), (json!({"n": 7}), 1));
        let pets = checker(json!({"properties": {"pet": {"oneOf": [
            {"properties": {"kind": {"const": "cat"}, "meows": {"type": "boolean"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "dog"}, "barks": {"type": "boolean"}}, "required": ["kind"]},
        ]}}}));
        assert_eq!(pets.converted(&json!({"pet": {"kind": "cat", "meows": "true"}})), None);
        let open = checker(json!({"properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}));
        assert_eq!(open.converted(&json!({"n": 1, "s": "2"})), None, "a valid call has nothing to read");
    }

    #[test]
    fn only_exact_spellings_are_read() {
        assert_eq!(spelled_scalar("200"), Some(json!(200)));
        assert_eq!(spelled_scalar("-3"), Some(json!(-3)));
        assert_eq!(spelled_scalar("18446744073709551615"), Some(json!(u64::MAX)));
        assert_eq!(spelled_scalar("2.5"), Some(json!(2.5)));
        assert_eq!(spelled_scalar("1e3"), Some(json!(1000.0)));
        assert_eq!(spelled_scalar("0.000"), Some(json!(0.0)));
        assert_eq!(spelled_scalar("true"), Some(json!(true)));
        assert_eq!(spelled_scalar("false"), Some(json!(false)));
        for refused in [
            "12abc",
            "1e400",
            "1e-400",
            "yes",
            "True",
            "",
            " 200",
            "200 ",
            "+1",
            "007",
            ".5",
            "5.",
            "0x10",
            "NaN",
            "Infinity",
            "18446744073709551616",
            "0.12345678901234567",
            "null",
            "[1]",
        ] {
            assert_eq!(spelled_scalar(refused), None, "{refused:?}");
        }
    }
}
