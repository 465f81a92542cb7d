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
//! `nullable`; and every local `$ref` is rewritten to the component it now names.
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

use mcp_fusion_wire::value_kind as kind;
use serde_json::{Map, Value, json};

/// How deeply schemas may nest: far deeper than any document's, and shallow enough that
/// reading one never overflows the stack.
pub const MAX_DEPTH: usize = 200;

/// How many media types one `consumes` or `produces` may list: each copies the schema it
/// carries.
pub const MAX_MEDIA_TYPES: usize = 32;

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
            if matches!(scheme, "https" | "http") && !schemes.contains(&scheme) {
                schemes.push(scheme);
            }
        }
    }
    schemes.sort_by_key(|scheme| *scheme != "https");
    let host = host.trim_end_matches('/');
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
}

/// An operation's parameters, as OpenAPI 3 splits them.
#[derive(Default)]
struct Parameters {
    /// Path, query and header parameters, converted.
    list: Vec<Value>,
    /// The request body a `body` parameter (or a reference to one) makes.
    body: Option<Value>,
    /// The `formData` parameters: each field's name and parameter.
    form: Vec<(String, Value, String)>,
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
        let mut form: Vec<(String, Value, String)> =
            shared.form.iter().filter(|(name, ..)| !own.form.iter().any(|(own, ..)| own == name)).cloned().collect();
        form.extend(own.form);
        let body = match (own.body, &shared.body) {
            (Some(body), _) => Some(self.consumed(body, &consumes)),
            (None, Some(body)) => Some(self.consumed(body.clone(), &consumes)),
            (None, None) => None,
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

    /// A reference to a shared body stays one unless the operation consumes other media types
    /// than the document, whose body it names; then the body is written out with them.
    fn consumed(&self, body: Value, consumes: &[String]) -> Value {
        if *consumes == *self.consumes {
            return body;
        }
        let Some(name) =
            body.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/requestBodies/"))
        else {
            return body;
        };
        let Some(Value::Object(parameter)) = self.document.pointer(&format!("/parameters/{name}")) else {
            return body;
        };
        self.body(parameter, consumes, &format!("/parameters/{name}")).unwrap_or(body)
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
                    let Some(pointer) = reference.strip_prefix('#') else {
                        // Another file's parameter: the importer says it reads no other file.
                        split.list.push(parameter.clone());
                        continue;
                    };
                    let target = self.target(reference, &at)?;
                    let object = object_at(Some(target), pointer, "a parameter object")?;
                    (object, pointer.to_owned(), pointer.strip_prefix("/parameters/").map(|_| reference))
                }
            };
            let name = object.get("name");
            let name = name.and_then(Value::as_str).ok_or_else(|| SwaggerError::Malformed {
                at: format!("{at}/name"),
                expected: "a string",
                found: name.map_or("nothing", kind).into(),
            })?;
            match location(object, &at)? {
                "body" => {
                    if split.body.is_some() {
                        return Err(SwaggerError::Refused {
                            at: at.clone(),
                            what: "a second body parameter, where Swagger 2.0 allows one".into(),
                        });
                    }
                    split.body = Some(match shared {
                        Some(reference) => json!({"$ref": rewritten(reference)}),
                        None => self.body(object, &self.consumes, &at)?,
                    });
                }
                "formData" => split.form.push((name.to_owned(), Value::Object(object.clone()), at)),
                _ => split.list.push(match shared {
                    Some(reference) => json!({"$ref": rewritten(reference)}),
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
                ("csv", _) => ("simple", false),
                ("ssv", _) => ("spaceDelimited", false),
                ("pipes", _) => ("pipeDelimited", false),
                ("multi", _) => ("form", true),
                ("tsv", _) => {
                    converted.insert("x-collectionFormat".into(), Value::String("tsv".into()));
                    ("form", false)
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
        let content: Map<String, Value> =
            media.into_iter().map(|media| (media.to_owned(), json!({"schema": schema}))).collect();
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
    fn form(&self, fields: &[(String, Value, String)], consumes: &[String]) -> Result<Value, SwaggerError> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut encoding = Map::new();
        let mut file = false;
        for (name, parameter, at) in fields {
            let Value::Object(parameter) = parameter else { continue };
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
        for media in media {
            let mut media_type = Map::new();
            media_type.insert("schema".into(), Value::Object(schema.clone()));
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
        if let Some(schema) = response.get("schema") {
            let schema = self.schema(schema, &format!("{at}/schema"), 0)?;
            let examples = response.get("examples").and_then(Value::as_object);
            let media: Vec<&str> = if produces.is_empty() {
                vec!["application/json"]
            } else {
                produces.iter().map(String::as_str).collect()
            };
            let mut content = Map::new();
            for media in media {
                let mut media_type = Map::new();
                media_type.insert("schema".into(), schema.clone());
                if let Some(example) = examples.and_then(|examples| examples.get(media)) {
                    media_type.insert("example".into(), example.clone());
                }
                content.insert(media.to_owned(), Value::Object(media_type));
            }
            converted.insert("content".into(), Value::Object(content));
        }
        Ok(Value::Object(converted))
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
        if reference.starts_with('#') {
            self.target(reference, at)?;
        }
        Ok(rewritten(reference))
    }

    /// What the local `reference` names in the Swagger document.
    fn target(&self, reference: &str, at: &str) -> Result<&Value, SwaggerError> {
        let refused = |reason| SwaggerError::Reference { at: at.into(), reference: cut(reference), reason };
        let pointer = reference.strip_prefix('#').ok_or_else(|| refused("is not a local reference"))?;
        self.document.pointer(pointer).ok_or_else(|| refused("names nothing in the document"))
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
