//! Strict schemas: an input schema rewritten into the subset that OpenAI's strict function
//! calling and Anthropic's strict tool use both accept, for hosts that decode a model's
//! arguments against it. Every object is closed, every field required (the optional ones
//! nullable), references inlined, and what the subset cannot say — bounds, lengths, most
//! formats, defaults, conditions — moved into the field's description, where the model still
//! reads it. The server keeps checking the full schema, so its refusals say the rest.

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use mcp_fusion_wire::echo;

/// The formats both providers decode.
const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Formats that only restate a number's width (`schemars` writes them): the bounds say it.
const NUMBER_FORMATS: &[&str] =
    &["int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float", "double"];

/// The words telling the model what a nullable-because-optional field's `null` means.
const LEFT_OUT: &str = "optional: null leaves it out";

/// Why a schema has no strict form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotStrict {
    /// A value of any shape, which a closed subset cannot describe.
    #[error("{at} takes any value")]
    Open { at: String },
    /// An object of free keys (a map).
    #[error("{at} is a map of free keys")]
    Map { at: String },
    /// A type that contains itself.
    #[error("{at} refers to itself ({reference})")]
    Recursive { at: String, reference: String },
    /// A reference this schema does not hold.
    #[error("{at} refers to {reference}, which the schema does not hold")]
    Unresolved { at: String, reference: String },
    /// A shape the subset has no word for (a tuple, a root union, `allOf` of unions).
    #[error("{at} is {what}")]
    Unsupported { at: String, what: &'static str },
}

/// `tools` with their input schemas in the strict subset when `strict`; a tool whose schema
/// has no strict form keeps it, and the log says which and why.
pub(crate) fn published(tools: Vec<Tool>, strict: bool) -> Vec<Tool> {
    if !strict {
        return tools;
    }
    tools.into_iter().map(strict_tool).collect()
}

/// One tool with its input schema in the strict subset, or as it was when it has no strict
/// form.
pub(crate) fn strict_tool(mut tool: Tool) -> Tool {
    match strict_schema(&tool.input_schema) {
        Ok(schema) => tool.input_schema = Arc::new(schema),
        Err(reason) => tracing::warn!(
            tool = %echo(&tool.name),
            "the tool's input schema has no strict form, so it is published as written: {}",
            echo(&reason.to_string())
        ),
    }
    tool
}

/// `schema` in the strict subset: an object whose every object is closed and lists every
/// field in `required`, the optional ones nullable.
///
/// ```ignore
/// let strict = strict_schema(json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}))?;
/// // {"type": "object", "properties": {"n": {"type": ["integer", "null"], "description": "At least 1; optional: null leaves it out."}},
/// //  "required": ["n"], "additionalProperties": false}
/// ```
pub(crate) fn strict_schema(schema: &Map<String, Value>) -> Result<Map<String, Value>, NotStrict> {
    let root = Value::Object(schema.clone());
    let mut rewriter = Rewriter { root: &root, resolving: Vec::new() };
    if ["anyOf", "oneOf"].iter().any(|k| schema.contains_key(*k)) {
        return Err(NotStrict::Unsupported { at: "the root".into(), what: "a union (the root must be one object)" });
    }
    let mut strict = rewriter.node(&root, "the root", false)?;
    strict.insert("type".into(), json!("object"));
    Ok(strict)
}

struct Rewriter<'a> {
    root: &'a Value,
    /// The references being inlined, outermost first: one met again is a recursion.
    resolving: Vec<String>,
}

