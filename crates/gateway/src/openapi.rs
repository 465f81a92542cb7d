//! OpenAPI 3 documents read as tools: each operation becomes one tool whose input schema holds
//! its path, query and header parameters and its request body (as `body`), named by its
//! `operationId` (or method and path) and described by its summary and description.
//!
//! Reading is pure and bounded: a document is any JSON a server or a file hands over, so
//! every `$ref` is followed only inside the document (`#/...`), a schema that contains itself
//! is found by the chain of `$ref`s being inlined, and the schemas inlined stay under
//! [`MAX_SCHEMA_NODES`] values an operation. An operation the tools cannot carry is left out
//! with a [`Note`] that says where, why and what to change, as a compiler's warning does, and
//! the rest are served: a document is refused only when it is not OpenAPI 3, is past a bound
//! or has nothing to serve.
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
//!     }}, "/session": {"get": {
//!         "operationId": "whoAmI",
//!         "parameters": [{"name": "sid", "in": "cookie", "required": true}],
//!     }}},
//! });
//! let imported = mcp_fusion_gateway::openapi::import(&document).unwrap();
//! let operations = &imported.operations;
//! assert_eq!(operations[0].name, "getInvoice");
//! assert_eq!((operations[0].method.as_str(), operations[0].path.as_str()), ("GET", "/invoices/{id}"));
//! assert_eq!(operations[0].input_schema["required"], json!(["id"]));
//! assert_eq!(
//!     imported.notes[0].to_string(),
//!     "GET /session is left out: /paths/~1session/get/parameters/0/in: a cookie parameter is not supported; a tool sends no cookies"
//! );
//! ```

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use mcp_fusion_wire::value_kind as kind;
use serde_json::{Map, Value};

mod body;
mod names;
mod schema;
mod style;

pub(crate) use body::encode as encode_body;
pub use body::{Body, BodyError, BodyKind, FieldEncoding};
pub use style::Style;
pub(crate) use style::{header as header_value, path as path_value, query as query_pairs};

/// How many `$ref`s may lead to a parameter, a path item or a request body in a row.
pub const MAX_REF_DEPTH: usize = 32;

/// How deep a schema may nest once its `$ref`s are inlined: far deeper than any API's.
pub const MAX_NESTING: usize = 256;

/// How many JSON values the input schema of one operation may hold once its `$ref`s are
/// inlined: a few references to references must not grow into millions of values. An
/// operation past it is left out.
pub const MAX_SCHEMA_NODES: usize = 100_000;

/// How many the input schemas of a whole document may hold: past it, the document is refused,
/// so that no document makes the gateway hold more.
pub const MAX_DOCUMENT_SCHEMA_NODES: usize = 2_000_000;

/// How many operations one document may describe: the most tools a mount takes
/// (`max_tools` says how many of them it serves).
pub const MAX_OPERATIONS: usize = mcp_fusion::contract::MAX_LOCKFILE_TOOLS;

/// How many parameters one document may declare in all (path items' and operations'): far more
/// than any API's, and few enough that reading them is quick.
pub const MAX_PARAMETERS: usize = 50_000;

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

/// A document read: the operations served, and a note for each one left out or changed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imported {
    /// The operations served, in path order, then method order.
    pub operations: Vec<Operation>,
    /// What was left out or renamed, and why, in the document's order.
    pub notes: Vec<Note>,
}

/// One operation of a document, as a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// The tool's name: the `operationId`, or method and path, in MCP's tool-name alphabet.
    pub name: String,
    /// The summary and the description, as the document wrote them.
    pub description: String,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template (`/invoices/{id}`), byte for byte as the document writes it.
    pub path: String,
    /// Its parameters, in the document's order.
    pub parameters: Vec<Parameter>,
    /// Its request body (the input's `body` field), if it takes one.
    pub body: Option<Body>,
    /// The input schema: a JSON object schema of the parameters and `body`, `$ref`s inlined.
    pub input_schema: Map<String, Value>,
}

/// A parameter of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    /// Its name in the request.
    pub name: String,
    /// The input's field that holds it: its name, unless another parameter has that name.
    pub field: String,
    /// Where it goes.
    pub location: Location,
    /// Whether the operation requires it.
    pub required: bool,
    /// How its value is written.
    pub style: Style,
    /// Whether an array's or object's items are written each on its own.
    pub explode: bool,
    /// Whether a query value's reserved characters are sent as they are.
    pub allow_reserved: bool,
    /// Whether its value is sent as JSON text (a parameter described by `content`).
    pub json: bool,
    /// Where the document declares it, as a JSON pointer.
    pub at: String,
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

impl Location {
    /// The word the document uses for it (`in`).
    pub fn word(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
        }
    }
}

/// What reading a document left out or changed, like a compiler's warning: which operation,
/// where in the document, why, and what would change it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Note {
    /// An operation that is not served.
    #[error("{operation} is left out: {problem}")]
    LeftOut {
        /// The operation (`GET /a`).
        operation: String,
        /// Why, and where.
        problem: ImportError,
    },
    /// A name given so that it is one of a kind.
    #[error("{operation}: {at}: {what} is {to:?} in the tool, since {why}")]
    Renamed {
        /// The operation (`GET /a`).
        operation: String,
        /// Where, as a JSON pointer.
        at: String,
        /// What was renamed.
        what: String,
        /// Its name now.
        to: String,
        /// Why.
        why: String,
    },
    /// A parameter the document implies but does not declare, which the tool takes.
    #[error("{operation}: {at}: {what} is added to the tool, since {why}")]
    Added {
        /// The operation (`GET /a`).
        operation: String,
        /// Where, as a JSON pointer.
        at: String,
        /// Which parameter.
        what: String,
        /// Why.
        why: String,
    },
    /// A parameter the tool does not take.
    #[error("{operation}: {at}: {what} is not in the tool's input, since {why}")]
    Dropped {
        /// The operation (`GET /a`).
        operation: String,
        /// Where, as a JSON pointer.
        at: String,
        /// Which parameter.
        what: String,
        /// Why.
        why: String,
    },
}

