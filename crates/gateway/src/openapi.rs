//! OpenAPI 3 documents read as tools: each operation becomes one tool whose input schema holds
//! its path, query and header parameters and its JSON request body (as `body`), named by its
//! `operationId` (or method and path) and described by its summary and description.
//!
//! Reading is pure and bounded: a document is any JSON a server or a file hands over, so
//! every `$ref` is followed only inside the document (`#/...`), at most [`MAX_REF_DEPTH`]
//! deep and never round a cycle, the schemas inlined stay under [`MAX_SCHEMA_NODES`] values
//! in all, and every refusal says where in the document it is and what was expected.
//!
//! ```
//! use serde_json::json;
//!
//! let document = json!({
//!     "openapi": "3.1.0",
//!     "paths": {"/invoices/{id}": {"get": {
//!         "operationId": "getInvoice",
//!         "summary": "Read one invoice.",
//!         "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
//!     }}},
//! });
//! let operations = mcp_fusion_gateway::openapi::import(&document).unwrap();
//! assert_eq!(operations[0].name, "getInvoice");
//! assert_eq!((operations[0].method.as_str(), operations[0].path.as_str()), ("GET", "/invoices/{id}"));
//! assert_eq!(operations[0].input_schema["required"], json!(["id"]));
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use mcp_fusion_wire::value_kind as kind;
use serde_json::{Map, Value};

/// How deep `$ref`s may point through each other.
pub const MAX_REF_DEPTH: usize = 32;

/// How many JSON values the input schemas of one document may hold once their `$ref`s are
/// inlined: a few references to references must not grow into millions of values.
pub const MAX_SCHEMA_NODES: usize = 100_000;

/// How many operations one document may describe.
pub const MAX_OPERATIONS: usize = 1_000;

/// How many parameters one document may declare in all (path items' and operations'): far more
/// than any API's, and few enough that reading them is quick.
pub const MAX_PARAMETERS: usize = 10_000;

/// Headers that say how the request is framed or routed, which the HTTP client sets: a call
/// must never set them (`Host` to reach another virtual host, `Content-Length` to cut the body,
/// `Connection` to have a proxy drop the mount's credentials).
const FRAMING_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-connection",
];

/// Whether a header parameter named `name` would set how the request is framed or routed.
pub(crate) fn is_framing_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    FRAMING_HEADERS.contains(&lower.as_str()) || lower.starts_with("proxy-")
}

/// The methods an operation is found under, in the order they are read.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/// One operation of a document, as a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// The tool's name: the `operationId`, or method and path, in MCP's tool-name alphabet.
    pub name: String,
    /// The summary and the description, as the document wrote them.
    pub description: String,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template (`/invoices/{id}`).
    pub path: String,
    /// Its parameters, in the document's order.
    pub parameters: Vec<Parameter>,
    /// Whether it takes a JSON body (the input's `body` field), and whether it must.
    pub body: Option<bool>,
    /// The input schema: a JSON object schema of the parameters and `body`, `$ref`s inlined.
    pub input_schema: Map<String, Value>,
}

/// A parameter of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    /// Its name, the input's field.
    pub name: String,
    /// Where it goes.
    pub location: Location,
    /// Whether the operation requires it.
    pub required: bool,
}

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// A `{name}` of the path.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
}

/// Why a document cannot be read as tools. Each message says where and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Not an OpenAPI 3 document.
    #[error("not an OpenAPI 3 document: {0}; expected a JSON object with \"openapi\": \"3.x.y\" and \"paths\"")]
    NotOpenApi(String),
    /// A part of the document has the wrong shape.
    #[error("{at}: expected {expected}, found {found}")]
    Malformed {
        /// Where, as a JSON pointer.
        at: String,
        /// What the specification puts there.
        expected: &'static str,
        /// What the document has.
        found: String,
    },
    /// A `$ref` that cannot be followed.
    #[error("{at}: the $ref {reference:?} {reason}")]
    Reference {
        /// Where the `$ref` is.
        at: String,
        /// What it says.
        reference: String,
        /// Why it cannot be followed.
        reason: &'static str,
    },
    /// Something of the specification these tools do not carry.
    #[error("{at}: {what} is not supported; remove it from the operation or leave the operation out")]
    Unsupported {
        /// Where.
        at: String,
        /// What.
        what: String,
    },
    /// Two operations would be one tool.
    #[error("two operations are named {name:?} ({first} and {second}); give one an operationId of its own")]
    DuplicateName {
        /// The tool name.
        name: String,
        /// The first operation (`GET /a`).
        first: String,
        /// The second.
        second: String,
    },
    /// Past one of the bounds.
    #[error("the document is too large: {0}")]
    TooLarge(String),
}

