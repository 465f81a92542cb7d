//! How schemas are generated from types: draft 2020-12, subschemas inlined (so errors point
//! into one document and clients see no `$ref`), and strict objects.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// A generator for input schemas. With `strict`, every object schema that lists properties
/// and says nothing about others gets `additionalProperties: false`.
pub(crate) fn input_generator(strict: bool) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
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

    #[test]
    fn lenient_leaves_objects_open() {
        let object = into_object(output_generator().into_root_schema_for::<Outer>());
        assert!(!object.contains_key("additionalProperties"));
    }
}
