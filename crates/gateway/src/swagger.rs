//! Swagger 2.0 documents converted to OpenAPI 3.0.3, so that one importer reads both.
//!
//! The conversion is pure and moves each part where OpenAPI 3 keeps it: `host`, `basePath`
//! and `schemes` become `servers`; `definitions`, `parameters`, `responses` and
//! `securityDefinitions` become `components`; a `body` parameter becomes the operation's
//! `requestBody`, with the operation's `consumes` (else the document's, else
//! `application/json`) as its media types; `formData` parameters become one form body
//! (`multipart/form-data` when a field is a file or `consumes` names only it, else
//! `application/x-www-form-urlencoded`); a parameter's `type`, `format`, `items`, `enum` and
//! bounds move into its `schema`, and its `collectionFormat` becomes `style` and `explode`
//! (`tsv`, which OpenAPI 3 has no style for, stays `form` without `explode`, and is kept as
//! `x-collectionFormat`); `produces` becomes each response's media types; `x-nullable` becomes
//! `nullable`; and every local `$ref` is rewritten to the component it now names. Schemas are
//! otherwise carried as written: JSON Schema that OpenAPI 3.0 does not allow (a list of types,
//! `items` as a list) stays as it is, as a tool's input schema is JSON Schema and reads it.
//!
//! A document is any JSON a server or a file hands over: a part of the wrong shape is a
//! [`SwaggerError`] saying where (a JSON pointer) and what was expected, never a panic.
//!
//! ```
//! use serde_json::json;
//!
//! let swagger = json!({
//!     "swagger": "2.0",
//!     "info": {"title": "Pets", "version": "1"},
//!     "host": "pets.example.com",
//!     "basePath": "/v2",
//!     "schemes": ["https"],
//!     "paths": {"/pets/{id}": {"get": {
//!         "parameters": [{"name": "id", "in": "path", "required": true, "type": "integer"}],
//!         "responses": {"200": {"description": "A pet", "schema": {"$ref": "#/definitions/Pet"}}},
//!     }}},
//!     "definitions": {"Pet": {"type": "object"}},
//! });
//! let openapi = mcp_fusion_gateway::swagger::convert(&swagger).unwrap();
//! assert_eq!(openapi["servers"], json!([{"url": "https://pets.example.com/v2"}]));
//! assert_eq!(openapi["paths"]["/pets/{id}"]["get"]["parameters"][0]["schema"], json!({"type": "integer"}));
//! assert_eq!(
//!     openapi["paths"]["/pets/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"],
//!     json!({"$ref": "#/components/schemas/Pet"}),
//! );
//! ```

use std::cell::Cell;

use mcp_fusion_wire::value_kind as kind;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

/// How deeply schemas may nest: far deeper than any document's, and shallow enough that
/// reading one never overflows the stack.
pub const MAX_DEPTH: usize = 200;

/// How many media types one `consumes` or `produces` may list: each copies the schema it
/// carries.
pub const MAX_MEDIA_TYPES: usize = 32;

/// How many schema values the media types after each content's first may copy in all: a
/// document listing many media types for many large schemas must not grow many times over.
pub const MAX_COPIED_VALUES: usize = 2_000_000;

/// The methods a Swagger 2.0 path item holds operations under.
const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// The keywords of a non-body parameter (and of a header, and of `items`) that describe its
/// value, which OpenAPI 3 keeps in a `schema`.
const SCHEMA_KEYWORDS: [&str; 16] = [
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
];

/// Why a Swagger 2.0 document cannot be converted. Each message says where and what was
/// expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SwaggerError {
    /// Not a Swagger 2.0 document.
    #[error("not a Swagger 2.0 document: {0}; expected a JSON object with \"swagger\": \"2.0\"")]
    NotSwagger(String),
    /// A part of the document has the wrong shape.
    #[error("{at}: expected {expected}, found {found}")]
    Malformed {
        /// A JSON pointer into the document.
        at: String,
        /// What the specification allows there.
        expected: &'static str,
        /// What was there instead.
        found: String,
    },
    /// A local `$ref` that names nothing.
    #[error("{at}: the $ref {reference:?} {reason}")]
    Reference {
        /// A JSON pointer into the document.
        at: String,
        /// The reference, cut to 80 characters.
        reference: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Something Swagger 2.0 itself forbids, or more than is read.
    #[error("{at}: {what}")]
    Refused {
        /// A JSON pointer into the document.
        at: String,
        /// What was found.
        what: String,
    },
}

/// The OpenAPI 3.0.3 document that says what the Swagger 2.0 document `swagger` says.
pub fn convert(swagger: &Value) -> Result<Value, SwaggerError> {
    let root = swagger.as_object().ok_or_else(|| SwaggerError::NotSwagger(format!("it is {}", kind(swagger))))?;
    match root.get("swagger") {
        Some(version) if is_swagger_2(version) => {}
        Some(Value::String(version)) => {
            return Err(SwaggerError::NotSwagger(format!("its \"swagger\" is {:?}", cut(version))));
        }
        Some(other) => return Err(SwaggerError::NotSwagger(format!("its \"swagger\" is {}", kind(other)))),
        None => return Err(SwaggerError::NotSwagger("it has no \"swagger\" version".into())),
    }
    let converter = Converter {
        document: swagger,
        consumes: media_types(root.get("consumes"), "/consumes")?,
        produces: media_types(root.get("produces"), "/produces")?,
        copied: Cell::new(0),
    };
    let mut openapi = Map::new();
    openapi.insert("openapi".into(), Value::String("3.0.3".into()));
    for (key, value) in root {
        if matches!(key.as_str(), "info" | "tags" | "externalDocs" | "security") || key.starts_with("x-") {
            openapi.insert(key.clone(), value.clone());
        }
    }
    if let Some(servers) = servers(root)? {
        openapi.insert("servers".into(), servers);
    }
    let components = converter.components(root)?;
    let paths = object_at(root.get("paths"), "/paths", "an object of paths")?;
    let mut converted = Map::new();
    for (path, item) in paths {
        let at = format!("/paths/{}", token(path));
        if path.starts_with("x-") {
            converted.insert(path.clone(), item.clone());
            continue;
        }
        converted.insert(path.clone(), converter.path_item(item, &at)?);
    }
    openapi.insert("paths".into(), Value::Object(converted));
    if !components.is_empty() {
        openapi.insert("components".into(), Value::Object(components));
    }
    Ok(Value::Object(openapi))
}

/// Whether a `swagger` field says 2.0: as the text the specification asks for, or as the
/// number an unquoted `swagger: 2.0` is in YAML.
pub fn is_swagger_2(version: &Value) -> bool {
    match version {
        Value::String(version) => version == "2.0",
        Value::Number(version) => version.as_f64() == Some(2.0),
        _ => false,
    }
}

/// `servers` from `host`, `basePath` and `schemes`: https first, as the one the gateway
/// calls is the first; without `schemes`, a server relative to where the document came from.
fn servers(root: &Map<String, Value>) -> Result<Option<Value>, SwaggerError> {
    let text = |key: &str| match root.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(other) => {
            Err(SwaggerError::Malformed { at: format!("/{key}"), expected: "a string", found: kind(other).into() })
        }
    };
    let base = text("basePath")?.unwrap_or("").trim_end_matches('/');
    let Some(host) = text("host")? else {
        return Ok((!base.is_empty()).then(|| json!([{"url": base}])));
    };
    let mut schemes = Vec::new();
    if let Some(listed) = root.get("schemes") {
        let listed = array_at(Some(listed), "/schemes", "a list of schemes")?;
        for (index, scheme) in listed.iter().enumerate() {
            let scheme = scheme.as_str().ok_or_else(|| SwaggerError::Malformed {
                at: format!("/schemes/{index}"),
                expected: "a string",
                found: kind(scheme).into(),
            })?;
            // ws and wss serve no HTTP operation.
            let scheme = scheme.to_ascii_lowercase();
            if matches!(scheme.as_str(), "https" | "http") && !schemes.contains(&scheme) {
                schemes.push(scheme);
            }
        }
    }
    schemes.sort_by_key(|scheme| scheme != "https");
    let host = host.trim_end_matches('/');
    // Some documents write their host as a URL, scheme and all: it says where they are served.
    if host.starts_with("https://") || host.starts_with("http://") {
        return Ok(Some(json!([{"url": format!("{host}{base}")}])));
    }
    if schemes.is_empty() {
        return Ok(Some(json!([{"url": format!("//{host}{base}")}])));
    }
    Ok(Some(Value::Array(schemes.iter().map(|scheme| json!({"url": format!("{scheme}://{host}{base}")})).collect())))
}

