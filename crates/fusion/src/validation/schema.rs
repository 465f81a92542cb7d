//! How schemas are generated from types: draft 2020-12, subschemas inlined (so errors point
//! into one document and clients see no `$ref`), and strict objects.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Number, Value};

/// A generator for input schemas: every integer of a fixed width (`u32`, `i64`) gets its
/// range as `minimum`/`maximum`, so the validator refuses `5000000000` for a `u32` with the
/// usual "Too big" sentence instead of letting the decoder fail on it. Objects are closed to
/// unknown keys afterwards, by [`close_unknown_keys`](super::close_unknown_keys), which sees
/// the whole schema.
pub(crate) fn input_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(RecursiveTransform(integer_range))
        .into_generator()
}

/// A generator for output schemas: as for inputs; outputs are never closed (they may grow).
pub(crate) fn output_generator() -> SchemaGenerator {
    input_generator()
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

/// The schema as a JSON object, with the `title` schemars derives from the type name
/// removed: it names a Rust type, which tells a client nothing.
pub(crate) fn into_object(schema: Schema) -> Map<String, Value> {
    let mut object = match schema.to_value() {
        Value::Object(object) => object,
        // `true` accepts anything (`{}`), `false` nothing (`{"not": {}}`).
        Value::Bool(true) => Map::new(),
        _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
    };
    object.shift_remove("title");
    object
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
        let object = super::super::close_unknown_keys(into_object(input_generator().into_root_schema_for::<Outer>()));
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
    fn optional_fields_are_published_nullable() {
        // The handler takes `null` for an `Option`, so the schema a client reads says so.
        let generated =
            super::super::close_unknown_keys(into_object(input_generator().into_root_schema_for::<Optional>()));
        assert_eq!(generated["properties"]["name"]["type"], serde_json::json!(["string", "null"]));
        assert_eq!(generated["properties"]["must"]["type"], serde_json::json!(["integer", "null"]));
        assert_eq!(generated["properties"]["must"]["maximum"], 255);
        let inner = &generated["properties"]["inner"];
        assert_eq!(inner["type"], serde_json::json!(["object", "null"]));
        assert_eq!(inner["additionalProperties"], false);
    }

    #[test]
    fn lenient_leaves_objects_open() {
        let object = into_object(output_generator().into_root_schema_for::<Outer>());
        assert!(!object.contains_key("additionalProperties"));
    }
}
