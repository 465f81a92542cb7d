//! What one schema object asks of a value, read off its own keywords; `describe` adds what
//! applies with it.

use mcp_fusion_wire::{Bound, Expectation};
use serde_json::Value;

/// Everything the schema says a value should be.
pub(crate) fn expectation_of(schema: &Value) -> Expectation {
    let schema = unwrap_optional(schema);
    let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_u64);
    let number = |keyword: &str, exclusive: bool| {
        schema.get(keyword).and_then(Value::as_number).map(|limit| Bound::Number { limit: limit.clone(), exclusive })
    };
    let at_least = number("exclusiveMinimum", true)
        .or_else(|| number("minimum", false))
        .or_else(|| bound("minLength").map(Bound::Characters))
        .or_else(|| bound("minItems").map(Bound::Items))
        .or_else(|| bound("minProperties").map(Bound::Properties));
    let at_most = number("exclusiveMaximum", true)
        .or_else(|| number("maximum", false))
        .or_else(|| bound("maxLength").map(Bound::Characters))
        .or_else(|| bound("maxItems").map(Bound::Items))
        .or_else(|| bound("maxProperties").map(Bound::Properties));
    let example = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|examples| examples.first())
        .or_else(|| schema.get("default").filter(|default| !default.is_null()))
        .cloned();
    let mut types = type_names(schema);
    // A format names a kind of string; on numbers schemars writes widths (`uint32`, `double`),
    // which the bounds say better.
    let is_string = types.is_empty() || types.iter().any(|t| t == "string");
    // `null` beside other types is how an optional field is written; it is never what to send.
    if types.len() > 1 {
        types.retain(|t| t != "null");
    }
    Expectation {
        types,
        allowed: allowed_values(schema).unwrap_or_default(),
        format: schema.get("format").and_then(Value::as_str).filter(|_| is_string).map(str::to_owned),
        pattern: schema.get("pattern").and_then(Value::as_str).map(str::to_owned),
        at_least,
        at_most,
        example,
        description: schema
            .get("description")
            .or_else(|| schema.get("title"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        alternatives: Vec::new(),
    }
}

/// The JSON type names a schema accepts.
pub(crate) fn type_names(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The values a `const`, an `enum`, a `oneOf` of `const`s, or a `{"type": "null"}` schema
/// allows, if it is one of those.
pub(crate) fn allowed_values(schema: &Value) -> Option<Vec<Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    if let Some(branches) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        let listed: Option<Vec<Vec<Value>>> = branches.iter().map(constant_values).collect();
        return listed.map(|values| values.concat());
    }
    None
}

/// The values a `const`, an `enum` or a `{"type": "null"}` schema allows.
pub(crate) fn constant_values(schema: &Value) -> Option<Vec<Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    (schema.get("type").and_then(Value::as_str) == Some("null")).then(|| vec![Value::Null])
}

/// `Option<T>` is `anyOf: [T, null]`: what is expected is `T` (with the field's own words
/// when `T` has none).
fn unwrap_optional(schema: &Value) -> &Value {
    let branches = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array);
    match branches
        .map(|b| b.iter().filter(|s| s.get("type").and_then(Value::as_str) != Some("null")).collect::<Vec<_>>())
    {
        Some(non_null) if non_null.len() == 1 && branches.is_some_and(|b| b.len() == 2) => non_null[0],
        _ => schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_a_field_expects() {
        let phrase = |schema: Value| expectation_of(&schema).phrase();
        assert_eq!(phrase(json!({"type": "string", "enum": ["EUR", "USD", "BRL"]})), "one of 'EUR', 'USD', 'BRL'");
        assert_eq!(
            phrase(json!({"type": "string", "format": "email"})),
            "a valid email address, like name@example.com"
        );
        assert_eq!(
            phrase(json!({"type": "string", "pattern": "^inv_[a-z0-9_]+$", "examples": ["inv_2026_0001"]})),
            "a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_2026_0001'"
        );
        assert_eq!(
            phrase(
                json!({"type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 100, "description": "Page size."})
            ),
            "an integer from 1 to 100: page size"
        );
        assert_eq!(
            phrase(json!({"anyOf": [{"type": "string", "enum": ["open", "paid"]}, {"type": "null"}]})),
            "one of 'open', 'paid'"
        );
        assert_eq!(phrase(json!({"oneOf": [{"const": "a", "description": "A"}, {"const": "b"}]})), "one of 'a', 'b'");
        assert_eq!(
            phrase(json!({"type": "string", "default": "x", "minLength": 1})),
            "a string of at least 1 character, like 'x'"
        );
        assert_eq!(phrase(json!({})), "any value");
    }
}