/// The document, and its own `consumes` and `produces`.
struct Converter<'a> {
    document: &'a Value,
    consumes: Vec<String>,
    produces: Vec<String>,
    /// Schema values copied so far for media types after the first.
    copied: Cell<usize>,
}

/// A `body` parameter, made a request body once the operation's `consumes` is known.
#[derive(Clone)]
enum Body {
    /// A body parameter of the operation or its path item, and where it is.
    Own(Map<String, Value>, String),
    /// The name of one of the document's `parameters`.
    Shared(String),
}

/// An operation's parameters, as OpenAPI 3 splits them.
#[derive(Default)]
struct Parameters {
    /// Path, query and header parameters, converted.
    list: Vec<Value>,
    /// The `body` parameter, or a reference to a shared one.
    body: Option<Body>,
    /// The `formData` parameters: each field's name, its parameter, and where that is.
    form: Vec<(String, Map<String, Value>, String)>,
}

impl Converter<'_> {
    /// `components`: the document's definitions, shared parameters, responses and security
    /// schemes.
    fn components(&self, root: &Map<String, Value>) -> Result<Map<String, Value>, SwaggerError> {
        let mut components = Map::new();
        if let Some(definitions) = root.get("definitions") {
            let definitions = object_at(Some(definitions), "/definitions", "an object of schemas")?;
            let mut schemas = Map::new();
            for (name, schema) in definitions {
                schemas.insert(name.clone(), self.schema(schema, &format!("/definitions/{}", token(name)), 0)?);
            }
            components.insert("schemas".into(), Value::Object(schemas));
        }
        if let Some(shared) = root.get("parameters") {
            let shared = object_at(Some(shared), "/parameters", "an object of parameters")?;
            let (mut parameters, mut bodies) = (Map::new(), Map::new());
            for (name, parameter) in shared {
                let at = format!("/parameters/{}", token(name));
                let object = object_at(Some(parameter), &at, "a parameter object")?;
                match location(object, &at)? {
                    "body" => {
                        bodies.insert(name.clone(), self.body(object, &self.consumes, &at)?);
                    }
                    // A form field is part of the one body of each operation that names it.
                    "formData" => {}
                    _ => {
                        parameters.insert(name.clone(), self.parameter(object, &at)?);
                    }
                }
            }
            if !parameters.is_empty() {
                components.insert("parameters".into(), Value::Object(parameters));
            }
            if !bodies.is_empty() {
                components.insert("requestBodies".into(), Value::Object(bodies));
            }
        }
        if let Some(shared) = root.get("responses") {
            let shared = object_at(Some(shared), "/responses", "an object of responses")?;
            let mut responses = Map::new();
            for (name, response) in shared {
                let at = format!("/responses/{}", token(name));
                responses.insert(name.clone(), self.response(response, &self.produces, &at)?);
            }
            components.insert("responses".into(), Value::Object(responses));
        }
        if let Some(schemes) = root.get("securityDefinitions") {
            let schemes = object_at(Some(schemes), "/securityDefinitions", "an object of security schemes")?;
            let mut converted = Map::new();
            for (name, scheme) in schemes {
                converted
                    .insert(name.clone(), security_scheme(scheme, &format!("/securityDefinitions/{}", token(name)))?);
            }
            components.insert("securitySchemes".into(), Value::Object(converted));
        }
        Ok(components)
    }

    /// A path item: its operations converted, its own parameters kept for each of them, and
    /// a `$ref` kept as written.
    fn path_item(&self, item: &Value, at: &str) -> Result<Value, SwaggerError> {
        let item = object_at(Some(item), at, "a path item object")?;
        let shared = match item.get("parameters") {
            Some(list) => self.parameters(list, &format!("{at}/parameters"))?,
            None => Parameters::default(),
        };
        let mut converted = Map::new();
        for (key, value) in item {
            if key == "$ref" || key.starts_with("x-") {
                converted.insert(key.clone(), value.clone());
            }
        }
        if !shared.list.is_empty() {
            converted.insert("parameters".into(), Value::Array(shared.list.clone()));
        }
        for method in METHODS {
            if let Some(operation) = item.get(method) {
                converted.insert(method.into(), self.operation(operation, &shared, &format!("{at}/{method}"))?);
            }
        }
        Ok(Value::Object(converted))
    }

    /// An operation, with the body and form fields of its path item where it has none.
    fn operation(&self, operation: &Value, shared: &Parameters, at: &str) -> Result<Value, SwaggerError> {
        let operation = object_at(Some(operation), at, "an operation object")?;
        let consumes = match operation.get("consumes") {
            Some(listed) => media_types(Some(listed), &format!("{at}/consumes"))?,
            None => self.consumes.clone(),
        };
        let produces = match operation.get("produces") {
            Some(listed) => media_types(Some(listed), &format!("{at}/produces"))?,
            None => self.produces.clone(),
        };
        let own = match operation.get("parameters") {
            Some(list) => self.parameters(list, &format!("{at}/parameters"))?,
            None => Parameters::default(),
        };
        let mut converted = Map::new();
        for (key, value) in operation {
            if matches!(
                key.as_str(),
                "tags" | "summary" | "description" | "externalDocs" | "operationId" | "deprecated" | "security"
            ) || key.starts_with("x-")
            {
                converted.insert(key.clone(), value.clone());
            }
        }
        if !own.list.is_empty() {
            converted.insert("parameters".into(), Value::Array(own.list));
        }
        let mut form: Vec<(String, Map<String, Value>, String)> =
            shared.form.iter().filter(|(name, ..)| !own.form.iter().any(|(own, ..)| own == name)).cloned().collect();
        form.extend(own.form);
        let body = match own.body.or_else(|| shared.body.clone()) {
            None => None,
            Some(Body::Own(parameter, at)) => Some(self.body(&parameter, &consumes, &at)?),
            // The shared body is written with the document's media types: an operation that
            // consumes others has its own copy.
            Some(Body::Shared(name)) if consumes == self.consumes => {
                Some(json!({"$ref": format!("#/components/requestBodies/{name}")}))
            }
            Some(Body::Shared(name)) => {
                let at = format!("/parameters/{name}");
                let parameter = object_at(self.document.pointer(&at), &at, "a parameter object")?;
                Some(self.body(parameter, &consumes, &at)?)
            }
        };
        match (body, form.is_empty()) {
            (Some(_), false) => {
                return Err(SwaggerError::Refused {
                    at: format!("{at}/parameters"),
                    what: "a body parameter beside formData parameters, which Swagger 2.0 forbids".into(),
                });
            }
            (Some(body), true) => {
                converted.insert("requestBody".into(), body);
            }
            (None, false) => {
                converted.insert("requestBody".into(), self.form(&form, &consumes)?);
            }
            (None, true) => {}
        }
        let responses = object_at(operation.get("responses"), &format!("{at}/responses"), "an object of responses")?;
        let mut converted_responses = Map::new();
        for (code, response) in responses {
            let response_at = format!("{at}/responses/{}", token(code));
            if code.starts_with("x-") {
                converted_responses.insert(code.clone(), response.clone());
            } else {
                converted_responses.insert(code.clone(), self.response(response, &produces, &response_at)?);
            }
        }
        converted.insert("responses".into(), Value::Object(converted_responses));
        Ok(Value::Object(converted))
    }

    /// A `parameters` list, split into parameters, a body and form fields.
    fn parameters(&self, list: &Value, at: &str) -> Result<Parameters, SwaggerError> {
        let list = array_at(Some(list), at, "a list of parameters")?;
        let mut split = Parameters::default();
        for (index, parameter) in list.iter().enumerate() {
            let at = format!("{at}/{index}");
            let object = object_at(Some(parameter), &at, "a parameter object")?;
            let (object, at, shared) = match object.get("$ref") {
                None => (object, at, None),
                Some(reference) => {
                    let reference_at = format!("{at}/$ref");
                    let reference = reference.as_str().ok_or_else(|| SwaggerError::Malformed {
                        at: reference_at.clone(),
                        expected: "a string",
                        found: kind(reference).into(),
                    })?;
                    if !reference.starts_with('#') {
                        // Another file's parameter: the importer says it reads no other file.
                        split.list.push(parameter.clone());
                        continue;
                    }
                    let (target, pointer) = self.target(reference, &at)?;
                    let object = object_at(Some(target), &pointer, "a parameter object")?;
                    let shared = pointer.strip_prefix("/parameters/").map(str::to_owned);
                    (object, pointer, shared)
                }
            };
            let place = location(object, &at)?;
            // A body parameter's name names nothing on the wire, and documents leave it out.
            let name = object.get("name");
            let name = match name.and_then(Value::as_str) {
                Some(name) => name,
                None if place == "body" => "body",
                None => {
                    return Err(SwaggerError::Malformed {
                        at: format!("{at}/name"),
                        expected: "a string",
                        found: name.map_or("nothing", kind).into(),
                    });
                }
            };
            match place {
                "body" => {
                    if split.body.is_some() {
                        return Err(SwaggerError::Refused {
                            at: at.clone(),
                            what: "a second body parameter, where Swagger 2.0 allows one".into(),
                        });
                    }
                    split.body = Some(match shared {
                        Some(name) => Body::Shared(name),
                        None => Body::Own(object.clone(), at),
                    });
                }
                "formData" => split.form.push((name.to_owned(), object.clone(), at)),
                _ => split.list.push(match shared {
                    Some(name) => json!({"$ref": format!("#/components/parameters/{name}")}),
                    None => self.parameter(object, &at)?,
                }),
            }
        }
        Ok(split)
    }

    /// A path, query or header parameter: its value's keywords in a `schema`, its
    /// `collectionFormat` as `style` and `explode`.
    fn parameter(&self, parameter: &Map<String, Value>, at: &str) -> Result<Value, SwaggerError> {
        let place = location(parameter, at)?;
        let mut converted = Map::new();
        for (key, value) in parameter {
            match key.as_str() {
                "name" | "in" | "description" | "required" | "allowEmptyValue" => {
                    converted.insert(key.clone(), value.clone());
                }
                "x-example" => {
                    converted.insert("example".into(), value.clone());
                }
                _ if key.starts_with("x-") && key != "x-nullable" => {
                    converted.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        if place == "path" {
            converted.insert("required".into(), Value::Bool(true));
        }
        if parameter.get("type").and_then(Value::as_str) == Some("array") {
            let format = match parameter.get("collectionFormat") {
                None => "csv",
                Some(Value::String(format)) => format.as_str(),
                Some(other) => {
                    return Err(SwaggerError::Malformed {
                        at: format!("{at}/collectionFormat"),
                        expected: "one of csv, ssv, tsv, pipes, multi",
                        found: kind(other).into(),
                    });
                }
            };
            let (style, explode) = match (format, place) {
                ("csv", "query") => ("form", false),
                ("ssv", "query") => ("spaceDelimited", false),
                ("pipes", "query") => ("pipeDelimited", false),
                ("multi", "query") => ("form", true),
                ("csv", _) => ("simple", false),
                // No OpenAPI 3 style says these (tsv anywhere, the others in a path or a
                // header): the nearest, with the document's word kept beside it.
                ("tsv", "query") => {
                    converted.insert("x-collectionFormat".into(), Value::String(format.into()));
                    ("form", false)
                }
                ("ssv" | "pipes" | "multi" | "tsv", _) => {
                    converted.insert("x-collectionFormat".into(), Value::String(format.into()));
                    ("simple", false)
                }
                (other, _) => {
                    return Err(SwaggerError::Malformed {
                        at: format!("{at}/collectionFormat"),
                        expected: "one of csv, ssv, tsv, pipes, multi",
                        found: format!("{:?}", cut(other)),
                    });
                }
            };
            converted.insert("style".into(), Value::String(style.into()));
            converted.insert("explode".into(), Value::Bool(explode));
        }
        converted.insert("schema".into(), self.value_schema(parameter, at, 0)?);
        Ok(Value::Object(converted))
    }

    /// The schema of a non-body parameter, a header or an `items`: its value's keywords.
    fn value_schema(&self, described: &Map<String, Value>, at: &str, depth: usize) -> Result<Value, SwaggerError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(at));
        }
        if described.contains_key("$ref") {
            return self.schema(&Value::Object(described.clone()), at, depth);
        }
        // Some documents describe a query or form field with an OpenAPI 3 `schema` instead of
        // its own keywords: that schema says what the field holds.
        if let (None, Some(schema)) = (described.get("type"), described.get("schema")) {
            return self.schema(schema, &format!("{at}/schema"), depth + 1);
        }
        let mut schema = Map::new();
        for keyword in SCHEMA_KEYWORDS {
            let Some(value) = described.get(keyword) else { continue };
            match keyword {
                "items" => {
                    let items_at = format!("{at}/items");
                    let items = object_at(Some(value), &items_at, "an items object")?;
                    schema.insert("items".into(), self.value_schema(items, &items_at, depth + 1)?);
                }
                "type" if value == "file" => {
                    schema.insert("type".into(), Value::String("string".into()));
                    schema.insert("format".into(), Value::String("binary".into()));
                }
                "format" if schema.contains_key("format") => {}
                _ => {
                    schema.insert(keyword.into(), value.clone());
                }
            }
        }
        if let Some(nullable) = described.get("x-nullable") {
            schema.insert("nullable".into(), nullable.clone());
        }
        Ok(Value::Object(schema))
    }

    /// The request body a `body` parameter makes, in each of the media types consumed.
    fn body(&self, parameter: &Map<String, Value>, consumes: &[String], at: &str) -> Result<Value, SwaggerError> {
        let schema = match parameter.get("schema") {
            Some(schema) => self.schema(schema, &format!("{at}/schema"), 0)?,
            None => Value::Object(Map::new()),
        };
        let media: Vec<&str> =
            if consumes.is_empty() { vec!["application/json"] } else { consumes.iter().map(String::as_str).collect() };
        let mut content = Map::new();
        for (index, media) in media.into_iter().enumerate() {
            content.insert(media.to_owned(), json!({"schema": self.copy(&schema, index, at)?}));
        }
        let mut body = Map::new();
        if let Some(description) = parameter.get("description") {
            body.insert("description".into(), description.clone());
        }
        body.insert("content".into(), Value::Object(content));
        if let Some(required) = parameter.get("required") {
            body.insert("required".into(), required.clone());
        }
        for (key, value) in parameter {
            if key.starts_with("x-") {
                body.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(body))
    }

    /// The one form body of an operation's `formData` fields.
    fn form(
        &self,
        fields: &[(String, Map<String, Value>, String)],
        consumes: &[String],
    ) -> Result<Value, SwaggerError> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut encoding = Map::new();
        let mut file = false;
        for (name, parameter, at) in fields {
            let mut schema = self.value_schema(parameter, at, 0)?;
            file |= parameter.get("type").and_then(Value::as_str) == Some("file");
            if let (Some(description), Value::Object(schema)) = (parameter.get("description"), &mut schema) {
                schema.insert("description".into(), description.clone());
            }
            if parameter.get("required") == Some(&Value::Bool(true)) {
                required.push(Value::String(name.clone()));
            }
            if parameter.get("type").and_then(Value::as_str) == Some("array") {
                // Each field's collectionFormat, as a parameter's, for the URL-encoded form.
                let style = self.parameter(&with_location(parameter, "query"), at)?;
                if let (Some(style), Some(explode)) = (style.get("style"), style.get("explode")) {
                    encoding.insert(name.clone(), json!({"style": style, "explode": explode}));
                }
            }
            properties.insert(name.clone(), schema);
        }
        let form_types: Vec<&str> = consumes
            .iter()
            .map(String::as_str)
            .filter(|media| {
                let essence = media.split(';').next().unwrap_or_default().trim();
                essence.eq_ignore_ascii_case("multipart/form-data")
                    || essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
            .collect();
        let media: Vec<&str> = if file {
            // A file goes only in a multipart form.
            vec![
                form_types
                    .iter()
                    .copied()
                    .find(|media| media.starts_with("multipart/"))
                    .unwrap_or("multipart/form-data"),
            ]
        } else if form_types.is_empty() {
            vec!["application/x-www-form-urlencoded"]
        } else {
            form_types
        };
        let mut schema = Map::new();
        schema.insert("type".into(), Value::String("object".into()));
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required.clone()));
        }
        let mut content = Map::new();
        let schema = Value::Object(schema);
        for (index, media) in media.into_iter().enumerate() {
            let mut media_type = Map::new();
            media_type.insert("schema".into(), self.copy(&schema, index, "/paths")?);
            if media.starts_with("application/x-www-form-urlencoded") && !encoding.is_empty() {
                media_type.insert("encoding".into(), Value::Object(encoding.clone()));
            }
            content.insert(media.to_owned(), Value::Object(media_type));
        }
        let mut body = Map::new();
        body.insert("content".into(), Value::Object(content));
        if !required.is_empty() {
            body.insert("required".into(), Value::Bool(true));
        }
        Ok(Value::Object(body))
    }

    /// A response: its schema in each of the media types produced, its headers' keywords in
    /// schemas.
    fn response(&self, response: &Value, produces: &[String], at: &str) -> Result<Value, SwaggerError> {
        let response = object_at(Some(response), at, "a response object")?;
        if let Some(reference) = response.get("$ref") {
            return Ok(json!({"$ref": self.reference(reference, &format!("{at}/$ref"))?}));
        }
        let mut converted = Map::new();
        for (key, value) in response {
            if key == "description" || key.starts_with("x-") {
                converted.insert(key.clone(), value.clone());
            }
        }
        if !converted.contains_key("description") {
            converted.insert("description".into(), Value::String(String::new()));
        }
        if let Some(headers) = response.get("headers") {
            let headers_at = format!("{at}/headers");
            let headers = object_at(Some(headers), &headers_at, "an object of headers")?;
            let mut converted_headers = Map::new();
            for (name, header) in headers {
                let header_at = format!("{headers_at}/{}", token(name));
                let header = object_at(Some(header), &header_at, "a header object")?;
                let mut converted_header = Map::new();
                if let Some(description) = header.get("description") {
                    converted_header.insert("description".into(), description.clone());
                }
                converted_header.insert("schema".into(), self.value_schema(header, &header_at, 0)?);
                converted_headers.insert(name.clone(), Value::Object(converted_header));
            }
            converted.insert("headers".into(), Value::Object(converted_headers));
        }
        let schema = match response.get("schema") {
            Some(schema) => Some(self.schema(schema, &format!("{at}/schema"), 0)?),
            None => None,
        };
        let examples = response.get("examples").and_then(Value::as_object);
        let media: Vec<&str> =
            if produces.is_empty() { vec!["application/json"] } else { produces.iter().map(String::as_str).collect() };
        let mut content = Map::new();
        for (index, media) in media.into_iter().enumerate() {
            let example = examples.and_then(|examples| examples.get(media));
            // Without a schema, a media type says something only with its example.
            if schema.is_none() && example.is_none() {
                continue;
            }
            let mut media_type = Map::new();
            if let Some(schema) = &schema {
                media_type.insert("schema".into(), self.copy(schema, index, at)?);
            }
            if let Some(example) = example {
                media_type.insert("example".into(), example.clone());
            }
            content.insert(media.to_owned(), Value::Object(media_type));
        }
        if !content.is_empty() {
            converted.insert("content".into(), Value::Object(content));
        }
        Ok(Value::Object(converted))
    }

    /// `schema` for a content's `index`th media type, counted against [`MAX_COPIED_VALUES`]
    /// after the first.
    fn copy(&self, schema: &Value, index: usize, at: &str) -> Result<Value, SwaggerError> {
        if index > 0 {
            let copied = self.copied.get().saturating_add(size(schema));
            self.copied.set(copied);
            if copied > MAX_COPIED_VALUES {
                return Err(SwaggerError::Refused {
                    at: at.into(),
                    what: format!(
                        "its media types copy more than {MAX_COPIED_VALUES} schema values in all; list fewer in consumes and produces"
                    ),
                });
            }
        }
        Ok(schema.clone())
    }

    /// A schema with its references rewritten, `x-nullable` as `nullable`, a `file` as binary
    /// text, and a discriminator's property named as OpenAPI 3 names it.
    fn schema(&self, schema: &Value, at: &str, depth: usize) -> Result<Value, SwaggerError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(at));
        }
        let object = match schema {
            Value::Object(object) => object,
            Value::Bool(_) => return Ok(schema.clone()),
            other => {
                return Err(SwaggerError::Malformed {
                    at: at.into(),
                    expected: "a schema object",
                    found: kind(other).into(),
                });
            }
        };
        let mut converted = Map::new();
        for (key, value) in object {
            let key_at = format!("{at}/{}", token(key));
            let value = match key.as_str() {
                "$ref" => Value::String(self.reference(value, &key_at)?),
                "x-nullable" => {
                    converted.insert("nullable".into(), value.clone());
                    continue;
                }
                "discriminator" => match value {
                    Value::String(property) => json!({"propertyName": property}),
                    other => other.clone(),
                },
                "type" if value == "file" => {
                    converted.insert("format".into(), Value::String("binary".into()));
                    Value::String("string".into())
                }
                "format" if object.get("type").is_some_and(|kind| kind == "file") => continue,
                "properties" => {
                    let properties = object_at(Some(value), &key_at, "an object of schemas")?;
                    let mut converted_properties = Map::new();
                    for (name, property) in properties {
                        let property = self.schema(property, &format!("{key_at}/{}", token(name)), depth + 1)?;
                        converted_properties.insert(name.clone(), property);
                    }
                    Value::Object(converted_properties)
                }
                "items" if value.is_array() => {
                    let items = array_at(Some(value), &key_at, "a list of schemas")?;
                    let mut converted_items = Vec::with_capacity(items.len());
                    for (index, item) in items.iter().enumerate() {
                        converted_items.push(self.schema(item, &format!("{key_at}/{index}"), depth + 1)?);
                    }
                    Value::Array(converted_items)
                }
                "items" | "additionalProperties" | "not" => self.schema(value, &key_at, depth + 1)?,
                "allOf" | "anyOf" | "oneOf" => {
                    let list = array_at(Some(value), &key_at, "a list of schemas")?;
                    let mut converted_list = Vec::with_capacity(list.len());
                    for (index, item) in list.iter().enumerate() {
                        converted_list.push(self.schema(item, &format!("{key_at}/{index}"), depth + 1)?);
                    }
                    Value::Array(converted_list)
                }
                _ => value.clone(),
            };
            converted.insert(key.clone(), value);
        }
        Ok(Value::Object(converted))
    }

    /// A `$ref`'s new text: a local one checked to name something and pointed at the
    /// component it became; another file's kept as written.
    fn reference(&self, reference: &Value, at: &str) -> Result<String, SwaggerError> {
        let reference = reference.as_str().ok_or_else(|| SwaggerError::Malformed {
            at: at.into(),
            expected: "a string",
            found: kind(reference).into(),
        })?;
        if !reference.starts_with('#') {
            return Ok(reference.to_owned());
        }
        let (_, pointer) = self.target(reference, at)?;
        Ok(rewritten(&format!("#{pointer}")))
    }

    /// What the local `reference` names in the Swagger document, and the JSON pointer that
    /// names it: as written, or with its percent escapes decoded (a reference is a URI, and
    /// some generators escape `[` and `]` of generic type names in it).
    fn target(&self, reference: &str, at: &str) -> Result<(&Value, String), SwaggerError> {
        let refused = |reason| SwaggerError::Reference { at: at.into(), reference: cut(reference), reason };
        let pointer = reference.strip_prefix('#').ok_or_else(|| refused("is not a local reference"))?;
        if let Some(target) = self.document.pointer(pointer) {
            return Ok((target, pointer.to_owned()));
        }
        let decoded =
            percent_decode_str(pointer).decode_utf8().map_err(|_| refused("names nothing in the document"))?;
        match self.document.pointer(&decoded) {
            Some(target) => Ok((target, decoded.into_owned())),
            None => Err(refused("names nothing in the document")),
        }
    }
}

