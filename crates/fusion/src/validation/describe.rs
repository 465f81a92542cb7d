//! What the schema at a place asks of a value, read off it and off everything that applies
//! with it (`$ref`, `allOf`): the `Expected …` of a missing field or a wrong type, and the
//! shapes a union, a `not` or a `contains` names. Never "a value": a schema that constrains
//! nothing is "any value", one that accepts nothing is said to, and a rule without words of
//! its own is named with what the schema says for it.

use mcp_fusion_wire::{Bound, Expectation, Fields, Shape};
use serde_json::Value;

use super::document::Document;
use super::expectation::expectation_of;

/// The schemas that all apply to the value at `pointer`: itself, what its `$ref` leads to,
/// its `allOf` branches (alternatives — `anyOf`, `oneOf` — are not all).
pub(super) fn conjunction(document: &Document, pointer: &str) -> Vec<String> {
    document
        .members_where(pointer, &mut |_, child| child.keyword == "allOf")
        .unwrap_or_else(|| vec![pointer.to_owned()])
}

/// The branch of `Option<T>` (`anyOf` / `oneOf` of `T` and `{"type": "null"}`) that is `T`.
pub(super) fn optional_branch(schema: &Value, pointer: &str) -> Option<String> {
    let (keyword, branches) = ["anyOf", "oneOf"].iter().find_map(|k| Some((*k, schema.get(*k)?.as_array()?)))?;
    let [first, second] = branches.as_slice() else { return None };
    let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    match (is_null(first), is_null(second)) {
        (false, true) => Some(format!("{pointer}/{keyword}/0")),
        (true, false) => Some(format!("{pointer}/{keyword}/1")),
        _ => None,
    }
}

/// Everything the schemas applying at `pointer` say a value should be; through `Option<T>`,
/// `T`'s (with the field's own words when `T` has none).
pub(super) fn expectation(document: &Document, pointer: &str) -> Expectation {
    expectation_within(document, pointer, true)
}

/// [`expectation`], with a union's branches said as shapes, or not (a shape says its
/// alternatives itself).
fn expectation_within(document: &Document, pointer: &str, branches: bool) -> Expectation {
    let Some(schema) = document.at(pointer) else { return Expectation::default() };
    if let Some(inner) = optional_branch(schema, pointer) {
        let mut expected = expectation_within(document, &inner, branches);
        let own = |keyword: &str| schema.get(keyword).and_then(Value::as_str).map(str::to_owned);
        expected.description = own("description").or_else(|| own("title")).or(expected.description);
        expected.example = expectation_of(schema).example.or(expected.example);
        return expected;
    }
    let mut merged = Expectation::default();
    let mut object = false;
    for member in conjunction(document, pointer) {
        let Some(schema) = document.at(&member) else { continue };
        object |= schema.get("properties").is_some() || schema.get("required").is_some();
        merge(&mut merged, expectation_of(schema));
    }
    if merged.types.is_empty() {
        let bounds = [&merged.at_least, &merged.at_most];
        let implied = if object || bounds.iter().any(|b| matches!(b, Some(Bound::Properties(_)))) {
            Some("object")
        } else if bounds.iter().any(|b| matches!(b, Some(Bound::Characters(_)))) {
            Some("string")
        } else if bounds.iter().any(|b| matches!(b, Some(Bound::Items(_)))) {
            Some("array")
        } else {
            None
        };
        merged.types.extend(implied.map(str::to_owned));
    }
    // A union names no type of its own: its branches say what to send, a `null` among others
    // left out (it is how an optional field is written, never what to send).
    let unnamed = merged.types.is_empty() && merged.allowed.is_empty() && merged.format.is_none();
    if branches && unnamed && merged.pattern.is_none() {
        merged.alternatives = union_branches(document, pointer)
            .into_iter()
            .map(|branch| shape_within(document, &branch, 1))
            .filter(|branch| !branch.is_anything())
            .collect();
        let is_null = |branch: &Shape| branch.value.types == ["null"] && branch.fields.is_none();
        if merged.alternatives.iter().any(|branch| !is_null(branch)) {
            merged.alternatives.retain(|branch| !is_null(branch));
        }
    }
    merged
}