impl Rewriter<'_> {
    /// The strict form of the schema at `at`, nullable when `optional`.
    fn node(&mut self, schema: &Value, at: &str, optional: bool) -> Result<Map<String, Value>, NotStrict> {
        let schema = match schema {
            Value::Object(schema) => schema,
            _ => return Err(NotStrict::Open { at: at.to_owned() }),
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return self.referenced(schema, reference, at, optional);
        }
        let schema = self.merged_all_of(schema, at)?;
        let mut words = Vec::new();
        let mut out = Map::new();
        if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
            let mut strict = Vec::with_capacity(branches.len());
            for (i, branch) in branches.iter().enumerate() {
                strict.push(Value::Object(self.node(branch, &format!("{at}.anyOf[{i}]"), false)?));
            }
            out.insert("anyOf".into(), Value::Array(strict));
        }
        let enumerated = match (schema.get("const"), schema.get("enum")) {
            (Some(value), _) => Some(vec![value.clone()]),
            (None, Some(Value::Array(values))) => Some(values.clone()),
            _ => None,
        };
        let types = types_of(&schema, enumerated.as_deref());
        if types.is_empty() && !out.contains_key("anyOf") {
            return Err(NotStrict::Open { at: at.to_owned() });
        }
        if !types.is_empty() {
            out.insert("type".into(), one_or_many(&types));
        }
        if let Some(values) = enumerated {
            out.insert("enum".into(), Value::Array(values));
        }
        if types.iter().any(|t| t == "object") {
            self.object(&schema, at, &mut out)?;
        }
        if types.iter().any(|t| t == "array") {
            self.array(&schema, at, &mut out, &mut words)?;
        }
        said_in_words(&schema, &mut out, &mut words);
        if optional && !accepts_null(&out) {
            nullable(&mut out);
            words.push(LEFT_OUT.to_owned());
        }
        let description = schema.get("description").and_then(Value::as_str).unwrap_or("");
        if let Some(description) = described(description, &words) {
            out.insert("description".into(), Value::String(description));
        }
        Ok(out)
    }

    /// A `$ref` inlined: the schema it names, with the keywords beside it on top.
    fn referenced(
        &mut self,
        schema: &Map<String, Value>,
        reference: &str,
        at: &str,
        optional: bool,
    ) -> Result<Map<String, Value>, NotStrict> {
        let mut merged = self.resolved(reference, at)?;
        for (key, value) in schema {
            if key != "$ref" {
                merged.insert(key.clone(), value.clone());
            }
        }
        self.resolving.push(reference.to_owned());
        let strict = self.node(&Value::Object(merged), at, optional);
        self.resolving.pop();
        strict
    }

    /// The object schema a local `reference` names, unless it is being inlined already (a
    /// recursion), is not in this schema, or takes any value.
    fn resolved(&self, reference: &str, at: &str) -> Result<Map<String, Value>, NotStrict> {
        if self.resolving.iter().any(|open| open == reference) {
            return Err(NotStrict::Recursive { at: at.to_owned(), reference: reference.to_owned() });
        }
        match reference.strip_prefix('#').and_then(|pointer| self.root.pointer(pointer)) {
            Some(Value::Object(target)) => Ok(target.clone()),
            Some(Value::Bool(_)) => Err(NotStrict::Open { at: at.to_owned() }),
            _ => Err(NotStrict::Unresolved { at: at.to_owned(), reference: reference.to_owned() }),
        }
    }

    /// `schema` with the members of its `allOf` merged in: their fields and required names
    /// added, their other keywords where `schema` has none.
    fn merged_all_of(&mut self, schema: &Map<String, Value>, at: &str) -> Result<Map<String, Value>, NotStrict> {
        let Some(Value::Array(members)) = schema.get("allOf") else {
            return Ok(schema.clone());
        };
        let mut merged = schema.clone();
        merged.shift_remove("allOf");
        for member in members {
            let mut member = match member {
                Value::Object(member) => member.clone(),
                _ => return Err(NotStrict::Open { at: at.to_owned() }),
            };
            if let Some(reference) = member.get("$ref").and_then(Value::as_str).map(str::to_owned) {
                let target = self.resolved(&reference, at)?;
                member.shift_remove("$ref");
                for (key, value) in target {
                    member.entry(key).or_insert(value);
                }
            }
            if member.contains_key("allOf") {
                member = self.merged_all_of(&member, at)?;
            }
            if ["anyOf", "oneOf"].iter().any(|k| member.contains_key(*k)) {
                return Err(NotStrict::Unsupported { at: at.to_owned(), what: "an allOf with a union inside" });
            }
            for (key, value) in member {
                match (key.as_str(), merged.get_mut(&key)) {
                    ("properties", Some(Value::Object(fields))) => {
                        for (name, field) in value.as_object().into_iter().flatten() {
                            fields.entry(name.clone()).or_insert_with(|| field.clone());
                        }
                    }
                    ("required", Some(Value::Array(names))) => {
                        for name in value.as_array().into_iter().flatten() {
                            if !names.contains(name) {
                                names.push(name.clone());
                            }
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(key, value);
                    }
                }
            }
        }
        Ok(merged)
    }

    /// An object's fields, each required, the optional ones nullable; closed.
    fn object(&mut self, schema: &Map<String, Value>, at: &str, out: &mut Map<String, Value>) -> Result<(), NotStrict> {
        let fields = schema.get("properties").and_then(Value::as_object);
        if fields.is_none_or(Map::is_empty) {
            let others = schema.get("additionalProperties");
            if others.is_some_and(Value::is_object) || schema.contains_key("patternProperties") {
                return Err(NotStrict::Map { at: at.to_owned() });
            }
            // An object that takes no fields accepts `{}` alone when it says so; so do a tool's
            // arguments that name none (the server refuses keys its schema does not name).
            // Deeper, an object that says nothing is free-form.
            let closed = others == Some(&Value::Bool(false)) || (at == "the root" && others.is_none());
            if !closed {
                return Err(NotStrict::Open { at: at.to_owned() });
            }
            out.insert("properties".into(), json!({}));
            out.insert("required".into(), json!([]));
            out.insert("additionalProperties".into(), Value::Bool(false));
            return Ok(());
        }
        let required: Vec<&str> =
            schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut properties = Map::new();
        for (name, field) in fields.into_iter().flatten() {
            let field_at = if at == "the root" { name.clone() } else { format!("{at}.{name}") };
            let strict = self.node(field, &field_at, !required.contains(&name.as_str()))?;
            properties.insert(name.clone(), Value::Object(strict));
        }
        let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    /// An array's items in strict form; a bound beyond one item said in words.
    fn array(
        &mut self,
        schema: &Map<String, Value>,
        at: &str,
        out: &mut Map<String, Value>,
        words: &mut Vec<String>,
    ) -> Result<(), NotStrict> {
        if schema.contains_key("prefixItems") {
            return Err(NotStrict::Unsupported { at: at.to_owned(), what: "a tuple (prefixItems)" });
        }
        let items = schema.get("items").ok_or_else(|| NotStrict::Open { at: format!("{at}[]") })?;
        out.insert("items".into(), Value::Object(self.node(items, &format!("{at}[]"), false)?));
        match schema.get("minItems").and_then(Value::as_u64) {
            Some(min @ (0 | 1)) => {
                out.insert("minItems".into(), json!(min));
            }
            Some(min) => words.push(format!("at least {min} items")),
            None => {}
        }
        Ok(())
    }
}

/// The types a schema's values may have: its `type`, or those its `enum` / `const` values
/// have, or `object` / `array` from the keywords it uses.
fn types_of(schema: &Map<String, Value>, enumerated: Option<&[Value]>) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(one)) => return vec![one.clone()],
        Some(Value::Array(many)) => return many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => {}
    }
    if let Some(values) = enumerated {
        let mut types: Vec<String> = Vec::new();
        for value in values {
            let kind = match value {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            if !types.iter().any(|t| t == kind) {
                types.push(kind.to_owned());
            }
        }
        return types;
    }
    if schema.contains_key("properties") || schema.contains_key("additionalProperties") {
        return vec!["object".into()];
    }
    if schema.contains_key("items") {
        return vec!["array".into()];
    }
    Vec::new()
}