/// How many values `value` holds, itself included.
fn size(value: &Value) -> usize {
    match value {
        Value::Object(object) => 1 + object.values().map(size).sum::<usize>(),
        Value::Array(list) => 1 + list.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// `reference` pointed at the component its target became.
fn rewritten(reference: &str) -> String {
    for (from, to) in [
        ("#/definitions/", "#/components/schemas/"),
        ("#/parameters/", "#/components/parameters/"),
        ("#/responses/", "#/components/responses/"),
    ] {
        if let Some(rest) = reference.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    reference.to_owned()
}

/// A form field's parameter as a query parameter, for the style its collectionFormat makes.
fn with_location(parameter: &Map<String, Value>, place: &str) -> Map<String, Value> {
    let mut parameter = parameter.clone();
    parameter.insert("in".into(), Value::String(place.into()));
    parameter
}

/// A parameter's `in`.
fn location<'a>(parameter: &'a Map<String, Value>, at: &str) -> Result<&'a str, SwaggerError> {
    const PLACES: &str = "one of body, formData, query, header, path";
    match parameter.get("in") {
        Some(Value::String(place)) if matches!(place.as_str(), "body" | "formData" | "query" | "header" | "path") => {
            Ok(place)
        }
        Some(Value::String(place)) => Err(SwaggerError::Malformed {
            at: format!("{at}/in"),
            expected: PLACES,
            found: format!("{:?}", cut(place)),
        }),
        other => Err(SwaggerError::Malformed {
            at: format!("{at}/in"),
            expected: PLACES,
            found: other.map_or("nothing", kind).into(),
        }),
    }
}

/// A `securityDefinitions` entry as an OpenAPI 3 security scheme.
fn security_scheme(scheme: &Value, at: &str) -> Result<Value, SwaggerError> {
    let scheme = object_at(Some(scheme), at, "a security scheme object")?;
    let text = |key: &str| scheme.get(key).cloned().unwrap_or(Value::Null);
    let mut converted = Map::new();
    match scheme.get("type").and_then(Value::as_str) {
        Some("basic") => {
            converted.insert("type".into(), json!("http"));
            converted.insert("scheme".into(), json!("basic"));
        }
        Some("apiKey") => {
            converted.insert("type".into(), json!("apiKey"));
            converted.insert("name".into(), text("name"));
            converted.insert("in".into(), text("in"));
        }
        Some("oauth2") => {
            let scopes = scheme.get("scopes").cloned().unwrap_or_else(|| json!({}));
            let (flow, urls): (&str, &[&str]) = match scheme.get("flow").and_then(Value::as_str) {
                Some("implicit") => ("implicit", &["authorizationUrl"]),
                Some("password") => ("password", &["tokenUrl"]),
                Some("application") => ("clientCredentials", &["tokenUrl"]),
                Some("accessCode") => ("authorizationCode", &["authorizationUrl", "tokenUrl"]),
                _ => {
                    return Err(SwaggerError::Malformed {
                        at: format!("{at}/flow"),
                        expected: "one of implicit, password, application, accessCode",
                        found: scheme.get("flow").map_or("nothing", kind).into(),
                    });
                }
            };
            let mut converted_flow = Map::new();
            for url in urls {
                converted_flow.insert((*url).into(), text(url));
            }
            converted_flow.insert("scopes".into(), scopes);
            converted.insert("type".into(), json!("oauth2"));
            let mut flows = Map::new();
            flows.insert(flow.into(), Value::Object(converted_flow));
            converted.insert("flows".into(), Value::Object(flows));
        }
        _ => {
            return Err(SwaggerError::Malformed {
                at: format!("{at}/type"),
                expected: "one of basic, apiKey, oauth2",
                found: scheme.get("type").map_or("nothing", kind).into(),
            });
        }
    }
    for (key, value) in scheme {
        if key == "description" || key.starts_with("x-") {
            converted.insert(key.clone(), value.clone());
        }
    }
    Ok(Value::Object(converted))
}

/// A `consumes` or `produces`: a list of media types (one alone is read as a list of one).
fn media_types(listed: Option<&Value>, at: &str) -> Result<Vec<String>, SwaggerError> {
    let items = match listed {
        None => return Ok(Vec::new()),
        Some(Value::String(media)) => return Ok(vec![media.clone()]),
        Some(listed) => array_at(Some(listed), at, "a list of media types")?,
    };
    let mut media = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let item = item.as_str().ok_or_else(|| SwaggerError::Malformed {
            at: format!("{at}/{index}"),
            expected: "a media type (a string)",
            found: kind(item).into(),
        })?;
        if !media.iter().any(|seen| seen == item) {
            media.push(item.to_owned());
        }
    }
    if media.len() > MAX_MEDIA_TYPES {
        return Err(SwaggerError::Refused {
            at: at.into(),
            what: format!("{} media types, more than the {MAX_MEDIA_TYPES} read", media.len()),
        });
    }
    Ok(media)
}