/// The pointers of the branches of the first union (`anyOf`, `oneOf`) among the schemas that
/// apply at `pointer`.
fn union_branches(document: &Document, pointer: &str) -> Vec<String> {
    conjunction(document, pointer)
        .into_iter()
        .find_map(|member| {
            let schema = document.at(&member)?;
            let (keyword, branches) =
                ["anyOf", "oneOf"].iter().find_map(|k| Some((*k, schema.get(*k)?.as_array()?)))?;
            Some((0..branches.len()).map(|i| format!("{member}/{keyword}/{i}")).collect())
        })
        .unwrap_or_default()
}

/// `into` with what `more` says that `into` does not; types both give are narrowed to those
/// both take (`integer` within `number`).
fn merge(into: &mut Expectation, more: Expectation) {
    if into.types.is_empty() {
        into.types = more.types;
    } else if !more.types.is_empty() {
        let both: Vec<String> = into
            .types
            .iter()
            .filter(|t| more.types.iter().any(|m| m == *t || (m == "number" && *t == "integer")))
            .cloned()
            .collect();
        if !both.is_empty() {
            into.types = both;
        }
    }
    if into.allowed.is_empty() {
        into.allowed = more.allowed;
    }
    into.format = into.format.take().or(more.format);
    into.pattern = into.pattern.take().or(more.pattern);
    into.at_least = into.at_least.take().or(more.at_least);
    into.at_most = into.at_most.take().or(more.at_most);
    into.example = into.example.take().or(more.example);
    into.description = into.description.take().or(more.description);
}

/// What the schema at `pointer` accepts, as one alternative among others, or what a `not`
/// forbids or a `contains` counts: its type and bounds, its values, the fields of an object,
/// its own alternatives. Descriptions are left out: they say what a value is for, not what
/// it is.
pub(super) fn shape(document: &Document, pointer: &str) -> Shape {
    shape_within(document, pointer, 0)
}

fn shape_within(document: &Document, pointer: &str, depth: usize) -> Shape {
    match document.at(pointer) {
        None | Some(Value::Bool(true)) => return Shape::default(),
        Some(Value::Bool(false)) => return Shape::nothing(),
        Some(_) => {}
    }
    let members = conjunction(document, pointer);
    let schemas: Vec<(&String, &Value)> = members.iter().filter_map(|m| Some((m, document.at(m)?))).collect();
    if schemas.iter().any(|(_, s)| s.as_bool() == Some(false)) {
        return Shape::nothing();
    }
    let deeper = |at: String| if depth < 4 { shape_within(document, &at, depth + 1) } else { Shape::default() };
    // The union's branches are the shape's own alternatives, said once, below.
    let mut value = expectation_within(document, pointer, false);
    value.description = None;
    value.example = None;
    let mut shape = Shape { fields: fields(schemas.iter().map(|(_, s)| *s)), ..Shape::default() };
    if shape.fields.is_some() {
        value.types.retain(|t| t != "object");
    }
    shape.value = value;
    for (member, schema) in &schemas {
        shape.multiple_of = shape.multiple_of.take().or_else(|| schema.get("multipleOf")?.as_number().cloned());
        if schema.get("contains").is_some() && shape.item.is_none() {
            shape.item = Some(Box::new(deeper(format!("{member}/contains"))));
        }
        shape.distinct |= schema.get("uniqueItems").and_then(Value::as_bool) == Some(true);
        if shape.either.is_empty()
            && optional_branch(schema, member).is_none()
            && let Some((keyword, branches)) =
                ["anyOf", "oneOf"].iter().find_map(|k| Some((*k, schema.get(*k)?.as_array()?)))
        {
            shape.either = (0..branches.len()).map(|i| deeper(format!("{member}/{keyword}/{i}"))).collect();
        }
        if schema.get("not").is_some() && shape.not.is_none() {
            let not = deeper(format!("{member}/not"));
            if not.is_anything() {
                return Shape::nothing();
            }
            shape.not = Some(Box::new(not));
        }
    }
    if shape.is_anything() {
        shape.rule = unsaid_rule(schemas.iter().map(|(_, s)| *s));
    }
    shape
}