fn one_or_many(types: &[String]) -> Value {
    match types {
        [one] => Value::String(one.clone()),
        many => Value::Array(many.iter().cloned().map(Value::String).collect()),
    }
}

/// Keeps the keywords the subset has (`format` of the common list, a `pattern` without
/// what either decoder lacks) and says the others in words.
fn said_in_words(schema: &Map<String, Value>, out: &mut Map<String, Value>, words: &mut Vec<String>) {
    let number = |key: &str| schema.get(key).filter(|v| v.is_number()).map(Value::to_string);
    for (key, phrase) in [
        ("minimum", "at least"),
        ("exclusiveMinimum", "greater than"),
        ("maximum", "at most"),
        ("exclusiveMaximum", "less than"),
        ("multipleOf", "a multiple of"),
    ] {
        if let Some(n) = number(key) {
            words.push(format!("{phrase} {n}"));
        }
    }
    let counted = |n: &str, what: &str| if n == "1" { format!("1 {what}") } else { format!("{n} {what}s") };
    if let Some(n) = number("minLength").filter(|n| n != "0") {
        words.push(format!("at least {}", counted(&n, "character")));
    }
    if let Some(n) = number("maxLength") {
        words.push(format!("at most {}", counted(&n, "character")));
    }
    if let Some(n) = number("maxItems") {
        words.push(format!("at most {}", counted(&n, "item")));
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        words.push("no item twice".into());
    }
    if let Some(n) = number("minProperties") {
        words.push(format!("at least {}", counted(&n, "field")));
    }
    if let Some(n) = number("maxProperties") {
        words.push(format!("at most {}", counted(&n, "field")));
    }
    match schema.get("pattern").and_then(Value::as_str) {
        Some(pattern) if decodable(pattern) => {
            out.insert("pattern".into(), json!(pattern));
        }
        Some(pattern) => words.push(format!("matching /{pattern}/")),
        None => {}
    }
    match schema.get("format").and_then(Value::as_str) {
        Some(format) if FORMATS.contains(&format) => {
            out.insert("format".into(), json!(format));
        }
        Some(format) if NUMBER_FORMATS.contains(&format) => {}
        Some(format) => words.push(format!("format {format}")),
        None => {}
    }
    if let Some(default) = schema.get("default") {
        words.push(format!("default {default}"));
    }
    if let Some(example) = schema.get("examples").and_then(Value::as_array).and_then(|e| e.first()) {
        words.push(format!("like {example}"));
    }
    if let Some(required) = schema.get("dependentRequired").and_then(Value::as_object) {
        for (field, needs) in required {
            let needs: Vec<String> = needs.as_array().into_iter().flatten().map(Value::to_string).collect();
            words.push(format!("with \"{field}\" also send {}", needs.join(", ")));
        }
    }
    let checked: Vec<&str> = ["not", "if", "dependentSchemas", "propertyNames", "contains", "unevaluatedProperties"]
        .into_iter()
        .filter(|key| match schema.get(*key) {
            Some(Value::Bool(false)) => *key != "unevaluatedProperties",
            Some(Value::Bool(true)) | None => false,
            Some(_) => true,
        })
        .collect();
    if !checked.is_empty() {
        words.push(format!("the server also checks its {}", checked.join(", ")));
    }
    if schema.get("deprecated") == Some(&Value::Bool(true)) {
        words.push("deprecated".into());
    }
}

