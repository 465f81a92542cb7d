//! How schemas are generated from types: draft 2020-12, subschemas inlined (so errors point
//! into one document and clients see no `$ref`), and strict objects.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Number, Value};

/// A generator for input schemas: every integer of a fixed width (`u32`, `i64`) gets its
/// range as `minimum`/`maximum`, so the validator refuses `5000000000` for a `u32` with the
/// usual "Too big" sentence instead of letting the decoder fail on it. With `strict`, every
/// object schema that lists properties and says nothing about others gets
/// `additionalProperties: false`.
pub(crate) fn input_generator(strict: bool) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(RecursiveTransform(integer_range));
    if strict {
        settings.with_transform(RecursiveTransform(close_objects)).into_generator()
    } else {
        settings.into_generator()
    }
}

/// A generator for output schemas: as for inputs, but never closed (outputs may grow).
pub(crate) fn output_generator() -> SchemaGenerator {
    input_generator(false)
}

/// Sets the range of an integer-width format as `minimum`/`maximum`, keeping a narrower one
/// the schema already has.
fn integer_range(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let Some((low, high)) = object.get("format").and_then(Value::as_str).and_then(integer_bounds) else { return };
    let narrower = |existing: Option<&Value>, limit: &Number, keep_if: std::cmp::Ordering| {
        existing.and_then(Value::as_number).is_some_and(|existing| compare(existing, limit) == keep_if)
    };
    if !narrower(object.get("minimum"), &low, std::cmp::Ordering::Greater) {
        object.insert("minimum".into(), Value::Number(low));
    }
    if !narrower(object.get("maximum"), &high, std::cmp::Ordering::Less) {
        object.insert("maximum".into(), Value::Number(high));
    }
}

/// Orders two JSON numbers exactly when both are integers.
fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    let wide = |n: &Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (wide(a), wide(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => a.as_f64().unwrap_or(0.0).total_cmp(&b.as_f64().unwrap_or(0.0)),
    }
}

/// The range of an integer-width format, as JSON numbers.
pub(crate) fn integer_bounds(format: &str) -> Option<(Number, Number)> {
    Some(match format {
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" | "uint" => (0.into(), u64::MAX.into()),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    })
}

fn close_objects(schema: &mut Schema) {
    if let Some(object) = schema.as_object_mut()
        && object.contains_key("properties")
        && !object.contains_key("additionalProperties")
        && !object.contains_key("unevaluatedProperties")
    {
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// The schema as a JSON object, with the `title` schemars derives from the type name
/// removed: it names a Rust type, which tells a client nothing.
pub(crate) fn into_object(schema: Schema) -> Map<String, Value> {
    let mut object = match schema.to_value() {
        Value::Object(object) => object,
        // `true` accepts anything (`{}`), `false` nothing (`{"not": {}}`).
        Value::Bool(true) => Map::new(),
        _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
    };
    object.remove("title");
    object
}

/// The input schema as published in `tools/list`: an optional field is written as its type
/// alone (`"string"`, not `["string", "null"]`; no `null` among enum values or union branches),
/// because several clients map schemas onto formats with one type per field and reject or
/// drop the rest. Leaving a field out is how a caller says "none". Validation keeps the
/// generated schema, so a `null` sent anyway is still accepted.
pub(crate) fn portable_input(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut schema = schema.clone();
    make_portable(&mut schema);
    schema
}

fn make_portable(schema: &mut Map<String, Value>) {
    let required = required_names(schema);
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let Value::Object(property) = property else { continue };
            if !required.contains(name) {
                drop_null(property);
            }
            make_portable(property);
        }
    }
    if let Some(Value::Object(items)) = schema.get_mut("items") {
        make_portable(items);
    }
}

/// Removes `null` as an alternative: from `type`, from `enum`, or as a branch of `anyOf`.
fn drop_null(property: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            property.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = property.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let Some(Value::Array(branches)) = property.get_mut("anyOf") else { return };
    branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
    if let [Value::Object(only)] = branches.as_slice() {
        let only = only.clone();
        property.remove("anyOf");
        for (key, value) in only {
            property.entry(key).or_insert(value);
        }
    }
}

/// Whether a schema describes JSON objects only.
pub(crate) fn is_object_schema(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        _ => false,
    }
}

/// The object schema's property names, in the schema's order.
pub(crate) fn property_names(schema: &Map<String, Value>) -> Vec<String> {
    schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// The object schema's required property names.
pub(crate) fn required_names(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
    }

    #[test]
    fn strict_closes_every_object_and_inlines() {
        let object = into_object(input_generator(true).into_root_schema_for::<Outer>());
        let text = serde_json::to_string(&object).unwrap();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!object.contains_key("title"));
        assert_eq!(object["additionalProperties"], false);
        assert_eq!(object["properties"]["inner"]["additionalProperties"], false);
        assert_eq!(object["properties"]["list"]["items"]["additionalProperties"], false);
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Optional {
        name: Option<String>,
        mode: Option<Mode>,
        inner: Option<Inner>,
        list: Vec<Outer>,
        must: Option<u8>,
    }

    #[test]
    fn portable_inputs_write_optional_fields_as_their_type() {
        let generated = into_object(input_generator(true).into_root_schema_for::<Optional>());
        let portable = portable_input(&generated);
        let text = serde_json::to_string(&portable).unwrap();
        assert!(!text.contains("null"), "{text}");
        assert_eq!(portable["properties"]["name"]["type"], "string");
        assert_eq!(portable["properties"]["mode"]["enum"], serde_json::json!(["Fast", "Slow"]));
        assert_eq!(portable["properties"]["inner"]["type"], "object");
        assert_eq!(portable["properties"]["list"]["items"]["properties"]["maybe"]["type"], "object");
        assert!(serde_json::to_string(&generated).unwrap().contains("null"));
    }

    #[test]
    fn lenient_leaves_objects_open() {
        let object = into_object(output_generator().into_root_schema_for::<Outer>());
        assert!(!object.contains_key("additionalProperties"));
    }
}