/// Why a document, or one operation of it, cannot be read as tools. Each message says where
/// and what was expected.
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
    /// A schema that contains itself, which an input schema with its `$ref`s inlined cannot.
    #[error("{at}: a recursive schema (the $ref {reference:?} is inside itself), which the tool cannot describe")]
    Recursive {
        /// Where the schema is used.
        at: String,
        /// The `$ref` met again.
        reference: String,
    },
    /// Something of the specification these tools do not carry.
    #[error("{at}: {what} is not supported; {fix}")]
    Unsupported {
        /// Where.
        at: String,
        /// What.
        what: String,
        /// What the tools do instead, or what would make it work.
        fix: &'static str,
    },
    /// An operation past one of the bounds.
    #[error("{at}: {what}")]
    TooBig {
        /// Where.
        at: String,
        /// Which bound.
        what: String,
    },
    /// A document past one of the bounds.
    #[error("the document is too large: {0}")]
    TooLarge(String),
    /// A document with no operation to serve.
    #[error("nothing to serve: {0}")]
    NothingToServe(String),
}

/// Reads every operation of `document` as a tool, in path order, then method order; each one
/// the tools cannot carry is left out, with a note.
pub fn import(document: &Value) -> Result<Imported, ImportError> {
    let root = document.as_object().ok_or_else(|| ImportError::NotOpenApi(format!("it is {}", kind(document))))?;
    match root.get("openapi") {
        Some(Value::String(version)) if version.starts_with("3.") => {}
        Some(Value::String(version)) => {
            return Err(ImportError::NotOpenApi(format!("its \"openapi\" is {:?}", cut(version))));
        }
        Some(other) => return Err(ImportError::NotOpenApi(format!("its \"openapi\" is {}", kind(other)))),
        None => return Err(ImportError::NotOpenApi("it has no \"openapi\" version".into())),
    }
    // OpenAPI 3.1 lets a document hold only webhooks or components: nothing a call reaches.
    let Some(paths) = root.get("paths") else {
        return Err(ImportError::NothingToServe(
            "the document has no \"paths\", so no operation a call can reach (webhooks and components alone are none)"
                .into(),
        ));
    };
    let paths = object_at(Some(paths), "/paths", "an object of paths")?;
    // OpenAPI 3.0 says a schema accepts null with `nullable: true`; the tool's input schema is
    // JSON Schema, which says it with the type `null`.
    let nullable = root.get("openapi").and_then(Value::as_str).is_some_and(|version| version.starts_with("3.0"));
    let mut reader = Reader { document, nodes: 0, operation_nodes: 0, parameters: 0, nullable };
    let mut imported = Imported::default();
    // Each tool's name, and the operation (`GET /a`) it names.
    let mut named: HashMap<String, String> = HashMap::new();
    let mut count = 0usize;
    // `x-` keys are the specification's extensions, no paths.
    for (path, item) in paths.iter().filter(|(path, _)| !path.starts_with("x-")) {
        let at = format!("/paths/{}", pointer_token(path));
        let every = || format!("every operation of {}", shown(path));
        let item = match reader.resolve(item, &at).and_then(|item| object_at(Some(item), &at, "a path item object")) {
            Ok(item) => item,
            Err(problem) => {
                imported.notes.push(Note::LeftOut { operation: every(), problem });
                continue;
            }
        };
        reader.operation_nodes = 0;
        let shared = match item.get("parameters") {
            Some(list) => match reader.parameters(list, &format!("{at}/parameters")) {
                Ok(shared) => shared,
                Err(problem @ ImportError::TooLarge(_)) => return Err(problem),
                Err(problem) => {
                    imported.notes.push(Note::LeftOut { operation: every(), problem });
                    continue;
                }
            },
            None => Vec::new(),
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            count += 1;
            if count > MAX_OPERATIONS {
                return Err(ImportError::TooLarge(format!("more than {MAX_OPERATIONS} operations")));
            }
            let label = format!("{} {}", method.to_ascii_uppercase(), shown(path));
            let at = format!("{at}/{method}");
            reader.operation_nodes = 0;
            match reader.operation(path, method, operation, &shared, &at, &label, &mut imported.notes) {
                Ok(mut operation) => {
                    if let Some(first) = named.get(&operation.name) {
                        // A second operation of the name gets a suffix of its own method and path.
                        let wanted = operation.name.clone();
                        let key = format!("{} {path}", operation.method);
                        let mut name = names::suffixed(&wanted, &key);
                        let mut attempt = 0;
                        while named.contains_key(&name) {
                            attempt += 1;
                            name = names::suffixed(&wanted, &format!("{key} {attempt}"));
                        }
                        imported.notes.push(Note::Renamed {
                            operation: label.clone(),
                            at: format!("{at}/operationId"),
                            what: "its name".into(),
                            to: name.clone(),
                            why: format!("{first} is named {wanted:?}"),
                        });
                        operation.name = name;
                    }
                    named.insert(operation.name.clone(), label);
                    imported.operations.push(operation);
                }
                Err(problem @ ImportError::TooLarge(_)) => return Err(problem),
                Err(problem) => imported.notes.push(Note::LeftOut { operation: label, problem }),
            }
        }
    }
    if imported.operations.is_empty() {
        return Err(ImportError::NothingToServe(match imported.notes.first() {
            None => "its \"paths\" hold no operation".into(),
            Some(first) => format!("every operation is left out; the first: {first}"),
        }));
    }
    Ok(imported)
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
    operation_nodes: usize,
    parameters: usize,
    /// Whether `nullable: true` is OpenAPI 3.0's, to be written as JSON Schema's `null`.
    nullable: bool,
}