/// Whether both decoders take `pattern`: no backreference, lookaround or word boundary.
fn decodable(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    let mut previous = None;
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(next)) => {
                if matches!(next, 'b' | 'B' | 'k' | '1'..='9') {
                    return false;
                }
                chars.next();
            }
            ('?', Some('=' | '!' | '<')) if previous == Some('(') => return false,
            _ => {}
        }
        previous = Some(c);
    }
    true
}

fn accepts_null(schema: &Map<String, Value>) -> bool {
    let typed = match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    let branch = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|branches| branches.iter().any(|b| b.as_object().is_some_and(accepts_null)));
    typed || branch
}

/// Adds `null` to what the schema accepts: to its types and enum, or as a branch of its union.
fn nullable(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(branches)) = schema.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return;
    }
    let types = match schema.get("type") {
        Some(Value::String(one)) => vec![Value::String(one.clone()), json!("null")],
        Some(Value::Array(many)) => many.iter().cloned().chain([json!("null")]).collect(),
        _ => vec![json!("null")],
    };
    schema.insert("type".into(), Value::Array(types));
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.push(Value::Null);
    }
}

/// The description with what the subset could not say after it, as one sentence.
fn described(description: &str, words: &[String]) -> Option<String> {
    let description = description.trim();
    if words.is_empty() {
        return (!description.is_empty()).then(|| description.to_owned());
    }
    let said = words.join("; ");
    let mut said_chars = said.chars();
    let said: String = said_chars.next().map(|c| c.to_uppercase().chain(said_chars).collect()).unwrap_or_default();
    Some(match description {
        "" => format!("{said}."),
        d if d.ends_with(['.', '!', '?']) => format!("{d} {said}."),
        d => format!("{d}. {said}."),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strict(schema: Value) -> Result<Value, NotStrict> {
        strict_schema(schema.as_object().unwrap()).map(Value::Object)
    }

    #[test]
    fn optional_fields_become_required_and_nullable_and_bounds_become_words() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^inv_[a-z0-9_]+$", "description": "The invoice."},
                "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 100, "default": 20},
                "status": {"type": "string", "enum": ["open", "paid"]},
            },
            "required": ["id"],
        });
        assert_eq!(
            strict(schema).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "pattern": "^inv_[a-z0-9_]+$", "description": "The invoice."},
                    "limit": {"type": ["integer", "null"], "description": "At least 1; at most 100; default 20; optional: null leaves it out."},
                    "status": {"type": ["string", "null"], "enum": ["open", "paid", null], "description": "Optional: null leaves it out."},
                },
                "required": ["id", "limit", "status"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn references_are_inlined_and_all_of_merged_and_one_of_read_as_any_of() {
        let schema = json!({
            "type": "object",
            "properties": {
                "address": {"$ref": "#/$defs/Address", "description": "Where to send it."},
                "who": {"allOf": [{"$ref": "#/$defs/Named"}, {"properties": {"age": {"type": "integer"}}, "required": ["age"]}]},
                "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "required": ["address", "who", "pick"],
            "$defs": {
                "Address": {"type": "object", "properties": {"city": {"type": "string", "minLength": 1}}, "required": ["city"]},
                "Named": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        });
        let strict = strict(schema).unwrap();
        assert_eq!(
            strict["properties"]["address"],
            json!({
                "type": "object",
                "properties": {"city": {"type": "string", "description": "At least 1 character."}},
                "required": ["city"],
                "additionalProperties": false,
                "description": "Where to send it.",
            })
        );
        assert_eq!(strict["properties"]["who"]["required"], json!(["name", "age"]));
        assert_eq!(strict["properties"]["pick"], json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}));
        assert!(strict.get("$defs").is_none());
    }

    #[test]
    fn a_map_a_free_value_a_recursion_and_a_root_union_have_no_strict_form() {
        let map = json!({"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}}});
        assert_eq!(strict(map), Err(NotStrict::Map { at: "tags".into() }));
        let free = json!({"type": "object", "properties": {"value": {}}});
        assert_eq!(strict(free), Err(NotStrict::Open { at: "value".into() }));
        let tree = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}});
        assert!(matches!(strict(tree), Err(NotStrict::Recursive { .. })));
        let union = json!({"anyOf": [{"type": "object"}, {"type": "string"}]});
        assert!(matches!(strict(union), Err(NotStrict::Unsupported { .. })));
    }

    #[test]
    fn a_tool_without_arguments_is_an_empty_closed_object_and_a_free_form_field_has_no_strict_form() {
        // As server-memory's `read_graph` and server-filesystem's `list_allowed_directories` list it.
        let none = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}});
        assert_eq!(
            strict(none).unwrap(),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
        let free = json!({"type": "object", "properties": {"metadata": {"type": "object"}}, "required": ["metadata"]});
        assert_eq!(strict(free), Err(NotStrict::Open { at: "metadata".into() }));
    }

    #[test]
    fn a_nullable_optional_field_is_left_as_it_is_and_a_pattern_with_lookaround_becomes_words() {
        let schema = json!({
            "type": "object",
            "properties": {
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "code": {"type": "string", "pattern": "^(?!x)\\w+$"},
            },
            "required": ["code"],
        });
        let strict = strict(schema).unwrap();
        assert_eq!(strict["properties"]["note"], json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
        assert_eq!(strict["properties"]["code"], json!({"type": "string", "description": "Matching /^(?!x)\\w+$/."}));
    }
}