/// Reads every operation of `document` as a tool, in path order, then method order.
pub fn import(document: &Value) -> Result<Vec<Operation>, ImportError> {
    let root = document.as_object().ok_or_else(|| ImportError::NotOpenApi(format!("it is {}", kind(document))))?;
    match root.get("openapi") {
        Some(Value::String(version)) if version.starts_with("3.") => {}
        Some(Value::String(version)) => {
            return Err(ImportError::NotOpenApi(format!("its \"openapi\" is {:?}", cut(version))));
        }
        Some(other) => return Err(ImportError::NotOpenApi(format!("its \"openapi\" is {}", kind(other)))),
        None => return Err(ImportError::NotOpenApi("it has no \"openapi\" version".into())),
    }
    let paths = object_at(root.get("paths"), "/paths", "an object of paths")?;
    let mut reader = Reader { document, nodes: 0, parameters: 0 };
    let mut operations: Vec<Operation> = Vec::new();
    for (path, item) in paths {
        let at = format!("/paths/{}", pointer_token(path));
        let item = reader.resolve(item, &at, 0)?;
        let item = object_at(Some(item), &at, "a path item object")?;
        let shared = match item.get("parameters") {
            Some(list) => reader.parameters(list, &format!("{at}/parameters"))?,
            None => Vec::new(),
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            if operations.len() == MAX_OPERATIONS {
                return Err(ImportError::TooLarge(format!("more than {MAX_OPERATIONS} operations")));
            }
            let operation = reader.operation(path, method, operation, &shared, &format!("{at}/{method}"))?;
            if let Some(first) = operations.iter().find(|other| other.name == operation.name) {
                return Err(ImportError::DuplicateName {
                    name: operation.name.clone(),
                    first: format!("{} {}", first.method, first.path),
                    second: format!("{} {}", operation.method, operation.path),
                });
            }
            operations.push(operation);
        }
    }
    Ok(operations)
}

/// A parameter read, with its schema and description for the input.
struct ReadParameter {
    parameter: Parameter,
    schema: Value,
}

/// The document, and how many schema values and parameters have been read so far.
struct Reader<'a> {
    document: &'a Value,
    nodes: usize,
    parameters: usize,
}