impl<'a> Reader<'a> {
    #[allow(clippy::too_many_arguments)]
    fn operation(
        &mut self,
        path: &str,
        method: &str,
        operation: &'a Value,
        shared: &[ReadParameter],
        at: &str,
        label: &str,
        noted: &mut Vec<Note>,
    ) -> Result<Operation, ImportError> {
        // Noted only once the operation is served: one left out is one note, its reason.
        let mut notes = Vec::new();
        let operation = object_at(Some(self.resolve(operation, at)?), at, "an operation object")?;
        let name = match operation.get("operationId") {
            Some(Value::String(id)) if !names::tool_name(id).is_empty() => names::tool_name(id),
            Some(Value::String(_)) | None => names::tool_name(&format!("{method}_{path}")),
            Some(other) => {
                return Err(ImportError::Malformed {
                    at: format!("{at}/operationId"),
                    expected: "a string",
                    found: kind(other).into(),
                });
            }
        };
        let own = match operation.get("parameters") {
            Some(list) => self.parameters(list, &format!("{at}/parameters"))?,
            None => Vec::new(),
        };
        // A `{name}` of the path that no parameter declares (a slip many documents make) is
        // still one the call must fill: taken as a string, and noted.
        let declared: HashSet<&str> = shared
            .iter()
            .chain(&own)
            .filter(|read| read.parameter.location == Location::Path)
            .map(|read| read.parameter.name.as_str())
            .collect();
        let mut implied = Vec::new();
        for slot in slots(path) {
            if declared.contains(slot) || implied.iter().any(|read: &ReadParameter| read.parameter.name == slot) {
                continue;
            }
            notes.push(Note::Added {
                operation: label.into(),
                at: at.into(),
                what: format!("the path parameter {:?}", cut(slot)),
                why: format!("the path names {{{}}}, which no parameter declares", shown(slot)),
            });
            implied.push(ReadParameter {
                parameter: Parameter {
                    name: slot.to_owned(),
                    field: slot.to_owned(),
                    location: Location::Path,
                    required: true,
                    style: Style::Simple,
                    explode: false,
                    allow_reserved: false,
                    json: false,
                    at: at.into(),
                },
                schema: serde_json::json!({"type": "string"}),
            });
        }
        // An operation's parameter replaces the path item's of the same name and place, where
        // the path item had it; found by an index, so that many parameters cost no more each.
        let mut parameters: Vec<&ReadParameter> = Vec::with_capacity(shared.len() + own.len());
        let mut index: HashMap<(&str, Location), usize> = HashMap::with_capacity(shared.len() + own.len());
        for parameter in shared.iter().chain(&own).chain(&implied) {
            match index.entry((parameter.parameter.name.as_str(), parameter.parameter.location)) {
                Entry::Occupied(slot) => parameters[*slot.get()] = parameter,
                Entry::Vacant(slot) => {
                    slot.insert(parameters.len());
                    parameters.push(parameter);
                }
            }
        }
        let body = match operation.get("requestBody") {
            Some(body) => self.body(body, &format!("{at}/requestBody"))?,
            None => None,
        };
        // Each field of the input is one of a kind: a parameter whose name another has (or
        // `body`, beside a request body) takes its place's word before it (`query_list_id`).
        let mut taken: HashSet<String> = HashSet::new();
        if body.is_some() {
            taken.insert("body".into());
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut read_parameters = Vec::with_capacity(parameters.len());
        for read in parameters {
            let mut parameter = read.parameter.clone();
            // A path parameter the path does not name would be asked of every call, and unused.
            if parameter.location == Location::Path && !slots(path).any(|slot| slot == parameter.name) {
                notes.push(Note::Dropped {
                    operation: label.into(),
                    at: parameter.at.clone(),
                    what: format!("the path parameter {:?}", cut(&parameter.name)),
                    why: format!("the path {} has no {{{}}}", shown(path), shown(&parameter.name)),
                });
                continue;
            }
            if taken.contains(&parameter.name) {
                let wanted = format!("{}_{}", parameter.location.word(), parameter.name);
                let mut field = wanted.clone();
                let mut attempt = 1;
                while taken.contains(&field) {
                    attempt += 1;
                    field = format!("{wanted}_{attempt}");
                }
                let why = if parameter.name == "body" && body.is_some() {
                    "\"body\" is the request body's field".to_owned()
                } else {
                    format!("another parameter is named {:?}", cut(&parameter.name))
                };
                notes.push(Note::Renamed {
                    operation: label.into(),
                    at: parameter.at.clone(),
                    what: format!("the {} parameter {:?}", parameter.location.word(), cut(&parameter.name)),
                    to: field.clone(),
                    why,
                });
                parameter.field = field;
            }
            taken.insert(parameter.field.clone());
            properties.insert(parameter.field.clone(), read.schema.clone());
            if parameter.required {
                required.push(Value::String(parameter.field.clone()));
            }
            read_parameters.push(parameter);
        }
        if let Some((body, schema)) = &body {
            properties.insert("body".into(), schema.clone());
            if body.required {
                required.push(Value::String("body".into()));
            }
        }
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
        noted.extend(notes);
        Ok(Operation {
            name,
            description,
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            parameters: read_parameters,
            body: body.map(|(body, _)| body),
            input_schema,
        })
    }

    /// A request body: the media type sent (JSON first, then any `+json`, form fields,
    /// multipart, plain text, bytes), its schema inlined, and how its fields are written; none
    /// when it names no media type, as nothing could be sent.
    fn body(&mut self, body: &'a Value, at: &str) -> Result<Option<(Body, Value)>, ImportError> {
        let body = object_at(Some(self.resolve(body, at)?), at, "a request body object")?;
        let content = object_at(body.get("content"), &format!("{at}/content"), "an object of media types")?;
        if content.is_empty() {
            return Ok(None);
        }
        // A media type is sent as the request's Content-Type: it must be one a header can carry.
        let sendable = |media: &str| media.bytes().all(|b| (0x20..0x7f).contains(&b));
        let chosen = content
            .iter()
            .filter(|(media, _)| sendable(media))
            .filter_map(|(media, item)| BodyKind::of(media).map(|(rank, kind)| (rank, kind, media, item)))
            .min_by_key(|(rank, ..)| *rank);
        let Some((_, kind, media, item)) = chosen else {
            let media: Vec<&str> = content.keys().map(String::as_str).take(5).collect();
            return Err(ImportError::Unsupported {
                at: format!("{at}/content"),
                what: format!("a request body of {}", cut(&media.join(", ")).escape_debug()),
                fix: "a tool sends JSON, form fields, multipart form data, plain text or bytes",
            });
        };
        let media_at = format!("{at}/content/{}", pointer_token(media));
        let mut schema = match item.get("schema") {
            Some(schema) => self.schema(schema, &format!("{media_at}/schema"), 0, &mut Vec::new())?,
            None => Value::Object(Map::new()),
        };
        let mut fields = std::collections::BTreeMap::new();
        if matches!(kind, BodyKind::Form | BodyKind::Multipart) {
            if let Some(Value::Object(encodings)) = item.get("encoding") {
                for (field, encoding) in encodings {
                    let style = encoding
                        .get("style")
                        .and_then(Value::as_str)
                        .and_then(|style| Style::named(style, Location::Query));
                    fields.insert(
                        field.clone(),
                        FieldEncoding {
                            style,
                            explode: encoding.get("explode").and_then(Value::as_bool),
                            allow_reserved: encoding.get("allowReserved").and_then(Value::as_bool).unwrap_or(false),
                            content_type: encoding
                                .get("contentType")
                                .and_then(Value::as_str)
                                .filter(|media| sendable(media) && !media.contains(','))
                                .map(str::to_owned),
                            binary: false,
                        },
                    );
                }
            }
            // A file of a multipart body comes from the model as base64, which its schema says.
            if kind == BodyKind::Multipart
                && let Some(Value::Object(properties)) = schema.get_mut("properties")
            {
                for (field, property) in properties.iter_mut() {
                    if body::mark_file(property) {
                        fields.entry(field.clone()).or_default().binary = true;
                    }
                }
            }
        }
        let required = body.get("required").and_then(Value::as_bool).unwrap_or(false);
        Ok(Some((Body { required, media_type: media.clone(), kind, fields }, schema)))
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
            let entry = object_at(Some(self.resolve(entry, &at)?), &at, "a parameter object")?;
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
                    return Err(ImportError::Unsupported {
                        at: format!("{at}/in"),
                        what: "a cookie parameter".into(),
                        fix: "a tool sends no cookies",
                    });
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
                        what: format!("the header name {:?}, which HTTP does not allow,", cut(&name)),
                        fix: "a header's name is a token of letters, digits and !#$%&'*+-.^_`|~",
                    });
                }
                if is_framing_header(&name) {
                    return Err(ImportError::Unsupported {
                        at: format!("{at}/name"),
                        what: format!(
                            "the header parameter {:?}, which would let a call set how the request is framed or routed,",
                            cut(&name)
                        ),
                        fix: "the HTTP client sets it",
                    });
                }
            }
            let style = match entry.get("style") {
                None => Style::default_for(location),
                Some(Value::String(style)) => {
                    Style::named(style, location).ok_or_else(|| ImportError::Unsupported {
                        at: format!("{at}/style"),
                        what: format!("the style {:?} for a {} parameter", cut(style), location.word()),
                        fix: "a query parameter takes form, spaceDelimited, pipeDelimited or deepObject, a path parameter simple, label or matrix, a header simple",
                    })?
                }
                Some(other) => {
                    return Err(ImportError::Malformed {
                        at: format!("{at}/style"),
                        expected: "a string",
                        found: kind(other).into(),
                    });
                }
            };
            let flag = |key: &str| entry.get(key).and_then(Value::as_bool);
            let required = location == Location::Path || flag("required").unwrap_or(false);
            // A parameter described by `content` instead of `schema` is sent as its media
            // type's text: JSON, the one the tools write.
            let content = entry.get("content").and_then(Value::as_object).and_then(|content| content.iter().next());
            let (mut schema, json) = match (entry.get("schema"), content) {
                (Some(schema), _) => (self.schema(schema, &format!("{at}/schema"), 0, &mut Vec::new())?, false),
                (None, Some((media, item))) => match item.get("schema") {
                    Some(schema) => {
                        let schema_at = format!("{at}/content/{}/schema", pointer_token(media));
                        (self.schema(schema, &schema_at, 0, &mut Vec::new())?, true)
                    }
                    None => (Value::Object(Map::new()), true),
                },
                (None, None) => (Value::Object(Map::new()), false),
            };
            if let (Value::Object(schema), Some(Value::String(description))) = (&mut schema, entry.get("description")) {
                schema.entry("description").or_insert_with(|| Value::String(description.clone()));
            }
            let parameter = Parameter {
                field: name.clone(),
                name,
                location,
                required,
                style,
                explode: flag("explode").unwrap_or(style == Style::Form),
                allow_reserved: flag("allowReserved").unwrap_or(false),
                json,
                at,
            };
            read.push(ReadParameter { parameter, schema });
        }
        Ok(read)
    }
}

