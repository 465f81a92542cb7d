//! The warning of a call that ran with arguments read from strings: `"200"` sent where an
//! integer is expected, read as `200`; `"false"` where a boolean is, read as `false`.

use serde_json::Value;

use crate::{ErrorCode, FieldPath, Sent, ToolError};

/// One argument read as the number or boolean its string spells.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    /// Where it was sent.
    pub field: FieldPath,
    /// The string sent; `None` for a sensitive field, whose value is never repeated.
    pub sent: Option<String>,
    /// The value the call ran with.
    pub read: Value,
}

impl Conversion {
    /// What kind of value was read: `integer`, `number` or `boolean`.
    fn kind(&self) -> &'static str {
        match &self.read {
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() => "number",
            _ => "integer",
        }
    }

    /// `'200' as the integer 200`, or `as an integer` for a sensitive field.
    fn reading(&self) -> String {
        match &self.sent {
            Some(sent) => format!("{} as the {} {}", Sent::text(sent), self.kind(), self.read),
            None => format!("as {}", article(self.kind())),
        }
    }

    /// `quantity as 200`, or `pin as an integer`.
    fn how_to_send(&self) -> String {
        match &self.sent {
            Some(_) => format!("{} as {}", self.field, self.read),
            None => format!("{} as {}", self.field, article(self.kind())),
        }
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" => "an integer".to_owned(),
        other => format!("a {other}"),
    }
}

/// `a, b and c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The `ARGUMENTS_CONVERTED` warning of a call that ran with `conversions` (at least one): what
/// was read from which string, and how to send it next time.
///
/// ```
/// use mcp_fusion_wire::{Conversion, FieldPath, Severity, converted_warning};
/// use serde_json::json;
///
/// let quantity = Conversion { field: FieldPath::root().key("quantity"), sent: Some("200".into()), read: json!(200) };
/// let warning = converted_warning(&[quantity]);
/// assert_eq!(warning.severity, Severity::Warning);
/// assert_eq!(warning.message, "quantity was sent as the string '200' and read as the integer 200.");
/// assert_eq!(warning.recovery.as_deref(), Some("Next time send quantity as 200, without quotes."));
/// ```
pub fn converted_warning(conversions: &[Conversion]) -> ToolError {
    let message = match conversions {
        [one] => match &one.sent {
            Some(sent) => format!(
                "{} was sent as the string {} and read as the {} {}.",
                one.field,
                Sent::text(sent),
                one.kind(),
                one.read
            ),
            None => format!("{} was sent as a string and read as the {} it spells.", one.field, one.kind()),
        },
        many => {
            let readings: Vec<String> = many.iter().map(|c| format!("{} {}", c.field, c.reading())).collect();
            format!("{} arguments were sent as strings and read as what they spell: {}.", many.len(), listed(&readings))
        }
    };
    let sends: Vec<String> = conversions.iter().map(Conversion::how_to_send).collect();
    let fields: Vec<String> = conversions.iter().map(|c| c.field.to_string()).collect();
    ToolError::new(ErrorCode::arguments_converted(), message)
        .suggest(format!("Next time send {}, without quotes.", listed(&sends)))
        .detail("fields", fields.join(", "))
        .warning()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(name: &str) -> FieldPath {
        FieldPath::root().key(name)
    }

    #[test]
    fn several_conversions_are_told_in_one_warning_and_a_sensitive_value_is_not_repeated() {
        let conversions = [
            Conversion { field: at("quantity"), sent: Some("200".into()), read: json!(200) },
            Conversion {
                field: FieldPath::root().key("items").index(0).key("price"),
                sent: Some("2.5".into()),
                read: json!(2.5),
            },
            Conversion { field: at("paid"), sent: Some("false".into()), read: json!(false) },
            Conversion { field: at("pin"), sent: None, read: json!(1234) },
        ];
        let warning = converted_warning(&conversions);
        assert_eq!(warning.code.as_str(), "ARGUMENTS_CONVERTED");
        assert_eq!(
            warning.message,
            "4 arguments were sent as strings and read as what they spell: quantity '200' as the integer 200, \
             items.0.price '2.5' as the number 2.5, paid 'false' as the boolean false and pin as an integer."
        );
        assert_eq!(
            warning.recovery.as_deref(),
            Some(
                "Next time send quantity as 200, items.0.price as 2.5, paid as false and pin as an integer, without quotes."
            )
        );
        assert!(!format!("{warning:?}").contains("1234"));
        let pin = converted_warning(&conversions[3..]);
        assert_eq!(pin.message, "pin was sent as a string and read as the integer it spells.");
    }
}
