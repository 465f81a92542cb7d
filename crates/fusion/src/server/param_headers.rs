//! Arguments mirrored into `Mcp-Param-*` HTTP headers (SEP-2243, MCP 2026-07-28): the
//! `x-mcp-header` annotation an action declares on a field of its input, and the rules a client
//! holds a tool's annotations to, checked when the server is built. A client drops a tool
//! whose annotations break them, so a server that published one would lose the tool silently.
//!
//! Over HTTP the transport then refuses a call whose header disagrees with its argument
//! (`-32020`, HTTP 400, naming the header and the field), before the handler runs.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::error::BuildError;

/// The keyword that names a property's header.
const KEYWORD: &str = "x-mcp-header";

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 5] = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];

/// Writes the declared `(field, header)` pairs into `input` and checks every annotation it then
/// holds (one written through schemars' `extend` included).
pub(super) fn annotate(
    input: &mut Map<String, Value>,
    declared: &[(String, String)],
    action: &str,
    grouped: bool,
) -> Result<(), BuildError> {
    let refuse = |reason: String| BuildError::ParamHeader { action: action.to_owned(), reason };
    if grouped && !declared.is_empty() {
        return Err(refuse(
            "a grouped tool takes one object of arguments for all its actions; stand the action alone \
             (ServerBuilder::action) or lay its group out flat (Group::exposition)"
                .to_owned(),
        ));
    }
    for (field, header) in declared {
        let property = input
            .get_mut("properties")
            .and_then(Value::as_object_mut)
            .and_then(|properties| properties.get_mut(field))
            .and_then(Value::as_object_mut)
            .ok_or_else(|| {
                refuse(format!("its input has no field {field:?}: name a field of the input's top level"))
            })?;
        property.insert(KEYWORD.to_owned(), Value::String(header.clone()));
    }
    check(input).map_err(refuse)
}

/// The rules of SEP-2243: each annotation a non-empty HTTP token, unique whatever its case, on
/// a property of one primitive type reached from the root through `properties` alone.
fn check(input: &Map<String, Value>) -> Result<(), String> {
    if input.contains_key(KEYWORD) {
        return Err("x-mcp-header names a property's header, not the whole input's".to_owned());
    }
    if let Some(path) = off_chain(input, true, &mut Vec::new()) {
        return Err(format!(
            "x-mcp-header at {path} is not on a property reached through `properties` alone; \
             clients drop such a tool"
        ));
    }
    let mut seen = HashSet::new();
    let mut annotated = Vec::new();
    on_chain(input, &mut Vec::new(), &mut annotated);
    for (path, property) in annotated {
        let Some(Value::String(header)) = property.get(KEYWORD) else {
            return Err(format!("the x-mcp-header of {path} is not a string"));
        };
        if header.is_empty() || !header.bytes().all(is_token_byte) {
            return Err(format!(
                "the header name {header:?} of {path} is not an HTTP token: write letters, digits and any of !#$%&'*+-.^_`|~"
            ));
        }
        if !seen.insert(header.to_ascii_lowercase()) {
            return Err(format!("the header name {header:?} of {path} is taken by another field (names ignore case)"));
        }
        match property.get("type") {
            Some(Value::String(kind)) if matches!(kind.as_str(), "string" | "integer" | "boolean") => {}
            other => {
                let found = other.map_or_else(|| "no type".to_owned(), |kind| format!("type {kind}"));
                return Err(format!(
                    "{path} has {found}; a header carries one string, integer or boolean \
                     (an Option field's type also allows null: make the field required)"
                ));
            }
        }
    }
    Ok(())
}

/// The annotated properties reached from `schema` through `properties` alone, with their paths.
fn on_chain<'a>(
    schema: &'a Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<(String, &'a Map<String, Value>)>,
) {
    let Some(Value::Object(properties)) = schema.get("properties") else { return };
    for (name, property) in properties {
        let Value::Object(property) = property else { continue };
        path.push(name.clone());
        if property.contains_key(KEYWORD) {
            found.push((path.join("."), property));
        }
        on_chain(property, path, found);
        path.pop();
    }
}

/// The path of an annotation anywhere but on the `properties` chain from the root.
fn off_chain(schema: &Map<String, Value>, chain: bool, path: &mut Vec<String>) -> Option<String> {
    if !chain && schema.contains_key(KEYWORD) {
        return Some(format!("/{}", path.join("/")));
    }
    for (keyword, value) in schema {
        path.push(keyword.clone());
        let found = match value {
            Value::Object(map) if SCHEMA_MAPS.contains(&keyword.as_str()) => map.iter().find_map(|(name, sub)| {
                let Value::Object(sub) = sub else { return None };
                path.push(name.clone());
                let found = off_chain(sub, chain && keyword == "properties", path);
                path.pop();
                found
            }),
            Value::Object(sub) => off_chain(sub, false, path),
            Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
                let Value::Object(sub) = item else { return None };
                path.push(index.to_string());
                let found = off_chain(sub, false, path);
                path.pop();
                found
            }),
            _ => None,
        };
        path.pop();
        if found.is_some() {
            return found;
        }
    }
    None
}

/// RFC 9110's `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(schema: Value) -> Map<String, Value> {
        schema.as_object().cloned().unwrap()
    }

    fn region() -> Map<String, Value> {
        input(json!({
            "type": "object",
            "properties": {"region": {"type": "string"}, "count": {"type": ["integer", "null"]}, "nested": {
                "type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}
            }}
        }))
    }

    fn declared(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(field, header)| ((*field).to_owned(), (*header).to_owned())).collect()
    }

    fn reason(result: Result<(), BuildError>) -> String {
        match result {
            Err(BuildError::ParamHeader { reason, .. }) => reason,
            other => panic!("a ParamHeader error was expected: {other:?}"),
        }
    }

    #[test]
    fn a_declared_field_is_annotated_and_a_nested_annotation_kept() {
        let mut schema = region();
        annotate(&mut schema, &declared(&[("region", "Region")]), "deploy", false).unwrap();
        assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
        assert_eq!(schema["properties"]["nested"]["properties"]["zone"]["x-mcp-header"], "Zone");
    }

    #[test]
    fn what_a_client_would_drop_is_refused_when_built() {
        let refused = |pairs: &[(&str, &str)], grouped: bool| {
            reason(annotate(&mut region(), &declared(pairs), "deploy", grouped))
        };
        assert!(refused(&[("regoin", "Region")], false).contains("no field \"regoin\""));
        assert!(refused(&[("region", "Region")], true).contains("grouped tool"));
        assert!(refused(&[("region", "My Region")], false).contains("not an HTTP token"));
        assert!(refused(&[("region", "")], false).contains("not an HTTP token"));
        assert!(refused(&[("region", "zone")], false).contains("taken by another field"));
        assert!(refused(&[("count", "Count")], false).contains("make the field required"));

        let mut off = input(json!({"type": "object", "properties": {"items": {
            "type": "array", "items": {"type": "string", "x-mcp-header": "Item"}
        }}}));
        assert!(reason(annotate(&mut off, &[], "deploy", false)).contains("/properties/items/items"));
        let mut root = input(json!({"type": "object", "x-mcp-header": "All"}));
        assert!(reason(annotate(&mut root, &[], "deploy", false)).contains("not the whole input's"));
    }

    #[test]
    fn a_property_named_like_the_keyword_is_a_property() {
        let mut schema = input(json!({"type": "object", "properties": {"x-mcp-header": {"type": "string"}}}));
        annotate(&mut schema, &[], "deploy", false).unwrap();
    }
}
