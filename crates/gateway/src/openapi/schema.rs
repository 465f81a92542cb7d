//! Schemas with their `$ref`s inlined: each reference followed inside the document only, its
//! fragment percent-decoded, a schema inside itself found by the chain of references being
//! inlined (not by how deep the JSON nests), and every bound kept.

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use super::{
    ImportError, MAX_DOCUMENT_SCHEMA_NODES, MAX_NESTING, MAX_REF_DEPTH, MAX_SCHEMA_NODES, Reader, cut, kind,
    pointer_token,
};

impl<'a> Reader<'a> {
    /// A schema with every `$ref` in it inlined, within the bounds. `chain` holds the `$ref`s
    /// being inlined: one met again is a schema inside itself, which no inlining ends.
    pub(super) fn schema(
        &mut self,
        schema: &'a Value,
        at: &str,
        depth: usize,
        chain: &mut Vec<&'a str>,
    ) -> Result<Value, ImportError> {
        self.nodes += 1;
        self.operation_nodes += 1;
        if self.nodes > MAX_DOCUMENT_SCHEMA_NODES {
            return Err(ImportError::TooLarge(format!(
                "its schemas hold more than {MAX_DOCUMENT_SCHEMA_NODES} values once inlined"
            )));
        }
        if self.operation_nodes > MAX_SCHEMA_NODES {
            return Err(ImportError::TooBig {
                at: at.into(),
                what: format!("its schemas hold more than {MAX_SCHEMA_NODES} values once their $refs are inlined"),
            });
        }
        if depth > MAX_NESTING {
            return Err(ImportError::TooBig {
                at: at.into(),
                what: format!("a schema nested deeper than {MAX_NESTING} levels once its $refs are inlined"),
            });
        }
        match schema {
            Value::Object(object) if object.contains_key("$ref") => {
                let reference = match &object["$ref"] {
                    Value::String(reference) => reference.as_str(),
                    other => {
                        return Err(ImportError::Malformed {
                            at: format!("{at}/$ref"),
                            expected: "a string",
                            found: kind(other).into(),
                        });
                    }
                };
                if chain.contains(&reference) {
                    return Err(ImportError::Recursive { at: at.into(), reference: cut(reference) });
                }
                let target = self.target(reference, at)?;
                chain.push(reference);
                let inlined = self.schema(target, at, depth + 1, chain);
                chain.pop();
                let mut inlined = inlined?;
                // OpenAPI 3.1 lets a reference say what it is used for (`description`, `title`
                // beside `$ref`): the words of the use, which the model reads, win.
                if let Value::Object(inlined) = &mut inlined {
                    for key in ["title", "description"] {
                        if let Some(Value::String(words)) = object.get(key) {
                            inlined.insert(key.into(), Value::String(words.clone()));
                        }
                    }
                }
                Ok(inlined)
            }
            Value::Object(object) => {
                let mut inlined = Map::new();
                for (key, value) in object {
                    let at = format!("{at}/{}", pointer_token(key));
                    inlined.insert(key.clone(), self.schema(value, &at, depth + 1, chain)?);
                }
                name_every_required(&mut inlined);
                if self.nullable && inlined.get("nullable") == Some(&Value::Bool(true)) {
                    return Ok(null_allowed(inlined));
                }
                Ok(Value::Object(inlined))
            }
            Value::Array(items) => {
                let mut inlined = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    inlined.push(self.schema(item, &format!("{at}/{index}"), depth + 1, chain)?);
                }
                Ok(Value::Array(inlined))
            }
            other => Ok(other.clone()),
        }
    }

    /// `value`, or what its `$ref` points to (following references to references).
    pub(super) fn resolve(&self, mut value: &'a Value, at: &str) -> Result<&'a Value, ImportError> {
        for _ in 0..=MAX_REF_DEPTH {
            let Some(reference) = value.get("$ref") else { return Ok(value) };
            let Value::String(reference) = reference else {
                return Err(ImportError::Malformed {
                    at: format!("{at}/$ref"),
                    expected: "a string",
                    found: kind(reference).into(),
                });
            };
            let target = self.target(reference, at)?;
            if target.get("$ref").and_then(Value::as_str) == Some(reference.as_str()) {
                return Err(ImportError::Reference {
                    at: at.into(),
                    reference: cut(reference),
                    reason: "points to itself",
                });
            }
            value = target;
        }
        let reference = value.get("$ref").and_then(Value::as_str).unwrap_or_default();
        Err(ImportError::Reference {
            at: at.into(),
            reference: cut(reference),
            reason: "goes through too many references (a cycle?)",
        })
    }

    /// What one `$ref` points to: a JSON pointer in a URI fragment, percent-decoded first
    /// (RFC 6901 §6: `#/paths/~1a%7Bid%7D` is the path `/a{id}`).
    fn target(&self, reference: &str, at: &str) -> Result<&'a Value, ImportError> {
        let refused = |reason| ImportError::Reference { at: at.into(), reference: cut(reference), reason };
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(refused("points outside the document; only local references (#/components/...) are followed"));
        };
        let pointer = percent_decode_str(fragment).decode_utf8().map_err(|_| refused("is not UTF-8 once decoded"))?;
        self.document.pointer(&pointer).ok_or_else(|| refused("names nothing in the document"))
    }
}

/// An OpenAPI 3.0 schema marked `nullable: true` as JSON Schema: `null` among its types (and
/// its `enum`), or, where it names no type (`allOf` of a `$ref`, as generators write a nullable
/// reference), either the schema or `null`.
fn null_allowed(mut schema: Map<String, Value>) -> Value {
    schema.remove("nullable");
    let null = Value::String("null".into());
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match schema.get_mut("type") {
        Some(Value::String(one)) => {
            let one = Value::String(std::mem::take(one));
            schema.insert("type".into(), Value::Array(vec![one, null]));
            Value::Object(schema)
        }
        Some(Value::Array(types)) => {
            if !types.contains(&null) {
                types.push(null);
            }
            Value::Object(schema)
        }
        _ => {
            let mut either = Map::new();
            either
                .insert("anyOf".into(), Value::Array(vec![Value::Object(schema), serde_json::json!({"type": "null"})]));
            Value::Object(either)
        }
    }
}

/// A schema's `required` names each a property: a name the document requires but describes
/// under another case (Xero's `required: ["name"]` beside `Name`) gets that property's schema,
/// else any value's, so that no rewriting of the schema (a strict one closes every object)
/// makes a call the document accepts impossible. An object closed by the document itself is
/// left as it is.
fn name_every_required(schema: &mut Map<String, Value>) {
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        return;
    }
    let (Some(Value::Array(required)), Some(Value::Object(properties))) =
        (schema.get("required"), schema.get("properties"))
    else {
        return;
    };
    let missing: Vec<(String, Value)> = required
        .iter()
        .filter_map(Value::as_str)
        .filter(|name| !properties.contains_key(*name))
        .map(|name| {
            let like =
                properties.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, schema)| schema.clone());
            (name.to_owned(), like.unwrap_or_else(|| Value::Object(Map::new())))
        })
        .collect();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.extend(missing);
    }
}