/// The fields an object is named with, when the schemas name or require any (and take
/// objects).
fn fields<'v>(schemas: impl Iterator<Item = &'v Value> + Clone) -> Option<Fields> {
    let mut named: Vec<String> = Vec::new();
    let mut required: Vec<String> = Vec::new();
    for schema in schemas.clone() {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for key in properties.keys() {
                if !named.contains(key) {
                    named.push(key.clone());
                }
            }
        }
        let listed = schema.get("required").and_then(Value::as_array).into_iter().flatten();
        for name in listed.filter_map(Value::as_str) {
            if !required.iter().any(|r| r == name) {
                required.push(name.to_owned());
            }
        }
    }
    let takes_objects = schemas.into_iter().all(|schema| match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => true,
    });
    if !takes_objects || (named.is_empty() && required.is_empty()) {
        return None;
    }
    let mut ordered: Vec<String> = named.iter().filter(|n| required.contains(*n)).cloned().collect();
    ordered.extend(required.iter().filter(|r| !named.contains(r)).cloned());
    let optional = named.into_iter().filter(|n| !required.contains(n)).collect();
    Some(Fields { required: ordered, optional })
}

/// A keyword a shape has no words for, with what the schema says for it, when a schema says
/// nothing else: `'dependentRequired': {"a":["b"]}`.
fn unsaid_rule<'v>(schemas: impl Iterator<Item = &'v Value>) -> Option<(String, Value)> {
    const SAID_OR_NOTES: &[&str] = &[
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$vocabulary",
        "$ref",
        "allOf",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
    ];
    schemas
        .filter_map(Value::as_object)
        .flatten()
        .find(|(keyword, _)| !SAID_OR_NOTES.contains(&keyword.as_str()))
        .map(|(keyword, rule)| (keyword.clone(), rule.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape_of(schema: Value) -> String {
        shape(&Document::new(schema), "").phrase()
    }

    #[test]
    fn shapes_say_what_is_accepted() {
        assert_eq!(shape_of(json!({"type": "string", "description": "ignored"})), "a string");
        assert_eq!(shape_of(json!({"const": true})), "exactly true");
        assert_eq!(shape_of(json!({})), "any value");
        assert_eq!(shape_of(json!({"not": {}})), "no value at all");
        assert_eq!(
            shape_of(json!({"properties": {"bar": {"type": "integer"}}, "required": ["bar"]})),
            "an object with the required field 'bar'"
        );
        assert_eq!(shape_of(json!({"required": ["foo", "bar"]})), "an object with the required fields 'foo', 'bar'");
        assert_eq!(
            shape_of(json!({"type": "object", "properties": {"id": {}, "name": {}}, "required": ["id"]})),
            "an object with the required field 'id' and the optional 'name'"
        );
        assert_eq!(shape_of(json!({"minimum": 2})), "a number of at least 2");
        assert_eq!(shape_of(json!({"multipleOf": 3})), "a multiple of 3");
        assert_eq!(shape_of(json!({"type": "integer", "multipleOf": 3})), "an integer that is a multiple of 3");
        assert_eq!(shape_of(json!({"not": {"type": "integer"}})), "anything but an integer");
        assert_eq!(
            shape_of(json!({"anyOf": [{"type": "string"}, {"minimum": 3}]})),
            "a string or a number of at least 3"
        );
        assert_eq!(shape_of(json!({"contains": {"const": 1}})), "an array with an item that is exactly 1");
        assert_eq!(
            shape_of(json!({"$defs": {"a": {"type": "string", "minLength": 2}}, "$ref": "#/$defs/a"})),
            "a string of at least 2 characters"
        );
        assert_eq!(
            shape_of(json!({"dependentRequired": {"a": ["b"]}})),
            r#"a value that satisfies 'dependentRequired': {"a":["b"]}"#
        );
        assert_eq!(
            shape_of(json!({"type": "array", "items": {"type": "integer"}, "contains": {"multipleOf": 3}})),
            "an array with an item that is a multiple of 3"
        );
    }

    #[test]
    fn expectations_follow_references_and_options() {
        let document = Document::new(json!({
            "$defs": {"Color": {"enum": ["red", "green"], "description": "A colour."}},
            "properties": {
                "c": {"$ref": "#/$defs/Color"},
                "o": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}], "description": "Optional colour."},
                "n": {"type": "integer", "minimum": 1}
            }
        }));
        assert_eq!(expectation(&document, "/properties/c").phrase(), "one of 'red', 'green'");
        assert_eq!(expectation(&document, "/properties/o").description.as_deref(), Some("Optional colour."));
        assert_eq!(expectation(&document, "/properties/n").phrase(), "an integer of at least 1");
    }
}
