//! What a schema accepts, as one alternative of a union, as what a `not` forbids, or as the
//! items a `contains` counts: said in words, never as "a value".

use serde_json::{Number, Value};

use crate::expectation::{Expectation, quoted_list};
use crate::sent::Sent;

/// What a schema accepts, as much as a sentence can say: its type, bounds and values, the
/// fields of an object, and what its other keywords add.
///
/// ```
/// use mcp_fusion_wire::{Expectation, Fields, Shape};
///
/// let point = Shape { fields: Some(Fields { required: vec!["x".into(), "y".into()], optional: vec![] }), ..Shape::default() };
/// assert_eq!(point.phrase(), "an object with the required fields 'x', 'y'");
/// assert_eq!(Shape::default().phrase(), "any value");
/// assert_eq!(Shape::nothing().phrase(), "no value at all");
/// let odd = Shape { value: Expectation::of_types(vec!["integer".into()]), not: Some(Box::new(Shape { multiple_of: Some(2.into()), ..Shape::default() })), ..Shape::default() };
/// assert_eq!(odd.phrase(), "an integer that is not a multiple of 2");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// No value at all passes (`false`, `not: {}`).
    pub nothing: bool,
    /// Its type, bounds, allowed values, format and pattern.
    pub value: Expectation,
    /// The fields of an object, when it names or requires any.
    pub fields: Option<Fields>,
    /// `multipleOf`.
    pub multiple_of: Option<Number>,
    /// What an item must be, for an array that must contain one (`contains`).
    pub item: Option<Box<Shape>>,
    /// Whether the items must differ (`uniqueItems`).
    pub distinct: bool,
    /// Its own alternatives (`anyOf`, `oneOf`).
    pub either: Vec<Shape>,
    /// What it must not be (`not`).
    pub not: Option<Box<Shape>>,
    /// A keyword it has no words for, with the schema's value for it, when that is all it
    /// says.
    pub rule: Option<(String, Value)>,
}

/// The fields an object shape names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// The fields it requires, in the schema's order.
    pub required: Vec<String>,
    /// The fields it names and does not require.
    pub optional: Vec<String>,
}

impl Shape {
    /// The shape no value has.
    pub fn nothing() -> Shape {
        Shape { nothing: true, ..Shape::default() }
    }

    /// Whether it constrains nothing: any value passes.
    pub fn is_anything(&self) -> bool {
        *self == Shape::default()
    }

    /// The shape in words: `a string of at least 2 characters`, `an object with the required
    /// field 'id'`, `an array with an item that is exactly 1`, `anything but an integer`.
    pub fn phrase(&self) -> String {
        if self.nothing {
            return "no value at all".into();
        }
        let mut words = match &self.fields {
            Some(fields) => fields.phrase(),
            None if self.value == Expectation::default() => String::new(),
            None => self.value.phrase(),
        };
        if let Some(factor) = &self.multiple_of {
            words = joined(&words, &format!("a multiple of {factor}"), "that is");
        }
        if let Some(item) = &self.item {
            let array = if words.is_empty() { "an array" } else { &words };
            words = format!("{array} with an item that is {}", item.phrase());
        }
        if self.distinct {
            let array = if words.is_empty() { "an array" } else { &words };
            words = format!("{array} of distinct items");
        }
        if !self.either.is_empty() {
            let options: Vec<String> = self.either.iter().map(Shape::phrase).collect();
            words = joined(&words, &either(&options), "that is");
        }
        if let Some(not) = &self.not {
            words = if words.is_empty() {
                format!("anything but {}", not.phrase())
            } else {
                format!("{words} that is not {}", not.phrase())
            };
        }
        if words.is_empty()
            && let Some((keyword, rule)) = &self.rule
        {
            return format!("a value that satisfies {}: {}", Sent::text(keyword), Sent::value(rule));
        }
        if words.is_empty() { "any value".into() } else { words }
    }
}

impl Fields {
    /// `an object with fields 'a', 'b'`, `an object with the required field 'id' and the
    /// optional 'name'`.
    pub fn phrase(&self) -> String {
        let plural = |names: &[String]| if names.len() == 1 { "field" } else { "fields" };
        match (self.required.as_slice(), self.optional.as_slice()) {
            ([], optional) => format!("an object with {} {}", plural(optional), quoted_list(optional)),
            (required, []) => format!("an object with the required {} {}", plural(required), quoted_list(required)),
            (required, optional) => format!(
                "an object with the required {} {} and the optional {}",
                plural(required),
                quoted_list(required),
                quoted_list(optional)
            ),
        }
    }
}

/// `b` after `a`, with `link` between; `b` alone when `a` is empty.
fn joined(a: &str, b: &str, link: &str) -> String {
    if a.is_empty() { b.to_owned() } else { format!("{a} {link} {b}") }
}

/// `a string`, `a string or an integer`, `a string, an integer or null`.
pub(crate) fn either(options: &[String]) -> String {
    match options.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => options.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed(t: &str) -> Shape {
        Shape { value: Expectation::of_types(vec![t.into()]), ..Shape::default() }
    }

    #[test]
    fn shapes_in_words() {
        assert_eq!(typed("string").phrase(), "a string");
        assert_eq!(Shape { multiple_of: Some(3.into()), ..Shape::default() }.phrase(), "a multiple of 3");
        assert_eq!(
            Shape { multiple_of: Some(3.into()), ..typed("integer") }.phrase(),
            "an integer that is a multiple of 3"
        );
        assert_eq!(
            Shape { item: Some(Box::new(typed("string"))), ..Shape::default() }.phrase(),
            "an array with an item that is a string"
        );
        assert_eq!(Shape { distinct: true, ..Shape::default() }.phrase(), "an array of distinct items");
        assert_eq!(
            Shape { either: vec![typed("string"), typed("integer")], ..Shape::default() }.phrase(),
            "a string or an integer"
        );
        assert_eq!(
            Shape { not: Some(Box::new(typed("integer"))), ..Shape::default() }.phrase(),
            "anything but an integer"
        );
        assert_eq!(
            Shape { rule: Some(("dependentRequired".into(), json!({"a": ["b"]}))), ..Shape::default() }.phrase(),
            r#"a value that satisfies 'dependentRequired': {"a":["b"]}"#
        );
        let fields = |required: &[&str], optional: &[&str]| {
            Fields {
                required: required.iter().map(|s| s.to_string()).collect(),
                optional: optional.iter().map(|s| s.to_string()).collect(),
            }
            .phrase()
        };
        assert_eq!(fields(&[], &["a", "b"]), "an object with fields 'a', 'b'");
        assert_eq!(fields(&["id"], &["name"]), "an object with the required field 'id' and the optional 'name'");
    }
}