/// The error for a schema nested deeper than [`MAX_DEPTH`].
fn too_deep(at: &str) -> SwaggerError {
    SwaggerError::Refused { at: cut(at), what: format!("schemas nested deeper than {MAX_DEPTH} levels") }
}

/// The object at `at`, or what was there instead.
fn object_at<'a>(
    value: Option<&'a Value>,
    at: &str,
    expected: &'static str,
) -> Result<&'a Map<String, Value>, SwaggerError> {
    match value {
        Some(Value::Object(object)) => Ok(object),
        other => Err(SwaggerError::Malformed { at: at.into(), expected, found: other.map_or("nothing", kind).into() }),
    }
}

/// The list at `at`, or what was there instead.
fn array_at<'a>(value: Option<&'a Value>, at: &str, expected: &'static str) -> Result<&'a Vec<Value>, SwaggerError> {
    match value {
        Some(Value::Array(list)) => Ok(list),
        other => Err(SwaggerError::Malformed { at: at.into(), expected, found: other.map_or("nothing", kind).into() }),
    }
}

/// A key as a JSON pointer token.
fn token(key: &str) -> String {
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

    /// The classic Swagger Petstore 2.0, cut to one operation of each kind.
    fn petstore() -> Value {
        json!({
            "swagger": "2.0",
            "info": {"title": "Swagger Petstore", "version": "1.0.6"},
            "host": "petstore.swagger.io",
            "basePath": "/v2",
            "tags": [{"name": "pet", "description": "Everything about your Pets"}],
            "schemes": ["http", "https"],
            "paths": {
                "/pet/{petId}/uploadImage": {"post": {
                    "tags": ["pet"],
                    "summary": "uploads an image",
                    "operationId": "uploadFile",
                    "consumes": ["multipart/form-data"],
                    "produces": ["application/json"],
                    "parameters": [
                        {"name": "petId", "in": "path", "description": "ID of pet to update", "required": true, "type": "integer", "format": "int64"},
                        {"name": "additionalMetadata", "in": "formData", "description": "Additional data to pass to server", "required": false, "type": "string"},
                        {"name": "file", "in": "formData", "description": "file to upload", "required": false, "type": "file"},
                    ],
                    "responses": {"200": {"description": "successful operation", "schema": {"$ref": "#/definitions/ApiResponse"}}},
                    "security": [{"petstore_auth": ["write:pets", "read:pets"]}],
                }},
                "/pet": {"post": {
                    "operationId": "addPet",
                    "consumes": ["application/json", "application/xml"],
                    "produces": ["application/json", "application/xml"],
                    "parameters": [{"in": "body", "name": "body", "description": "Pet object that needs to be added to the store", "required": true, "schema": {"$ref": "#/definitions/Pet"}}],
                    "responses": {"405": {"description": "Invalid input"}},
                }},
                "/pet/findByStatus": {"get": {
                    "operationId": "findPetsByStatus",
                    "produces": ["application/json", "application/xml"],
                    "parameters": [{"name": "status", "in": "query", "required": true, "type": "array",
                        "items": {"type": "string", "enum": ["available", "pending", "sold"], "default": "available"},
                        "collectionFormat": "multi"}],
                    "responses": {
                        "200": {"description": "successful operation", "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}}},
                        "400": {"description": "Invalid status value"},
                    },
                }},
                "/pet/{petId}": {"post": {
                    "operationId": "updatePetWithForm",
                    "consumes": ["application/x-www-form-urlencoded"],
                    "produces": ["application/json"],
                    "parameters": [
                        {"name": "petId", "in": "path", "description": "ID of pet that needs to be updated", "required": true, "type": "integer", "format": "int64"},
                        {"name": "name", "in": "formData", "description": "Updated name of the pet", "required": false, "type": "string"},
                        {"name": "status", "in": "formData", "description": "Updated status of the pet", "required": false, "type": "string"},
                    ],
                    "responses": {"405": {"description": "Invalid input"}},
                }},
            },
            "securityDefinitions": {
                "api_key": {"type": "apiKey", "name": "api_key", "in": "header"},
                "petstore_auth": {"type": "oauth2", "authorizationUrl": "https://petstore.swagger.io/oauth/authorize", "flow": "implicit",
                    "scopes": {"read:pets": "read your pets", "write:pets": "modify pets in your account"}},
            },
            "definitions": {
                "ApiResponse": {"type": "object", "properties": {"code": {"type": "integer", "format": "int32"}, "type": {"type": "string"}, "message": {"type": "string"}}},
                "Category": {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}, "name": {"type": "string"}}, "xml": {"name": "Category"}},
                "Pet": {"type": "object", "required": ["name", "photoUrls"], "properties": {
                    "id": {"type": "integer", "format": "int64"},
                    "category": {"$ref": "#/definitions/Category"},
                    "name": {"type": "string", "example": "doggie"},
                    "photoUrls": {"type": "array", "xml": {"wrapped": true}, "items": {"type": "string", "xml": {"name": "photoUrl"}}},
                }, "xml": {"name": "Pet"}},
            },
            "externalDocs": {"description": "Find out more about Swagger", "url": "http://swagger.io"},
        })
    }

    /// Slack's Web API as its Swagger 2.0 document writes it: forms, a shared token field.
    fn slack() -> Value {
        json!({
            "swagger": "2.0",
            "info": {"title": "Slack Web API", "version": "1.7.0"},
            "host": "slack.com",
            "basePath": "/api",
            "schemes": ["https"],
            "consumes": ["application/x-www-form-urlencoded", "application/json"],
            "produces": ["application/json"],
            "parameters": {
                "token": {"name": "token", "in": "formData", "required": true, "type": "string", "description": "Authentication token."},
                "channel": {"name": "channel", "in": "query", "type": "string"},
            },
            "securityDefinitions": {"slackAuth": {"type": "oauth2", "flow": "accessCode",
                "authorizationUrl": "https://slack.com/oauth/authorize", "tokenUrl": "https://slack.com/api/oauth.access",
                "scopes": {"chat:write:bot": "Send messages as bot"}}},
            "paths": {
                "/chat.postMessage": {"post": {
                    "operationId": "chat_postMessage",
                    "parameters": [
                        {"$ref": "#/parameters/token"},
                        {"in": "formData", "name": "channel", "required": true, "type": "string"},
                        {"in": "formData", "name": "attachments", "type": "array", "items": {"type": "string"}},
                        {"in": "formData", "name": "as_user", "type": "boolean"},
                    ],
                    "security": [{"slackAuth": ["chat:write:bot"]}],
                    "responses": {"200": {"description": "Typical success response", "schema": {"$ref": "#/definitions/message"},
                        "examples": {"application/json": {"ok": true}}}},
                }},
                "/conversations.history": {"get": {
                    "operationId": "conversations_history",
                    "parameters": [
                        {"in": "query", "name": "token", "type": "string"},
                        {"$ref": "#/parameters/channel"},
                        {"in": "query", "name": "limit", "type": "integer", "x-nullable": true},
                    ],
                    "responses": {"200": {"description": "ok", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}},
                }},
            },
            "definitions": {"message": {"type": "object", "properties": {"ok": {"type": "boolean"}, "ts": {"type": "string"}}}},
        })
    }

    /// References nested in arrays, allOf and additionalProperties, shared bodies, every collectionFormat.
    fn nested() -> Value {
        json!({
            "swagger": "2.0",
            "info": {"title": "Nested", "version": "2"},
            "basePath": "/api/",
            "parameters": {
                "Order": {"name": "order", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Order"}},
                "Ids": {"name": "ids", "in": "path", "required": true, "type": "array", "items": {"type": "integer"}},
            },
            "responses": {"NotFound": {"description": "No such thing", "schema": {"$ref": "#/definitions/Error"},
                "headers": {"X-Rate-Limit": {"type": "integer", "format": "int32", "description": "calls per hour"}}}},
            "paths": {
                "/orders/{ids}": {
                    "parameters": [{"$ref": "#/parameters/Ids"}],
                    "put": {
                        "consumes": ["application/merge-patch+json"],
                        "parameters": [
                            {"$ref": "#/parameters/Order"},
                            {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}},
                            {"name": "words", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "ssv"},
                            {"name": "flags", "in": "header", "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"},
                            {"name": "bars", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"},
                            {"name": "cells", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "tsv"},
                        ],
                        "responses": {"404": {"$ref": "#/responses/NotFound"}, "default": {"description": "ok",
                            "examples": {"application/json": {"id": "o-1"}, "text/plain": "o-1"}}},
                    },
                    "post": {
                        "parameters": [{"$ref": "#/parameters/Order"}],
                        "responses": {"201": {"description": "made", "schema": {"$ref": "#/definitions/Page%5BOrder%5D"}}},
                    },
                },
                "/shared": {"$ref": "other.yaml#/paths/~1shared"},
            },
            "definitions": {
                "Order": {"allOf": [{"$ref": "#/definitions/Base"}, {"type": "object", "properties": {
                    "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
                    "notes": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Line"}},
                    "kind": {"type": "string", "x-nullable": true},
                }}], "discriminator": "kind"},
                "Base": {"type": "object", "properties": {"id": {"type": "string"}}},
                "Line": {"type": "object", "properties": {"sku": {"type": "string"}, "parts": {"type": "array", "items": {"$ref": "#/definitions/Line"}}}},
                "Error": {"type": "object"},
                "Page[Order]": {"type": "array", "items": {"$ref": "#/definitions/Order"}},
            },
        })
    }

    #[test]
    fn the_petstore_converts_with_its_form_and_multipart_bodies() {
        let pet = json!({"$ref": "#/components/schemas/Pet"});
        let expected = json!({
            "openapi": "3.0.3",
            "info": {"title": "Swagger Petstore", "version": "1.0.6"},
            "tags": [{"name": "pet", "description": "Everything about your Pets"}],
            "externalDocs": {"description": "Find out more about Swagger", "url": "http://swagger.io"},
            "servers": [{"url": "https://petstore.swagger.io/v2"}, {"url": "http://petstore.swagger.io/v2"}],
            "paths": {
                "/pet/{petId}/uploadImage": {"post": {
                    "tags": ["pet"],
                    "summary": "uploads an image",
                    "operationId": "uploadFile",
                    "security": [{"petstore_auth": ["write:pets", "read:pets"]}],
                    "parameters": [{"name": "petId", "in": "path", "description": "ID of pet to update", "required": true,
                        "schema": {"type": "integer", "format": "int64"}}],
                    "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object", "properties": {
                        "additionalMetadata": {"type": "string", "description": "Additional data to pass to server"},
                        "file": {"type": "string", "format": "binary", "description": "file to upload"},
                    }}}}},
                    "responses": {"200": {"description": "successful operation",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiResponse"}}}}},
                }},
                "/pet": {"post": {
                    "operationId": "addPet",
                    "requestBody": {
                        "description": "Pet object that needs to be added to the store",
                        "required": true,
                        "content": {"application/json": {"schema": pet}, "application/xml": {"schema": pet}},
                    },
                    "responses": {"405": {"description": "Invalid input"}},
                }},
                "/pet/findByStatus": {"get": {
                    "operationId": "findPetsByStatus",
                    "parameters": [{"name": "status", "in": "query", "required": true, "style": "form", "explode": true,
                        "schema": {"type": "array", "items": {"type": "string", "enum": ["available", "pending", "sold"], "default": "available"}}}],
                    "responses": {
                        "200": {"description": "successful operation", "content": {
                            "application/json": {"schema": {"type": "array", "items": pet}},
                            "application/xml": {"schema": {"type": "array", "items": pet}},
                        }},
                        "400": {"description": "Invalid status value"},
                    },
                }},
                "/pet/{petId}": {"post": {
                    "operationId": "updatePetWithForm",
                    "parameters": [{"name": "petId", "in": "path", "description": "ID of pet that needs to be updated", "required": true,
                        "schema": {"type": "integer", "format": "int64"}}],
                    "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {
                        "name": {"type": "string", "description": "Updated name of the pet"},
                        "status": {"type": "string", "description": "Updated status of the pet"},
                    }}}}},
                    "responses": {"405": {"description": "Invalid input"}},
                }},
            },
            "components": {
                "schemas": {
                    "ApiResponse": {"type": "object", "properties": {"code": {"type": "integer", "format": "int32"}, "type": {"type": "string"}, "message": {"type": "string"}}},
                    "Category": {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}, "name": {"type": "string"}}, "xml": {"name": "Category"}},
                    "Pet": {"type": "object", "required": ["name", "photoUrls"], "properties": {
                        "id": {"type": "integer", "format": "int64"},
                        "category": {"$ref": "#/components/schemas/Category"},
                        "name": {"type": "string", "example": "doggie"},
                        "photoUrls": {"type": "array", "xml": {"wrapped": true}, "items": {"type": "string", "xml": {"name": "photoUrl"}}},
                    }, "xml": {"name": "Pet"}},
                },
                "securitySchemes": {
                    "api_key": {"type": "apiKey", "name": "api_key", "in": "header"},
                    "petstore_auth": {"type": "oauth2", "flows": {"implicit": {
                        "authorizationUrl": "https://petstore.swagger.io/oauth/authorize",
                        "scopes": {"read:pets": "read your pets", "write:pets": "modify pets in your account"},
                    }}},
                },
            },
        });
        assert_eq!(convert(&petstore()).unwrap(), expected);
    }

    #[test]
    fn slacks_web_api_style_posts_forms_with_a_shared_token_field() {
        let slack = slack();
        let openapi = convert(&slack).unwrap();
        assert_eq!(openapi["servers"], json!([{"url": "https://slack.com/api"}]));
        assert_eq!(
            openapi["paths"]["/chat.postMessage"]["post"],
            json!({
                "operationId": "chat_postMessage",
                "security": [{"slackAuth": ["chat:write:bot"]}],
                "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {
                    "schema": {"type": "object", "required": ["token", "channel"], "properties": {
                        "token": {"type": "string", "description": "Authentication token."},
                        "channel": {"type": "string"},
                        "attachments": {"type": "array", "items": {"type": "string"}},
                        "as_user": {"type": "boolean"},
                    }},
                    "encoding": {"attachments": {"style": "form", "explode": false}},
                }}},
                "responses": {"200": {"description": "Typical success response", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/message"},
                    "example": {"ok": true},
                }}}},
            })
        );
        assert_eq!(
            openapi["paths"]["/conversations.history"]["get"]["parameters"],
            json!([
                {"name": "token", "in": "query", "schema": {"type": "string"}},
                {"$ref": "#/components/parameters/channel"},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "nullable": true}},
            ])
        );
        // A form field is no parameter of its own in OpenAPI 3: it lives in each form body.
        assert_eq!(
            openapi["components"]["parameters"],
            json!({"channel": {"name": "channel", "in": "query", "schema": {"type": "string"}}})
        );
        assert_eq!(
            openapi["components"]["securitySchemes"]["slackAuth"],
            json!({"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://slack.com/oauth/authorize",
                "tokenUrl": "https://slack.com/api/oauth.access",
                "scopes": {"chat:write:bot": "Send messages as bot"},
            }}})
        );
    }

    #[test]
    fn nested_references_shared_bodies_and_collection_formats_convert() {
        let swagger = nested();
        let openapi = convert(&swagger).unwrap();
        assert_eq!(openapi["servers"], json!([{"url": "/api"}]));
        assert_eq!(openapi["paths"]["/shared"], json!({"$ref": "other.yaml#/paths/~1shared"}));
        let item = &openapi["paths"]["/orders/{ids}"];
        assert_eq!(item["parameters"], json!([{"$ref": "#/components/parameters/Ids"}]));
        // The operation consumes its own media type: the shared body is written out with it.
        assert_eq!(
            item["put"]["requestBody"],
            json!({"required": true, "content": {"application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/Order"}}}})
        );
        assert_eq!(item["post"]["requestBody"], json!({"$ref": "#/components/requestBodies/Order"}));
        // A reference escaped as a URI names the schema it decodes to.
        assert_eq!(
            item["post"]["responses"]["201"]["content"]["application/json"]["schema"],
            json!({"$ref": "#/components/schemas/Page[Order]"})
        );
        assert_eq!(
            item["put"]["parameters"],
            json!([
                {"name": "tags", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "words", "in": "query", "style": "spaceDelimited", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "flags", "in": "header", "style": "simple", "explode": false, "x-collectionFormat": "pipes", "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "bars", "in": "query", "style": "pipeDelimited", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "cells", "in": "query", "style": "form", "explode": false, "x-collectionFormat": "tsv", "schema": {"type": "array", "items": {"type": "string"}}},
            ])
        );
        assert_eq!(
            item["put"]["responses"],
            json!({"404": {"$ref": "#/components/responses/NotFound"}, "default": {"description": "ok",
            "content": {"application/json": {"example": {"id": "o-1"}}}}})
        );
        let line = json!({"$ref": "#/components/schemas/Line"});
        assert_eq!(
            openapi["components"],
            json!({
                "schemas": {
                    "Order": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "properties": {
                        "lines": {"type": "array", "items": line},
                        "notes": {"type": "object", "additionalProperties": line},
                        "kind": {"type": "string", "nullable": true},
                    }}], "discriminator": {"propertyName": "kind"}},
                    "Base": {"type": "object", "properties": {"id": {"type": "string"}}},
                    "Line": {"type": "object", "properties": {"sku": {"type": "string"}, "parts": {"type": "array", "items": line}}},
                    "Error": {"type": "object"},
                    "Page[Order]": {"type": "array", "items": {"$ref": "#/components/schemas/Order"}},
                },
                "parameters": {"Ids": {"name": "ids", "in": "path", "required": true, "style": "simple", "explode": false,
                    "schema": {"type": "array", "items": {"type": "integer"}}}},
                "requestBodies": {"Order": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}},
                "responses": {"NotFound": {
                    "description": "No such thing",
                    "headers": {"X-Rate-Limit": {"description": "calls per hour", "schema": {"type": "integer", "format": "int32"}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                }},
            })
        );
    }

    #[test]
    fn servers_follow_host_base_path_and_schemes() {
        let servers = |extra: Value| {
            let mut swagger = json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}});
            swagger.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            convert(&swagger).unwrap().get("servers").cloned()
        };
        assert_eq!(servers(json!({"host": "api.example.com"})), Some(json!([{"url": "//api.example.com"}])));
        assert_eq!(
            servers(json!({"host": "api.example.com", "basePath": "/", "schemes": ["wss", "http"]})),
            Some(json!([{"url": "http://api.example.com"}]))
        );
        assert_eq!(servers(json!({})), None);
        assert_eq!(
            servers(json!({"host": "https://api.example.com/", "basePath": "/v2", "schemes": ["HTTP"]})),
            Some(json!([{"url": "https://api.example.com/v2"}]))
        );
        assert_eq!(
            servers(json!({"host": "api.example.com", "schemes": ["HTTP", "https"]})),
            Some(json!([{"url": "https://api.example.com"}, {"url": "http://api.example.com"}]))
        );
        assert_eq!(servers(json!({"basePath": "/v1"})), Some(json!([{"url": "/v1"}])));
    }

    #[test]
    fn a_body_parameter_needs_no_name_and_a_file_answer_is_binary() {
        let openapi = convert(&json!({"swagger": "2.0", "paths": {"/files": {"post": {
            "parameters": [{"in": "body", "schema": {"type": "string"}}],
            "produces": ["application/octet-stream"],
            "responses": {"200": {"description": "The file.", "schema": {"type": "file"}}},
        }}}}))
        .unwrap();
        let operation = &openapi["paths"]["/files"]["post"];
        assert_eq!(operation["requestBody"], json!({"content": {"application/json": {"schema": {"type": "string"}}}}));
        assert_eq!(
            operation["responses"]["200"]["content"],
            json!({"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}})
        );
        let error = refused(
            json!({"swagger": "2.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}], "responses": {}}}}}),
        );
        assert_eq!(error, "/paths/~1a/get/parameters/0/name: expected a string, found nothing");
    }

    #[test]
    fn a_field_described_by_a_schema_keeps_it() {
        let openapi = convert(&json!({"swagger": "2.0", "paths": {"/a": {"get": {
            "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/definitions/Q"}}], "responses": {}}}},
            "definitions": {"Q": {"type": "string"}}}))
        .unwrap();
        assert_eq!(
            openapi["paths"]["/a"]["get"]["parameters"],
            json!([{"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Q"}}])
        );
    }

    fn refused(swagger: Value) -> String {
        convert(&swagger).unwrap_err().to_string()
    }

    #[test]
    fn garbage_is_refused_with_where_and_what() {
        assert_eq!(
            refused(json!([1])),
            "not a Swagger 2.0 document: it is an array; expected a JSON object with \"swagger\": \"2.0\""
        );
        assert_eq!(
            refused(json!({"swagger": "1.2"})),
            "not a Swagger 2.0 document: its \"swagger\" is \"1.2\"; expected a JSON object with \"swagger\": \"2.0\""
        );
        assert_eq!(
            refused(json!({"swagger": "2.0", "paths": []})),
            "/paths: expected an object of paths, found an array"
        );
        assert_eq!(
            refused(
                json!({"swagger": "2.0", "paths": {"/a": {"get": {"parameters": [{"name": "q", "type": "string"}], "responses": {}}}}})
            ),
            "/paths/~1a/get/parameters/0/in: expected one of body, formData, query, header, path, found nothing"
        );
        assert_eq!(
            refused(
                json!({"swagger": "2.0", "paths": {"/a": {"get": {"responses": {"200": {"description": "", "schema": {"$ref": "#/definitions/Nothing"}}}}}}})
            ),
            "/paths/~1a/get/responses/200/schema/$ref: the $ref \"#/definitions/Nothing\" names nothing in the document"
        );
        assert_eq!(
            refused(
                json!({"swagger": "2.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/parameters/gone"}], "responses": {}}}}})
            ),
            "/paths/~1a/get/parameters/0: the $ref \"#/parameters/gone\" names nothing in the document"
        );
        assert_eq!(
            refused(json!({"swagger": "2.0", "paths": {"/a": {"post": {"parameters": [
                {"name": "b", "in": "body", "schema": {}}, {"name": "f", "in": "formData", "type": "string"}], "responses": {}}}}})),
            "/paths/~1a/post/parameters: a body parameter beside formData parameters, which Swagger 2.0 forbids"
        );
        assert_eq!(
            refused(json!({"swagger": "2.0", "paths": {"/a": {"get": {"parameters": [
                {"name": "q", "in": "query", "type": "array", "collectionFormat": "commas"}], "responses": {}}}}})),
            "/paths/~1a/get/parameters/0/collectionFormat: expected one of csv, ssv, tsv, pipes, multi, found \"commas\""
        );
        // 40 inline schemas of 2,001 values, each copied for 31 more media types.
        let wide = json!({"type": "object", "properties": (0..1000).map(|n| (format!("p{n}"), json!({"type": "string"}))).collect::<Map<String, Value>>()});
        let responses: Map<String, Value> =
            (200..240).map(|code| (code.to_string(), json!({"description": "", "schema": wide}))).collect();
        let media: Vec<String> = (0..32).map(|n| format!("application/x-{n}+json")).collect();
        let wide = json!({"swagger": "2.0", "produces": media, "paths": {"/wide": {"get": {"responses": responses}}}});
        let error = convert(&wide).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains("its media types copy more than 2000000 schema values in all"), "{error}");
        let mut deep = json!({"type": "string"});
        for _ in 0..300 {
            deep = json!({"type": "array", "items": deep});
        }
        let error = refused(json!({"swagger": "2.0", "paths": {}, "definitions": {"Deep": deep}}));
        assert!(error.ends_with("schemas nested deeper than 200 levels"), "{error}");
    }

    /// Every value of the Petstore replaced, one at a time, by each kind of JSON value: each
    /// document converts or is refused, and none panics.
    #[test]
    fn any_part_of_any_shape_never_panics() {
        fn pointers(value: &Value, at: String, into: &mut Vec<String>) {
            match value {
                Value::Object(object) => {
                    for (key, value) in object {
                        pointers(value, format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")), into);
                    }
                }
                Value::Array(list) => {
                    for (index, value) in list.iter().enumerate() {
                        pointers(value, format!("{at}/{index}"), into);
                    }
                }
                _ => {}
            }
            into.push(at);
        }
        let petstore = petstore();
        let mut all = Vec::new();
        pointers(&petstore, String::new(), &mut all);
        let shapes = [
            json!(null),
            json!(true),
            json!(7),
            json!("file"),
            json!([]),
            json!([{}]),
            json!({}),
            json!({"$ref": "#/"}),
        ];
        for pointer in all.iter().filter(|pointer| !pointer.is_empty()) {
            for shape in &shapes {
                let mut document = petstore.clone();
                *document.pointer_mut(pointer).unwrap() = shape.clone();
                let _ = convert(&document);
            }
        }
    }

    /// A YAML Swagger 2.0 document, read and imported as the gateway mounts it.
    #[test]
    fn a_yaml_swagger_document_mounts_as_tools() {
        let document = br#"swagger: "2.0"
info:
  title: Invoices
  version: 1.0
host: billing.example.com
basePath: /v1
schemes: [https]
consumes: [application/json]
produces: [application/json]
parameters:
  page: &page
    name: page
    in: query
    type: integer
    minimum: 1
paths:
  /invoices:
    get:
      operationId: listInvoices
      summary: List invoices.
      parameters:
        - $ref: '#/parameters/page'
        - name: status
          in: query
          type: array
          items: {type: string, enum: [open, paid]}
      responses:
        200:
          description: The invoices.
          schema: {type: array, items: {$ref: '#/definitions/Invoice'}}
    post:
      operationId: createInvoice
      parameters:
        - name: invoice
          in: body
          required: true
          schema: {$ref: '#/definitions/Invoice'}
      responses:
        201: {description: Made.}
definitions:
  Invoice:
    type: object
    required: [amount]
    properties:
      amount: {type: integer, x-nullable: false}
      lines: {type: array, items: {$ref: '#/definitions/Line'}}
  Line:
    type: object
    properties:
      sku: {type: string}
"#;
        let (openapi, imported) = crate::rest::parse_and_import("invoices.yaml", document).unwrap();
        let operations = imported.operations;
        assert_eq!(openapi["servers"], json!([{"url": "https://billing.example.com/v1"}]));
        assert_eq!(openapi["info"]["version"], json!(1.0));
        let names: Vec<&str> = operations.iter().map(|operation| operation.name.as_str()).collect();
        assert_eq!(names, ["listInvoices", "createInvoice"]);
        assert_eq!(
            operations[0].input_schema["properties"],
            json!({"page": {"type": "integer", "minimum": 1}, "status": {"type": "array", "items": {"type": "string", "enum": ["open", "paid"]}}})
        );
        assert_eq!(operations[1].body.as_ref().map(|body| body.required), Some(true));
        assert_eq!(operations[1].input_schema["properties"]["body"]["required"], json!(["amount"]));
        assert_eq!(
            operations[1].input_schema["properties"]["body"]["properties"]["lines"]["items"],
            json!({"type": "object", "properties": {"sku": {"type": "string"}}})
        );
    }

    #[test]
    fn other_swagger_versions_are_told_which_are_read() {
        let error = crate::rest::parse_and_import("old.json", br#"{"swagger": "1.2", "apis": []}"#).unwrap_err();
        assert_eq!(
            error,
            "the OpenAPI document old.json is Swagger '1.2', which is not read; the gateway reads OpenAPI 3.0 and 3.1, and Swagger 2.0"
        );
        let error = crate::rest::parse_and_import("old.yaml", b"swagger: 1.2\n").unwrap_err();
        assert!(error.starts_with("the OpenAPI document old.yaml is Swagger 1.2, which is not read"), "{error}");
        let error = crate::rest::parse_and_import("odd.json", br#"{"swagger": {"v": 2}}"#).unwrap_err();
        assert!(error.starts_with("the OpenAPI document odd.json is Swagger an object, which is not read"), "{error}");
        let error = crate::rest::parse_and_import("bad.yaml", b"swagger: 2.0\npaths: [1]\n").unwrap_err();
        assert_eq!(error, "the Swagger 2.0 document bad.yaml: /paths: expected an object of paths, found an array");
    }
}