impl<'a> Reader<'a> {
    fn operation(
        &mut self,
        path: &str,
        method: &str,
        operation: &'a Value,
        shared: &[ReadParameter],
        at: &str,
    ) -> Result<Operation, ImportError> {
        let operation = object_at(Some(self.resolve(operation, at, 0)?), at, "an operation object")?;
        let own = match operation.get("parameters") {
            Some(list) => self.parameters(list, &format!("{at}/parameters"))?,
            None => Vec::new(),
        };
        // An operation's parameter replaces the path item's of the same name and place, where
        // the path item had it; found by an index, so that many parameters cost no more each.
        let mut parameters: Vec<&ReadParameter> = Vec::with_capacity(shared.len() + own.len());
        let mut index: HashMap<(&str, Location), usize> = HashMap::with_capacity(shared.len() + own.len());
        for parameter in shared.iter().chain(&own) {
            match index.entry((parameter.parameter.name.as_str(), parameter.parameter.location)) {
                Entry::Occupied(slot) => parameters[*slot.get()] = parameter,
                Entry::Vacant(slot) => {
                    slot.insert(parameters.len());
                    parameters.push(parameter);
                }
            }
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        for read in &parameters {
            if properties.contains_key(&read.parameter.name) {
                return Err(ImportError::Unsupported {
                    at: format!("{at}/parameters"),
                    what: format!("two parameters named {:?} in different places", cut(&read.parameter.name)),
                });
            }
            properties.insert(read.parameter.name.clone(), read.schema.clone());
            if read.parameter.required {
                required.push(Value::String(read.parameter.name.clone()));
            }
        }
        let body = match operation.get("requestBody") {
            None => None,
            Some(body) => {
                let body_at = format!("{at}/requestBody");
                let body = object_at(Some(self.resolve(body, &body_at, 0)?), &body_at, "a request body object")?;
                let content =
                    object_at(body.get("content"), &format!("{body_at}/content"), "an object of media types")?;
                let Some((media, json)) = content.iter().find(|(media, _)| is_json(media)) else {
                    let media: Vec<&str> = content.keys().map(String::as_str).take(5).collect();
                    return Err(ImportError::Unsupported {
                        at: format!("{body_at}/content"),
                        what: format!("a request body other than JSON ({})", cut(&media.join(", "))),
                    });
                };
                let schema_at = format!("{body_at}/content/{}/schema", pointer_token(media));
                let schema = match json.get("schema") {
                    Some(schema) => self.schema(schema, &schema_at, 0)?,
                    None => Value::Object(Map::new()),
                };
                if properties.contains_key("body") {
                    return Err(ImportError::Unsupported {
                        at: format!("{at}/parameters"),
                        what: "a parameter named \"body\" beside a request body".into(),
                    });
                }
                let must = body.get("required").and_then(Value::as_bool).unwrap_or(false);
                properties.insert("body".into(), schema);
                if must {
                    required.push(Value::String("body".into()));
                }
                Some(must)
            }
        };
        let mut input_schema = Map::new();
        input_schema.insert("type".into(), Value::String("object".into()));
        input_schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            input_schema.insert("required".into(), Value::Array(required));
        }
        input_schema.insert("additionalProperties".into(), Value::Bool(false));
        let text =
            |key: &str| operation.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty());
        let description = match (text("summary"), text("description")) {
            (Some(summary), Some(description)) if summary != description => format!("{summary}\n\n{description}"),
            (Some(text), _) | (None, Some(text)) => text.to_owned(),
            (None, None) => format!("{} {path}", method.to_ascii_uppercase()),
        };
        let name = match operation.get("operationId") {
            Some(Value::String(id)) if !tool_name(id).is_empty() => tool_name(id),
            Some(Value::String(_)) | None => tool_name(&format!("{method}_{path}")),
            Some(other) => {
                return Err(ImportError::Malformed {
                    at: format!("{at}/operationId"),
                    expected: "a string",
                    found: kind(other).into(),
                });
            }
        };
        Ok(Operation {
            name,
            description,
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            parameters: parameters.into_iter().map(|read| read.parameter.clone()).collect(),
            body,
            input_schema,
        })
    }

    /// A `parameters` list: each entry (or what its `$ref` names) with its schema inlined.
    fn parameters(&mut self, list: &'a Value, at: &str) -> Result<Vec<ReadParameter>, ImportError> {
        let list = list.as_array().ok_or_else(|| ImportError::Malformed {
            at: at.into(),
            expected: "an array of parameters",
            found: kind(list).into(),
        })?;
        self.parameters += list.len();
        if self.parameters > MAX_PARAMETERS {
            return Err(ImportError::TooLarge(format!("it declares more than {MAX_PARAMETERS} parameters")));
        }
        let mut read = Vec::with_capacity(list.len());
        for (index, entry) in list.iter().enumerate() {
            let at = format!("{at}/{index}");
            let entry = object_at(Some(self.resolve(entry, &at, 0)?), &at, "a parameter object")?;
            let name = match entry.get("name") {
                Some(Value::String(name)) if !name.is_empty() => name.clone(),
                other => {
                    return Err(ImportError::Malformed {
                        at: format!("{at}/name"),
                        expected: "a non-empty string",
                        found: other.map_or("nothing", kind).into(),
                    });
                }
            };
            let location = match entry.get("in").and_then(Value::as_str) {
                Some("path") => Location::Path,
                Some("query") => Location::Query,
                Some("header") => Location::Header,
                Some("cookie") => {
                    return Err(ImportError::Unsupported { at: format!("{at}/in"), what: "a cookie parameter".into() });
                }
                _ => {
                    return Err(ImportError::Malformed {
                        at: format!("{at}/in"),
                        expected: "\"path\", \"query\", \"header\" or \"cookie\"",
                        found: entry.get("in").map_or("nothing", kind).into(),
                    });
                }
            };
            if location == Location::Header {
                // OpenAPI: these "SHALL be ignored"; the request sets them itself.
                if ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str()) {
                    continue;
                }
                if !is_header_name(&name) {
                    return Err(ImportError::Unsupported {
                        at: format!("{at}/name"),
                        what: format!("the header name {:?}, which HTTP does not allow", cut(&name)),
                    });
                }
                if is_framing_header(&name) {
                    return Err(ImportError::Unsupported {
                        at: format!("{at}/name"),
                        what: format!(
                            "the header parameter {:?}, which would let a call set how the request is framed or routed",
                            cut(&name)
                        ),
                    });
                }
            }
            let required =
                location == Location::Path || entry.get("required").and_then(Value::as_bool).unwrap_or(false);
            let mut schema = match entry.get("schema") {
                Some(schema) => self.schema(schema, &format!("{at}/schema"), 0)?,
                None => Value::Object(Map::new()),
            };
            if let (Value::Object(schema), Some(Value::String(description))) = (&mut schema, entry.get("description")) {
                schema.entry("description").or_insert_with(|| Value::String(description.clone()));
            }
            read.push(ReadParameter { parameter: Parameter { name, location, required }, schema });
        }
        Ok(read)
    }

    /// A schema with every `$ref` in it inlined, within the bounds.
    fn schema(&mut self, schema: &'a Value, at: &str, depth: usize) -> Result<Value, ImportError> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(ImportError::TooLarge(format!(
                "its schemas hold more than {MAX_SCHEMA_NODES} values once inlined"
            )));
        }
        if depth > MAX_REF_DEPTH * 4 {
            return Err(ImportError::TooLarge(format!(
                "{at}: a schema nested deeper than {} levels",
                MAX_REF_DEPTH * 4
            )));
        }
        match schema {
            Value::Object(object) if object.contains_key("$ref") => {
                let target = self.resolve(schema, at, 0)?;
                if depth > MAX_REF_DEPTH {
                    return Err(ImportError::Reference {
                        at: at.into(),
                        reference: object.get("$ref").and_then(Value::as_str).map(cut).unwrap_or_default(),
                        reason: "nests references deeper than the bound (a recursive schema cannot be inlined)",
                    });
                }
                self.schema(target, at, depth + 1)
            }
            Value::Object(object) => {
                let mut inlined = Map::new();
                for (key, value) in object {
                    let at = format!("{at}/{}", pointer_token(key));
                    inlined.insert(key.clone(), self.schema(value, &at, depth + 1)?);
                }
                Ok(Value::Object(inlined))
            }
            Value::Array(items) => {
                let mut inlined = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    inlined.push(self.schema(item, &format!("{at}/{index}"), depth + 1)?);
                }
                Ok(Value::Array(inlined))
            }
            other => Ok(other.clone()),
        }
    }

    /// `value`, or what its `$ref` points to (following references to references).
    fn resolve(&self, value: &'a Value, at: &str, hops: usize) -> Result<&'a Value, ImportError> {
        let Some(reference) = value.get("$ref") else { return Ok(value) };
        let Value::String(reference) = reference else {
            return Err(ImportError::Malformed {
                at: format!("{at}/$ref"),
                expected: "a string",
                found: kind(reference).into(),
            });
        };
        let refused = |reason| ImportError::Reference { at: at.into(), reference: cut(reference), reason };
        if hops >= MAX_REF_DEPTH {
            return Err(refused("goes through too many references (a cycle?)"));
        }
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(refused("points outside the document; only local references (#/components/...) are followed"));
        };
        let target = self.document.pointer(pointer).ok_or_else(|| refused("names nothing in the document"))?;
        if target.get("$ref").and_then(Value::as_str) == Some(reference.as_str()) {
            return Err(refused("points to itself"));
        }
        self.resolve(target, at, hops + 1)
    }
}