/// The `{name}`s of a path template, in order.
fn slots(path: &str) -> impl Iterator<Item = &str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .filter(|name| !name.is_empty())
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

/// A key as a JSON pointer token, for a message.
fn pointer_token(key: &str) -> String {
    shown(&key.replace('~', "~0").replace('/', "~1"))
}

/// A text from the document as a message shows it: cut, its control characters escaped.
pub(crate) fn shown(text: &str) -> String {
    let cut = cut(text);
    if cut.chars().any(|c| c.is_control() || c == '\u{202e}') { cut.escape_debug().to_string() } else { cut }
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

    /// The notes of a document of `GET /ok` and `/a`'s `operation`, which is left out.
    fn left_out(operation: Value) -> String {
        let imported = import(&document(json!({"/ok": {"get": {}}, "/a": {"get": operation}}))).unwrap();
        assert_eq!(imported.operations.iter().map(|operation| operation.name.as_str()).collect::<Vec<_>>(), ["get_ok"]);
        let [note] = imported.notes.as_slice() else { panic!("{:?}", imported.notes) };
        assert!(matches!(note, Note::LeftOut { .. }), "{note}");
        note.to_string()
    }

    fn names(imported: &Imported) -> Vec<&str> {
        imported.operations.iter().map(|operation| operation.name.as_str()).collect()
    }

    #[test]
    fn parameters_and_body_become_one_input_schema() {
        let operations = import(&document(json!({"/invoices/{id}": {
            "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}, "description": "The invoice id."}],
            "get": {"operationId": "get invoice!", "summary": "Read one.", "description": "Read one invoice.",
                    "parameters": [{"$ref": "#/components/parameters/Limit"}, {"name": "X-Trace", "in": "header"}]},
            "put": {"requestBody": {"required": true, "content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Alias"}}}}},
        }})))
        .unwrap()
        .operations;
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
            get.parameters.iter().map(|p| (p.name.as_str(), p.location, p.style, p.explode)).collect::<Vec<_>>(),
            [
                ("id", Location::Path, Style::Simple, false),
                ("limit", Location::Query, Style::Form, true),
                ("X-Trace", Location::Header, Style::Simple, false)
            ]
        );
        assert_eq!((put.name.as_str(), put.description.as_str()), ("put_invoices_id", "PUT /invoices/{id}"));
        let body = put.body.as_ref().unwrap();
        assert_eq!(
            (body.required, body.media_type.as_str(), body.kind),
            (true, "application/json; charset=utf-8", BodyKind::Json)
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
        assert_eq!(
            said(json!({"openapi": "3.0.3", "paths": []})),
            "/paths: expected an object of paths, found an array"
        );
        assert_eq!(said(json!({"openapi": "3.0.3", "paths": {}})), "nothing to serve: its \"paths\" hold no operation");
        assert_eq!(
            said(json!({"openapi": "3.0.3", "paths": {"x-generated": "by a tool"}})),
            "nothing to serve: its \"paths\" hold no operation"
        );
        // A document whose every operation is left out says the first reason.
        assert_eq!(
            said(document(json!({"/a": {"get": {"parameters": [{"name": "x", "in": "body"}]}}}))),
            "nothing to serve: every operation is left out; the first: GET /a is left out: /paths/~1a/get/parameters/0/in: expected \"path\", \"query\", \"header\" or \"cookie\", found a string"
        );
        assert_eq!(
            said(json!({"openapi": "3.0.3", "paths": {"/a": "x"}})),
            "nothing to serve: every operation is left out; the first: every operation of /a is left out: /paths/~1a: expected a path item object, found a string"
        );
    }

    #[test]
    fn one_operation_never_refuses_the_document() {
        assert_eq!(
            left_out(json!({"parameters": [{"name": "x", "in": "body"}]})),
            "GET /a is left out: /paths/~1a/get/parameters/0/in: expected \"path\", \"query\", \"header\" or \"cookie\", found a string"
        );
        assert_eq!(
            left_out(json!({"parameters": [{"name": "session", "in": "cookie", "required": true}]})),
            "GET /a is left out: /paths/~1a/get/parameters/0/in: a cookie parameter is not supported; a tool sends no cookies"
        );
        assert_eq!(
            left_out(json!({"parameters": [{"name": "X Y", "in": "header"}]})),
            "GET /a is left out: /paths/~1a/get/parameters/0/name: the header name \"X Y\", which HTTP does not allow, is not supported; a header's name is a token of letters, digits and !#$%&'*+-.^_`|~"
        );
        assert_eq!(
            left_out(json!({"requestBody": {"content": {"text/csv": {}, "application/*": {}}}})),
            "GET /a is left out: /paths/~1a/get/requestBody/content: a request body of text/csv, application/* is not supported; a tool sends JSON, form fields, multipart form data, plain text or bytes"
        );
        assert!(
            left_out(json!({"parameters": [{"$ref": "https://example.com/p.json"}]}))
                .contains("points outside the document")
        );
        assert!(
            left_out(json!({"parameters": [{"$ref": "#/nothing/here"}]})).contains("names nothing in the document")
        );
        assert!(
            left_out(
                json!({"parameters": [{"name": "l", "in": "query", "schema": {"$ref": "#/components/schemas/Loop"}}]})
            )
            .contains("$ref")
        );
        assert_eq!(
            left_out(
                json!({"parameters": [{"name": "t", "in": "query", "schema": {"$ref": "#/components/schemas/Tree"}}]})
            ),
            "GET /a is left out: /paths/~1a/get/parameters/0/schema/properties/child: a recursive schema (the $ref \"#/components/schemas/Tree\" is inside itself), which the tool cannot describe"
        );
        assert_eq!(
            left_out(json!({"parameters": [{"name": "f", "in": "query", "style": "matrix"}]})),
            "GET /a is left out: /paths/~1a/get/parameters/0/style: the style \"matrix\" for a query parameter is not supported; a query parameter takes form, spaceDelimited, pipeDelimited or deepObject, a path parameter simple, label or matrix, a header simple"
        );
        assert!(
            left_out(json!({"operationId": 7}))
                .contains("/paths/~1a/get/operationId: expected a string, found a number")
        );
        // One operation left out is one note, its reason: nothing it would have added or renamed.
        let imported = import(&document(json!({"/ok": {"get": {}}, "/x/{id}": {"post": {
            "parameters": [{"name": "ghost", "in": "path"}], "requestBody": {"content": {"text/csv": {}}}}}})))
        .unwrap();
        assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
        // What the document ignores is ignored, and the operation served.
        let ignored = json!({"/a": {"get": {"parameters": [
            {"name": "Authorization", "in": "header", "required": true},
            {"name": "accept", "in": "header"},
            {"name": "X-Trace", "in": "header"}]}}});
        let operations = import(&document(ignored)).unwrap().operations;
        assert_eq!(operations[0].parameters.len(), 1);
        assert_eq!(
            operations[0].input_schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["X-Trace"]
        );
        assert!(operations[0].input_schema.get("required").is_none());
    }

    #[test]
    fn header_parameters_that_frame_or_route_the_request_leave_their_operation_out() {
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
            let note = left_out(json!({"parameters": [{"name": name, "in": "header"}]}));
            assert_eq!(
                note,
                format!(
                    "GET /a is left out: /paths/~1a/get/parameters/0/name: the header parameter {name:?}, which would let a call set how the request is framed or routed, is not supported; the HTTP client sets it"
                ),
            );
        }
        // Named so as a query parameter, it is only a name.
        assert!(import(&document(json!({"/a": {"get": {"parameters": [{"name": "host", "in": "query"}]}}}))).is_ok());
    }

    #[test]
    fn a_name_in_two_places_is_renamed_by_its_place() {
        // SendGrid: `list_id` in the path and in the query.
        let imported = import(&document(json!({"/marketing/lists/{list_id}": {
            "parameters": [{"name": "list_id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "delete": {"operationId": "DeleteList", "parameters": [
                {"name": "list_id", "in": "query", "schema": {"type": "string"}},
                {"name": "body", "in": "query", "schema": {"type": "boolean"}}],
                "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
        }})))
        .unwrap();
        let operation = &imported.operations[0];
        assert_eq!(
            operation.parameters.iter().map(|p| (p.field.as_str(), p.name.as_str(), p.location)).collect::<Vec<_>>(),
            [
                ("list_id", "list_id", Location::Path),
                ("query_list_id", "list_id", Location::Query),
                ("query_body", "body", Location::Query)
            ]
        );
        assert_eq!(
            operation.input_schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["list_id", "query_list_id", "query_body", "body"]
        );
        assert_eq!(
            imported.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "DELETE /marketing/lists/{list_id}: /paths/~1marketing~1lists~1{list_id}/delete/parameters/0: the query parameter \"list_id\" is \"query_list_id\" in the tool, since another parameter is named \"list_id\"",
                "DELETE /marketing/lists/{list_id}: /paths/~1marketing~1lists~1{list_id}/delete/parameters/1: the query parameter \"body\" is \"query_body\" in the tool, since \"body\" is the request body's field",
            ]
        );
    }

    #[test]
    fn the_path_s_names_and_its_parameters_agree() {
        let imported = import(&document(json!({"/orgs/{org}/repos/{repo}": {"get": {"parameters": [
            {"name": "org", "in": "path", "required": true},
            {"name": "ghost", "in": "path", "required": true}]}}})))
        .unwrap();
        let operation = &imported.operations[0];
        assert_eq!(
            operation.parameters.iter().map(|p| (p.name.as_str(), p.location)).collect::<Vec<_>>(),
            [("org", Location::Path), ("repo", Location::Path)]
        );
        assert_eq!(operation.input_schema["properties"]["repo"], json!({"type": "string"}));
        assert_eq!(operation.input_schema["required"], json!(["org", "repo"]));
        assert_eq!(
            imported.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "GET /orgs/{org}/repos/{repo}: /paths/~1orgs~1{org}~1repos~1{repo}/get: the path parameter \"repo\" is added to the tool, since the path names {repo}, which no parameter declares",
                "GET /orgs/{org}/repos/{repo}: /paths/~1orgs~1{org}~1repos~1{repo}/get/parameters/1: the path parameter \"ghost\" is not in the tool's input, since the path /orgs/{org}/repos/{repo} has no {ghost}",
            ]
        );
    }

    #[test]
    fn names_stay_one_of_a_kind() {
        let long =
            |tail: &str| format!("{}{tail}", "listAccountSubscriptionsForTheZoneOfTheAccountWithFilters".repeat(2));
        let imported = import(&document(json!({
            "/a": {"get": {"operationId": long("ByName")}, "post": {"operationId": long("ById")}},
            "/b": {"get": {"operationId": "same"}},
            "/c": {"get": {"operationId": "same"}},
        })))
        .unwrap();
        let names = names(&imported);
        assert_eq!(names.len(), 4);
        assert_ne!(names[0], names[1]);
        assert!(names[..2].iter().all(|name| name.len() == 64), "{names:?}");
        assert_eq!(names[2], "same");
        assert_eq!(names[3], names::suffixed("same", "GET /c"));
        assert!(names[3].starts_with("same_") && names[3].len() == 13, "{names:?}");
        assert_eq!(
            imported.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [format!(
                "GET /c: /paths/~1c/get/operationId: its name is {:?} in the tool, since GET /b is named \"same\"",
                names[3]
            )]
        );
        // The same on every run: a name is a function of the document alone.
        assert_eq!(
            names,
            self::names(
                &import(&document(json!({
                    "/a": {"get": {"operationId": long("ByName")}, "post": {"operationId": long("ById")}},
                    "/b": {"get": {"operationId": "same"}},
                    "/c": {"get": {"operationId": "same"}},
                })))
                .unwrap()
            )
        );
    }

    #[test]
    fn deep_schemas_are_not_recursive_ones() {
        // Forty schemas each holding the next, three JSON levels apart: deep, and no cycle.
        let mut schemas = Map::new();
        schemas.insert("S40".into(), json!({"type": "string"}));
        for level in (0..40).rev() {
            schemas.insert(
                format!("S{level}"),
                json!({"type": "object", "properties": {"next": {"$ref": format!("#/components/schemas/S{}", level + 1)}}}),
            );
        }
        let document = json!({"openapi": "3.1.0", "components": {"schemas": schemas}, "paths": {"/a": {"post": {
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}});
        let imported = import(&document).unwrap();
        assert!(imported.notes.is_empty(), "{:?}", imported.notes);
        let mut schema = &imported.operations[0].input_schema["properties"]["body"];
        for _ in 0..40 {
            schema = &schema["properties"]["next"];
        }
        assert_eq!(schema, &json!({"type": "string"}));
        // A schema inside itself is one, found however shallow.
        assert!(
            left_out(json!({"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tree"}}}}}))
                .contains("a recursive schema")
        );
    }

    #[test]
    fn references_are_percent_decoded() {
        // PagerDuty: `#/paths/~1a%7Bid%7D` is the path item `/a{id}`.
        let imported = import(&json!({"openapi": "3.0.3", "paths": {
            "/a{id}": {"get": {"operationId": "first", "parameters": [{"name": "id", "in": "path", "schema": {"$ref": "#/components/schemas/The%20Id"}}]}},
            "/b/{id}": {"get": {"operationId": "second", "parameters": [{"$ref": "#/paths/~1a%7Bid%7D/get/parameters/0"}]}},
        }, "components": {"schemas": {"The Id": {"type": "integer"}}}}))
        .unwrap();
        assert!(imported.notes.is_empty(), "{:?}", imported.notes);
        assert_eq!(imported.operations[1].input_schema["properties"]["id"], json!({"type": "integer"}));
        // A reference's own description (OpenAPI 3.1) is the one the tool shows.
        let imported = import(&json!({"openapi": "3.1.0", "paths": {"/a": {"get": {"parameters": [
            {"name": "id", "in": "query", "schema": {"$ref": "#/components/schemas/Id", "description": "The invoice's id."}}]}}},
            "components": {"schemas": {"Id": {"type": "string", "description": "An id."}}}}))
        .unwrap();
        assert_eq!(
            imported.operations[0].input_schema["properties"]["id"],
            json!({"type": "string", "description": "The invoice's id."})
        );
    }

    #[test]
    fn as_many_operations_as_a_mount_takes() {
        // Cloudflare has 1,533 operations.
        let paths: Map<String, Value> = (0..1_533).map(|n| (format!("/r{n}"), json!({"get": {}}))).collect();
        assert_eq!(import(&json!({"openapi": "3.0.3", "paths": paths})).unwrap().operations.len(), 1_533);
        let paths: Map<String, Value> = (0..=MAX_OPERATIONS).map(|n| (format!("/r{n}"), json!({"get": {}}))).collect();
        assert_eq!(
            said(json!({"openapi": "3.0.3", "paths": paths})),
            "the document is too large: more than 10000 operations"
        );
    }

    #[test]
    fn a_document_of_webhooks_only_has_nothing_to_serve() {
        assert_eq!(
            said(json!({"openapi": "3.1.0", "webhooks": {"newPet": {"post": {}}}, "components": {}})),
            "nothing to serve: the document has no \"paths\", so no operation a call can reach (webhooks and components alone are none)"
        );
    }

    #[test]
    fn request_bodies_as_the_document_says() {
        let body = |content: Value| {
            let imported = import(&document(json!({"/a": {"post": {"requestBody": {"content": content}}}}))).unwrap();
            imported.operations.into_iter().next().unwrap()
        };
        let chosen = |content: Value| {
            let operation = body(content);
            let body = operation.body.unwrap();
            (body.media_type, body.kind)
        };
        assert_eq!(
            chosen(json!({"application/xml": {}, "application/json": {}, "application/x-www-form-urlencoded": {}})),
            ("application/json".into(), BodyKind::Json)
        );
        assert_eq!(
            chosen(json!({"application/vnd.api+json": {}, "multipart/form-data": {}})),
            ("application/vnd.api+json".into(), BodyKind::Json)
        );
        assert_eq!(
            chosen(json!({"multipart/form-data": {}, "application/x-www-form-urlencoded": {}})),
            ("application/x-www-form-urlencoded".into(), BodyKind::Form)
        );
        assert_eq!(chosen(json!({"text/plain": {}, "text/csv": {}})), ("text/plain".into(), BodyKind::Text));
        assert_eq!(
            chosen(json!({"application/octet-stream": {}})),
            ("application/octet-stream".into(), BodyKind::Text)
        );
        // A body of no media type sends nothing: the operation is served without one.
        let bare = body(json!({}));
        assert!(bare.body.is_none() && bare.input_schema["properties"].get("body").is_none());
        // Stripe: form fields, each written as its `encoding` says.
        let stripe = body(json!({"application/x-www-form-urlencoded": {
            "schema": {"type": "object", "properties": {"expand": {"type": "array"}, "amount": {"type": "integer"}}},
            "encoding": {"expand": {"style": "deepObject", "explode": true}}}}));
        let fields = &stripe.body.unwrap().fields;
        assert_eq!(fields["expand"].style, Some(Style::DeepObject));
        assert_eq!(fields["expand"].explode, Some(true));
        // Spotify's upload: a file's bytes come as base64, which its description says.
        let upload = body(json!({"multipart/form-data": {
            "schema": {"type": "object", "properties": {
                "image": {"type": "string", "format": "binary", "description": "The cover."},
                "name": {"type": "string"}}},
            "encoding": {"image": {"contentType": "image/jpeg"}}}}));
        assert_eq!(
            upload.input_schema["properties"]["body"]["properties"]["image"],
            json!({"type": "string", "contentEncoding": "base64",
                   "description": "The cover. A file: send its bytes in base64; the gateway decodes them and sends the bytes."})
        );
        let fields = &upload.body.unwrap().fields;
        assert!(fields["image"].binary && !fields.contains_key("name"));
        assert_eq!(fields["image"].content_type.as_deref(), Some("image/jpeg"));
    }

    #[test]
    fn a_required_name_described_under_another_case_stays_callable() {
        // Xero's createFolder: `required: ["name"]` beside `properties: {"Name": ...}`.
        let imported = import(&document(json!({"/Folders": {"put": {"requestBody": {"content": {"application/json": {
            "schema": {"type": "object", "required": ["name"], "properties": {"Name": {"type": "string"}}}}}}}}})))
        .unwrap();
        assert_eq!(
            imported.operations[0].input_schema["properties"]["body"],
            json!({"type": "object", "required": ["name"], "properties": {"Name": {"type": "string"}, "name": {"type": "string"}}})
        );
    }

    #[test]
    fn an_openapi_3_0_nullable_schema_takes_null() {
        let body = json!({"type": "object", "properties": {
            "note": {"type": "string", "nullable": true},
            "status": {"type": "string", "enum": ["open", "paid"], "nullable": true},
            "invoice": {"allOf": [{"$ref": "#/components/schemas/Invoice"}], "nullable": true},
            "nullable": {"type": "boolean"},
        }});
        let paths = json!({"/a": {"post": {"requestBody": {"content": {"application/json": {"schema": body}}}}}});
        let imported = import(&document(paths.clone())).unwrap();
        let properties = &imported.operations[0].input_schema["properties"]["body"]["properties"];
        assert_eq!(properties["note"], json!({"type": ["string", "null"]}));
        assert_eq!(properties["status"], json!({"type": ["string", "null"], "enum": ["open", "paid", null]}));
        assert_eq!(properties["invoice"]["anyOf"][1], json!({"type": "null"}));
        assert_eq!(properties["invoice"]["anyOf"][0]["allOf"][0]["required"], json!(["amount_cents"]));
        assert_eq!(properties["nullable"], json!({"type": "boolean"}), "a property named so is only a name");
        // OpenAPI 3.1 is JSON Schema: `nullable` is no keyword of it and is left as written.
        let mut v31 = document(paths);
        v31["openapi"] = json!("3.1.0");
        let imported = import(&v31).unwrap();
        let note = &imported.operations[0].input_schema["properties"]["body"]["properties"]["note"];
        assert_eq!(note, &json!({"type": "string", "nullable": true}));
    }

    #[test]
    fn parameter_styles_are_read() {
        let imported = import(&document(json!({"/a/{id}": {"get": {"parameters": [
            {"name": "id", "in": "path", "style": "matrix", "explode": true},
            {"name": "filter", "in": "query", "style": "deepObject", "explode": true},
            {"name": "ids", "in": "query", "explode": false, "allowReserved": true},
            {"name": "where", "in": "query", "content": {"application/json": {"schema": {"type": "object"}}}}]}}})))
        .unwrap();
        assert_eq!(
            imported.operations[0]
                .parameters
                .iter()
                .map(|p| (p.name.as_str(), p.style, p.explode, p.allow_reserved, p.json))
                .collect::<Vec<_>>(),
            [
                ("id", Style::Matrix, true, false, false),
                ("filter", Style::DeepObject, true, false, false),
                ("ids", Style::Form, false, true, false),
                ("where", Style::Form, true, false, true)
            ]
        );
        assert_eq!(imported.operations[0].input_schema["properties"]["where"], json!({"type": "object"}));
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
        let operations =
            import(&document(json!({"/a": {"parameters": shared, "get": {"parameters": own}}}))).unwrap().operations;
        let parameters = &operations[0].parameters;
        assert_eq!(parameters.len(), 4_001);
        assert!(parameters.iter().take(4_000).all(|parameter| parameter.required), "the operation's replaced them");
        assert_eq!((parameters[4_000].name.as_str(), parameters[4_000].location), ("X-Trace", Location::Header));
        // 60,000 parameters of one operation: refused by count, before any is read.
        let refused = said(document(json!({"/a": {"get": {"parameters": many(60_000)}}})));
        assert!(refused.contains("it declares more than 50000 parameters"), "{refused}");
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
        let document = json!({"openapi": "3.1.0", "components": {"schemas": schemas}, "paths": {
            "/a": {"get": {"parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/L40"}}]}},
            "/b": {"get": {}}}});
        let imported = import(&document).unwrap();
        assert_eq!(names(&imported), ["get_b"]);
        assert!(
            imported.notes[0]
                .to_string()
                .contains("its schemas hold more than 100000 values once their $refs are inlined"),
            "{}",
            imported.notes[0]
        );
    }
}