/// Whether `name` is an HTTP header name: a token of RFC 9110 §5.6.2.
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The object at `at`, or what was there instead.
fn object_at<'a>(
    value: Option<&'a Value>,
    at: &str,
    expected: &'static str,
) -> Result<&'a Map<String, Value>, ImportError> {
    match value {
        Some(Value::Object(object)) => Ok(object),
        other => Err(ImportError::Malformed { at: at.into(), expected, found: other.map_or("nothing", kind).into() }),
    }
}

/// Whether a media type is JSON (`application/json`, `application/problem+json`, with
/// parameters or not).
fn is_json(media: &str) -> bool {
    let essence = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `text` in MCP's tool-name alphabet (`A-Z a-z 0-9 _ -`), at most 64 characters: every other
/// run of characters becomes one `_`.
fn tool_name(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_end_matches('_');
    name.chars().take(64).collect()
}

/// A key as a JSON pointer token.
fn pointer_token(key: &str) -> String {
    cut(&key.replace('~', "~0").replace('/', "~1"))
}

/// At most 80 characters of a text from the document, for a message.
fn cut(text: &str) -> String {
    let mut cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn said(document: Value) -> String {
        import(&document).unwrap_err().to_string()
    }

    fn document(paths: Value) -> Value {
        json!({"openapi": "3.0.3", "paths": paths, "components": {"schemas": {
            "Invoice": {"type": "object", "properties": {"amount_cents": {"type": "integer", "minimum": 1}}, "required": ["amount_cents"]},
            "Alias": {"$ref": "#/components/schemas/Invoice"},
            "Loop": {"$ref": "#/components/schemas/Loop"},
            "Tree": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Tree"}}},
        }, "parameters": {"Limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}}}})
    }

    #[test]
    fn parameters_and_body_become_one_input_schema() {
        let operations = import(&document(json!({"/invoices/{id}": {
            "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}, "description": "The invoice id."}],
            "get": {"operationId": "get invoice!", "summary": "Read one.", "description": "Read one invoice.",
                    "parameters": [{"$ref": "#/components/parameters/Limit"}, {"name": "X-Trace", "in": "header"}]},
            "put": {"requestBody": {"required": true, "content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Alias"}}}}},
        }})))
        .unwrap();
        let [get, put] = operations.as_slice() else { panic!("{operations:?}") };
        assert_eq!(
            (get.name.as_str(), get.method.as_str(), get.description.as_str()),
            ("get_invoice", "GET", "Read one.\n\nRead one invoice.")
        );
        assert_eq!(
            get.input_schema,
            json!({"type": "object", "additionalProperties": false, "required": ["id"], "properties": {
                "id": {"type": "string", "description": "The invoice id."},
                "limit": {"type": "integer"},
                "X-Trace": {},
            }})
            .as_object()
            .unwrap()
            .clone()
        );
        assert_eq!(
            get.parameters.iter().map(|p| (p.name.as_str(), p.location)).collect::<Vec<_>>(),
            [("id", Location::Path), ("limit", Location::Query), ("X-Trace", Location::Header)]
        );
        assert_eq!(
            (put.name.as_str(), put.description.as_str(), put.body),
            ("put_invoices_id", "PUT /invoices/{id}", Some(true))
        );
        assert_eq!(put.input_schema["properties"]["body"]["required"], json!(["amount_cents"]));
        assert_eq!(put.input_schema["required"], json!(["id", "body"]));
    }

    #[test]
    fn garbage_is_one_sentence_that_says_where() {
        assert_eq!(
            said(json!([])),
            "not an OpenAPI 3 document: it is an array; expected a JSON object with \"openapi\": \"3.x.y\" and \"paths\""
        );
        assert!(said(json!({"swagger": "2.0", "paths": {}})).contains("it has no \"openapi\" version"));
        assert!(said(json!({"openapi": "2.0"})).contains("its \"openapi\" is \"2.0\""));
        assert_eq!(said(json!({"openapi": "3.1.0"})), "/paths: expected an object of paths, found nothing");
        assert_eq!(
            said(document(json!({"/a": {"get": {"parameters": [{"name": "x", "in": "body"}]}}}))),
            "/paths/~1a/get/parameters/0/in: expected \"path\", \"query\", \"header\" or \"cookie\", found a string"
        );
        assert!(
            said(document(json!({"/a": {"get": {"parameters": [{"name": "s", "in": "cookie"}]}}})))
                .contains("a cookie parameter is not supported")
        );
        assert!(
            said(document(json!({"/a": {"get": {"parameters": [{"name": "X Y", "in": "header"}]}}})))
                .contains("/paths/~1a/get/parameters/0/name: the header name \"X Y\", which HTTP does not allow")
        );
        let ignored = json!({"/a": {"get": {"parameters": [
            {"name": "Authorization", "in": "header", "required": true},
            {"name": "accept", "in": "header"},
            {"name": "X-Trace", "in": "header"}]}}});
        let operations = import(&document(ignored)).unwrap();
        assert_eq!(operations[0].parameters.len(), 1);
        assert_eq!(
            operations[0].input_schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["X-Trace"]
        );
        assert!(operations[0].input_schema.get("required").is_none());
        assert!(
            said(document(json!({"/a": {"post": {"requestBody": {"content": {"text/csv": {}}}}}})))
                .contains("a request body other than JSON (text/csv)")
        );
        assert!(
            said(document(json!({"/a": {"get": {"parameters": [{"$ref": "https://example.com/p.json"}]}}})))
                .contains("points outside the document")
        );
        assert!(
            said(document(json!({"/a": {"get": {"parameters": [{"$ref": "#/nothing/here"}]}}})))
                .contains("names nothing in the document")
        );
        assert!(said(document(json!({"/a": {"get": {"parameters": [{"name": "l", "in": "query", "schema": {"$ref": "#/components/schemas/Loop"}}]}}}))).contains("$ref"));
        assert!(said(document(json!({"/a": {"get": {"parameters": [{"name": "t", "in": "query", "schema": {"$ref": "#/components/schemas/Tree"}}]}}}))).contains("recursive schema"));
        assert!(
            said(document(json!({"/a": {"get": {"operationId": "same"}}, "/b": {"get": {"operationId": "same"}}})))
                .starts_with("two operations are named \"same\" (GET /a and GET /b)")
        );
    }

    #[test]
    fn header_parameters_that_frame_or_route_the_request_are_refused() {
        for name in [
            "Host",
            "content-length",
            "Transfer-Encoding",
            "Connection",
            "Keep-Alive",
            "Upgrade",
            "TE",
            "Trailer",
            "Expect",
            "Proxy-Authorization",
            "proxy-connection",
        ] {
            let refused = said(document(json!({"/a": {"get": {"parameters": [{"name": name, "in": "header"}]}}})));
            assert!(
                refused.contains(&format!(
                    "/paths/~1a/get/parameters/0/name: the header parameter {name:?}, which would let a call set how the request is framed or routed"
                )),
                "{refused}"
            );
        }
        // Named so as a query parameter, it is only a name.
        assert!(import(&document(json!({"/a": {"get": {"parameters": [{"name": "host", "in": "query"}]}}}))).is_ok());
    }

    #[test]
    fn many_parameters_are_read_in_one_pass_and_past_the_bound_refused() {
        let many = |count: usize| -> Vec<Value> {
            (0..count).map(|n| json!({"name": format!("p{n}"), "in": "query", "schema": {"type": "string"}})).collect()
        };
        // The path item's parameters, each replaced by the operation's of the same name and place.
        let shared = many(4_000);
        let mut own = many(4_000);
        own.push(json!({"name": "X-Trace", "in": "header"}));
        for parameter in own.iter_mut().take(4_000) {
            parameter["required"] = json!(true);
        }
        let operations = import(&document(json!({"/a": {"parameters": shared, "get": {"parameters": own}}}))).unwrap();
        let parameters = &operations[0].parameters;
        assert_eq!(parameters.len(), 4_001);
        assert!(parameters.iter().take(4_000).all(|parameter| parameter.required), "the operation's replaced them");
        assert_eq!((parameters[4_000].name.as_str(), parameters[4_000].location), ("X-Trace", Location::Header));
        // 60,000 parameters of one operation: refused by count, before any is read.
        let refused = said(document(json!({"/a": {"get": {"parameters": many(60_000)}}})));
        assert!(refused.contains("it declares more than 10000 parameters"), "{refused}");
    }

    #[test]
    fn references_that_multiply_stop_at_the_bound() {
        // Each level names the one below twice: 2^40 values if inlined.
        let mut schemas = Map::new();
        schemas.insert("L0".into(), json!({"type": "string"}));
        for level in 1..=40 {
            let below = format!("#/components/schemas/L{}", level - 1);
            schemas.insert(
                format!("L{level}"),
                json!({"type": "array", "prefixItems": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let document = json!({"openapi": "3.1.0", "components": {"schemas": schemas}, "paths": {"/a": {"get": {
            "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/L40"}}]}}}});
        assert!(matches!(import(&document), Err(ImportError::TooLarge(_) | ImportError::Reference { .. })));
    }
}
