//! The OpenAPI mount on what vendors wrote: every document of `tests/fixtures/openapi-corpus`
//! (OpenAI, Twilio, SendGrid, Box, Discord, Slack, Adyen, Spotify, Xero and the OpenAPI
//! Initiative's examples, in JSON and YAML, OpenAPI 3.0, 3.1 and Swagger 2.0) is mounted with its `base_url` at a stub
//! that records each request it receives byte for byte. Each tool is called twice, with the
//! arguments its input schema requires and with every optional one too, and each recorded
//! request is compared with the request the document itself describes for those arguments.
//!
//! That expectation is an oracle of its own, read from the document and the OpenAPI
//! specification's serialization rules (the "Style Values" and "Style Examples" tables, RFC 6570
//! for path and query expansion, the Encoding Object for form and multipart bodies; Swagger
//! 2.0's `collectionFormat`, `formData` and `consumes`), never from the gateway's own reading.
//! The figures it prints are `docs/openapi-corpus.md`'s: set `OPENAPI_CORPUS_REPORT` to a file
//! to have them written there.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::FusionServer;
use mcp_fusion::handoff::Mount;
use mcp_fusion_gateway::{Gateway, Upstream};
use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::{Map, Value, json};
use support::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Documents a validator calls invalid, which the gateway may refuse, and why they are invalid.
/// openapi-spec-validator also calls `openai.json` and `openai.yaml` (a `required` list naming a
/// property twice) and `xero-accounting.yaml` (a boolean whose default is the string "false")
/// invalid, but neither fault stops a request being made as the document describes: they must
/// load.
const INVALID: &[(&str, &str)] = &[];

/// The path under which the stub serves the API: the operations' paths must be joined to it.
const BASE_PATH: &str = "/base";

// ---------------------------------------------------------------------------------------------
// The recording stub.

/// One request as the stub received it.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    /// The request target as sent: the raw path and query.
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<String> {
        let values: Vec<String> = self
            .headers
            .iter()
            .filter(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| String::from_utf8_lossy(value).into_owned())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

/// An HTTP/1.1 server that records every request and answers each `200 {}`.
struct Stub {
    url: String,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

impl Stub {
    async fn start() -> Stub {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_connection(stream, Arc::clone(&kept)));
            }
        });
        Stub { url, seen }
    }

    fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// Reads requests off one connection until it closes, recording each.
async fn serve_connection(mut stream: tokio::net::TcpStream, seen: Arc<Mutex<Vec<Recorded>>>) {
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let Some(head_end) = read_until(&mut stream, &mut buffer, b"\r\n\r\n").await else { return };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        buffer.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let method = request_line.next().unwrap_or_default().to_owned();
        let target = request_line.next().unwrap_or_default().to_owned();
        let headers: Vec<(String, Vec<u8>)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_owned(), value.trim().as_bytes().to_vec()))
            .collect();
        let header = |name: &str| {
            headers
                .iter()
                .find(|(header, _)| header.eq_ignore_ascii_case(name))
                .map(|(_, value)| String::from_utf8_lossy(value).into_owned())
        };
        let mut body = Vec::new();
        if header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked")) {
            loop {
                let Some(line_end) = read_until(&mut stream, &mut buffer, b"\r\n").await else { return };
                let size = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
                buffer.drain(..line_end + 2);
                let size = usize::from_str_radix(size.split(';').next().unwrap_or("0").trim(), 16).unwrap_or(0);
                if !fill(&mut stream, &mut buffer, size + 2).await {
                    return;
                }
                body.extend_from_slice(&buffer[..size]);
                buffer.drain(..size + 2);
                if size == 0 {
                    break;
                }
            }
        } else if let Some(length) = header("content-length").and_then(|value| value.parse::<usize>().ok()) {
            if !fill(&mut stream, &mut buffer, length).await {
                return;
            }
            body = buffer.drain(..length).collect();
        }
        seen.lock().unwrap().push(Recorded { method, target, headers, body });
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Reads until `buffer` holds `needle`; where it starts, or `None` once the connection closed.
async fn read_until(stream: &mut tokio::net::TcpStream, buffer: &mut Vec<u8>, needle: &[u8]) -> Option<usize> {
    loop {
        if let Some(at) = buffer.windows(needle.len()).position(|window| window == needle) {
            return Some(at);
        }
        let mut chunk = [0u8; 65536];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

/// Reads until `buffer` holds `length` bytes; `false` once the connection closed.
async fn fill(stream: &mut tokio::net::TcpStream, buffer: &mut Vec<u8>, length: usize) -> bool {
    while buffer.len() < length {
        let mut chunk = [0u8; 65536];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// The oracle: the document's operations as the specification reads them.

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum In {
    Path,
    Query,
    Header,
    Cookie,
}

/// A parameter, with how its value is serialized.
#[derive(Debug, Clone)]
struct Param {
    name: String,
    place: In,
    style: String,
    explode: bool,
    allow_reserved: bool,
    /// A `content` parameter: its value is written as JSON text.
    as_json: bool,
}

/// How one property of a form or multipart body is written (the Encoding Object).
#[derive(Debug, Clone, Default)]
struct Encoding {
    style: Option<String>,
    explode: Option<bool>,
}

/// One media type an operation's body may have.
#[derive(Debug, Clone)]
struct Media {
    name: String,
    encoding: BTreeMap<String, Encoding>,
}

/// One operation, as the document describes it.
#[derive(Debug, Clone)]
struct Op {
    method: String,
    path: String,
    id: Option<String>,
    /// Its summary, which the tool's description starts with: what tells apart operations a
    /// request alone does not (Box's `…/schema#add` and `…/schema#update`).
    summary: Option<String>,
    params: Vec<Param>,
    body: Vec<Media>,
}

impl Op {
    fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// What a document is, as the summary names it.
struct Described {
    format: &'static str,
    version: String,
    ops: Vec<Op>,
}

/// Reads a document (JSON or YAML) into its operations.
fn describe(path: &Path) -> Described {
    let text = std::fs::read_to_string(path).unwrap();
    let (format, document): (&str, Value) = if path.extension().is_some_and(|ext| ext == "json") {
        ("JSON", serde_json::from_str(&text).unwrap())
    } else {
        ("YAML", yaml_serde::from_str::<Json>(&text).unwrap().0)
    };
    let swagger = document.get("swagger").and_then(Value::as_str).map(str::to_owned);
    let version = match &swagger {
        Some(version) => format!("Swagger {version}"),
        None => format!("OpenAPI {}", document.get("openapi").and_then(Value::as_str).unwrap_or("?")),
    };
    let mut ops = Vec::new();
    let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
    let empty = Map::new();
    for (path, item) in document.get("paths").and_then(Value::as_object).unwrap_or(&empty) {
        let item = resolve(&document, item);
        let shared = item.get("parameters").cloned().unwrap_or(json!([]));
        for method in methods {
            let Some(operation) = item.get(method) else { continue };
            let operation = resolve(&document, operation);
            let mut list: Vec<Value> = Vec::new();
            for entry in shared
                .as_array()
                .into_iter()
                .flatten()
                .chain(operation.get("parameters").and_then(Value::as_array).into_iter().flatten())
            {
                let entry = resolve(&document, entry).clone();
                // An operation's parameter replaces the path item's of the same name and place.
                list.retain(|other: &Value| {
                    !(other.get("name") == entry.get("name") && other.get("in") == entry.get("in"))
                });
                list.push(entry);
            }
            let op = if swagger.is_some() {
                swagger_op(&document, operation, method, path, &list)
            } else {
                openapi_op(&document, operation, method, path, &list)
            };
            ops.push(op);
        }
    }
    Described { format, version, ops }
}

/// Any YAML value as JSON: an integer past 64 bits (OpenAI's `seed` bounds, which
/// `yaml_serde::Value` cannot hold) as the nearest float, as JavaScript would read it.
struct Json(Value);

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json(json!(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json(json!(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json(json!(v)))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Json, E> {
        Ok(Json(json!(v as f64)))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Json, E> {
        Ok(Json(json!(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json(json!(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json(json!(v)))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json(Value::Null))
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        serde::Deserialize::deserialize(deserializer)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(Json(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json(Value::Array(items)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut object = Map::new();
        while let Some((Json(key), Json(value))) = map.next_entry()? {
            let key = match key {
                Value::String(text) => text,
                other => other.to_string(),
            };
            object.insert(key, value);
        }
        Ok(Json(Value::Object(object)))
    }
}

/// What a `$ref` names inside the document, followed until it names no other.
fn resolve<'a>(document: &'a Value, mut value: &'a Value) -> &'a Value {
    for _ in 0..32 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else { return value };
        let Some(pointer) = reference.strip_prefix('#') else { return value };
        // A `$ref` is a URI: its fragment is percent-decoded before it is read as a JSON pointer.
        let pointer = percent_encoding::percent_decode_str(pointer).decode_utf8_lossy().into_owned();
        match document.pointer(&pointer) {
            Some(found) => value = found,
            None => return value,
        }
    }
    value
}

/// An OpenAPI 3 operation.
fn openapi_op(document: &Value, operation: &Value, method: &str, path: &str, list: &[Value]) -> Op {
    let params = list
        .iter()
        .filter_map(|entry| {
            let place = match entry.get("in")?.as_str()? {
                "path" => In::Path,
                "query" => In::Query,
                "header" => In::Header,
                _ => In::Cookie,
            };
            // "Style Values": form for query and cookie, simple for path and header.
            let default_style = if matches!(place, In::Query | In::Cookie) { "form" } else { "simple" };
            let style = entry.get("style").and_then(Value::as_str).unwrap_or(default_style).to_owned();
            // "When style is form, the default value is true. For all other styles, the default
            // value is false."
            let explode = entry.get("explode").and_then(Value::as_bool).unwrap_or(style == "form");
            Some(Param {
                name: entry.get("name")?.as_str()?.to_owned(),
                place,
                style,
                explode,
                allow_reserved: entry.get("allowReserved").and_then(Value::as_bool).unwrap_or(false),
                as_json: entry.get("content").is_some(),
            })
        })
        .collect();
    let mut body = Vec::new();
    if let Some(request) = operation.get("requestBody") {
        let request = resolve(document, request);
        for (name, media) in request.get("content").and_then(Value::as_object).into_iter().flatten() {
            let mut encoding = BTreeMap::new();
            for (property, how) in media.get("encoding").and_then(Value::as_object).into_iter().flatten() {
                encoding.insert(
                    property.clone(),
                    Encoding {
                        style: how.get("style").and_then(Value::as_str).map(str::to_owned),
                        explode: how.get("explode").and_then(Value::as_bool),
                    },
                );
            }
            body.push(Media { name: name.clone(), encoding });
        }
    }
    Op {
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        id: operation.get("operationId").and_then(Value::as_str).map(str::to_owned),
        summary: operation.get("summary").and_then(Value::as_str).map(|text| text.trim().to_owned()),
        params,
        body,
    }
}

/// A Swagger 2.0 operation: `collectionFormat` read as the OpenAPI 3 style it names, `in: body`
/// and `in: formData` as the body under the media types the operation consumes.
fn swagger_op(document: &Value, operation: &Value, method: &str, path: &str, list: &[Value]) -> Op {
    let mut params = Vec::new();
    let mut form: BTreeMap<String, Encoding> = BTreeMap::new();
    let mut body = false;
    let mut file = false;
    for entry in list {
        let Some(name) = entry.get("name").and_then(Value::as_str) else { continue };
        let format = entry.get("collectionFormat").and_then(Value::as_str).unwrap_or("csv");
        let place = entry.get("in").and_then(Value::as_str).unwrap_or_default();
        let (style, explode) = match (place, format) {
            (_, "multi") => ("form", true),
            (_, "ssv") => ("spaceDelimited", false),
            (_, "pipes") => ("pipeDelimited", false),
            (_, "tsv") => ("tabDelimited", false),
            ("query" | "formData", _) => ("form", false),
            _ => ("simple", false),
        };
        let place = match place {
            "path" => In::Path,
            "query" => In::Query,
            "header" => In::Header,
            "formData" => {
                file |= entry.get("type").and_then(Value::as_str) == Some("file");
                form.insert(name.to_owned(), Encoding { style: Some(style.to_owned()), explode: Some(explode) });
                continue;
            }
            "body" => {
                body = true;
                continue;
            }
            _ => continue,
        };
        params.push(Param {
            name: name.to_owned(),
            place,
            style: style.to_owned(),
            explode,
            allow_reserved: false,
            as_json: false,
        });
    }
    let consumes: Vec<String> = operation
        .get("consumes")
        .or_else(|| document.get("consumes"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut media = Vec::new();
    if body {
        let names = if consumes.is_empty() { vec!["application/json".to_owned()] } else { consumes };
        media = names.into_iter().map(|name| Media { name, encoding: BTreeMap::new() }).collect();
    } else if !form.is_empty() {
        // "multipart/form-data" or "application/x-www-form-urlencoded"; a file needs the former.
        let mut names: Vec<String> = consumes
            .into_iter()
            .filter(|name| {
                let base = media_base(name);
                base == "multipart/form-data" || (!file && base == "application/x-www-form-urlencoded")
            })
            .collect();
        if names.is_empty() {
            names.push(if file { "multipart/form-data" } else { "application/x-www-form-urlencoded" }.to_owned());
        }
        media = names.into_iter().map(|name| Media { name, encoding: form.clone() }).collect();
    }
    Op {
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        id: operation.get("operationId").and_then(Value::as_str).map(str::to_owned),
        summary: operation.get("summary").and_then(Value::as_str).map(|text| text.trim().to_owned()),
        params,
        body: media,
    }
}

/// A media type without its parameters, lower case.
fn media_base(name: &str) -> String {
    name.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Whether a media type is JSON: `application/json` or any `+json` type.
fn is_json(base: &str) -> bool {
    base == "application/json" || base.ends_with("+json") || base == "text/json"
}

// ---------------------------------------------------------------------------------------------
// Serialization, per the specification.

/// RFC 6570: each character but the unreserved ones percent-encoded (with `reserved`, the
/// reserved ones and existing percent-triplets kept too, as `+` and `#` expansion do).
fn encode(text: &str, reserved: bool) -> String {
    let mut out = String::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        let keep = byte.is_ascii_alphanumeric()
            || b"-._~".contains(&byte)
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&byte))
            || (reserved
                && byte == b'%'
                && index + 2 < bytes.len()
                && bytes[index + 1].is_ascii_hexdigit()
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit));
        if keep {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
        index += 1;
    }
    out
}

/// A primitive value as text: a string as it is, a number or boolean as JSON writes it.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Why a value's serialization is not defined by the specification: an array or object nested
/// in an array or object.
fn nested(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| item.is_array() || item.is_object()),
        Value::Object(fields) => fields.values().any(|item| item.is_array() || item.is_object()),
        _ => false,
    }
}

/// A path parameter's value per its style (RFC 6570 `{x}`, `{.x}`, `{;x}`, with `*` when it
/// explodes).
fn path_value(param: &Param, value: &Value) -> String {
    let name = encode(&param.name, false);
    let enc = |value: &Value| encode(&text_of(value), false);
    match (param.style.as_str(), value) {
        ("label", Value::Array(items)) => {
            let sep = if param.explode { "." } else { "," };
            format!(".{}", items.iter().map(enc).collect::<Vec<_>>().join(sep))
        }
        ("label", Value::Object(fields)) => {
            let pairs: Vec<String> = if param.explode {
                fields.iter().map(|(key, value)| format!("{}={}", encode(key, false), enc(value))).collect()
            } else {
                fields.iter().flat_map(|(key, value)| [encode(key, false), enc(value)]).collect()
            };
            format!(".{}", pairs.join(if param.explode { "." } else { "," }))
        }
        ("label", other) => format!(".{}", enc(other)),
        ("matrix", Value::Array(items)) => {
            if param.explode {
                items.iter().map(|item| format!(";{name}={}", enc(item))).collect()
            } else {
                format!(";{name}={}", items.iter().map(enc).collect::<Vec<_>>().join(","))
            }
        }
        ("matrix", Value::Object(fields)) => {
            if param.explode {
                fields.iter().map(|(key, value)| format!(";{}={}", encode(key, false), enc(value))).collect()
            } else {
                let pairs: Vec<String> =
                    fields.iter().flat_map(|(key, value)| [encode(key, false), enc(value)]).collect();
                format!(";{name}={}", pairs.join(","))
            }
        }
        // RFC 6570 writes `;x` for an empty string.
        ("matrix", Value::String(text)) if text.is_empty() => format!(";{name}"),
        ("matrix", other) => format!(";{name}={}", enc(other)),
        (_, Value::Array(items)) => items.iter().map(enc).collect::<Vec<_>>().join(","),
        (_, Value::Object(fields)) => {
            if param.explode {
                fields
                    .iter()
                    .map(|(key, value)| format!("{}={}", encode(key, false), enc(value)))
                    .collect::<Vec<_>>()
                    .join(",")
            } else {
                fields.iter().flat_map(|(key, value)| [encode(key, false), enc(value)]).collect::<Vec<_>>().join(",")
            }
        }
        (_, other) => enc(other),
    }
}

/// A query parameter's `name=value` pairs per its style, each already encoded.
fn query_pairs(param: &Param, value: &Value) -> Vec<String> {
    let reserved = param.allow_reserved;
    let name = encode(&param.name, false);
    let enc = |value: &Value| encode(&text_of(value), reserved);
    if param.as_json {
        return vec![format!("{name}={}", encode(&value.to_string(), reserved))];
    }
    match (param.style.as_str(), value) {
        ("deepObject", Value::Object(fields)) => {
            fields.iter().map(|(key, value)| format!("{name}[{}]={}", encode(key, false), enc(value))).collect()
        }
        ("spaceDelimited" | "pipeDelimited" | "tabDelimited", Value::Array(_) | Value::Object(_)) if !param.explode => {
            let sep = match param.style.as_str() {
                "spaceDelimited" => "%20",
                "pipeDelimited" => "|",
                _ => "%09",
            };
            let items: Vec<String> = match value {
                Value::Array(items) => items.iter().map(enc).collect(),
                Value::Object(fields) => {
                    fields.iter().flat_map(|(key, value)| [encode(key, false), enc(value)]).collect()
                }
                _ => Vec::new(),
            };
            vec![format!("{name}={}", items.join(sep))]
        }
        (_, Value::Array(items)) if param.explode => items.iter().map(|item| format!("{name}={}", enc(item))).collect(),
        (_, Value::Array(items)) => vec![format!("{name}={}", items.iter().map(enc).collect::<Vec<_>>().join(","))],
        (_, Value::Object(fields)) if param.explode => {
            fields.iter().map(|(key, value)| format!("{}={}", encode(key, false), enc(value))).collect()
        }
        (_, Value::Object(fields)) => {
            let pairs: Vec<String> = fields.iter().flat_map(|(key, value)| [encode(key, false), enc(value)]).collect();
            vec![format!("{name}={}", pairs.join(","))]
        }
        (_, other) => vec![format!("{name}={}", enc(other))],
    }
}

/// A header parameter's value (style simple; no percent-encoding in a header).
fn header_value(param: &Param, value: &Value) -> String {
    if param.as_json {
        return value.to_string();
    }
    match value {
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(","),
        Value::Object(fields) if param.explode => {
            fields.iter().map(|(key, value)| format!("{key}={}", text_of(value))).collect::<Vec<_>>().join(",")
        }
        Value::Object(fields) => {
            fields.iter().flat_map(|(key, value)| [key.clone(), text_of(value)]).collect::<Vec<_>>().join(",")
        }
        other => text_of(other),
    }
}

/// A form or multipart body's fields as (name, value) pairs, decoded, per the Encoding Object's
/// style (form, exploded, by default). `None` when the specification leaves it undefined.
fn form_fields(media: &Media, body: &Value, multipart: bool) -> Option<Vec<(String, String)>> {
    let fields = body.as_object()?;
    let mut out = Vec::new();
    for (name, value) in fields {
        let how = media.encoding.get(name).cloned().unwrap_or_default();
        if multipart && how.style.is_none() {
            // Multipart: a primitive as text, an array as one part per item, an object as JSON
            // (its default Content-Type).
            match value {
                Value::Array(items) => {
                    for item in items {
                        out.push((
                            name.clone(),
                            if item.is_object() || item.is_array() { item.to_string() } else { text_of(item) },
                        ));
                    }
                }
                Value::Object(_) => out.push((name.clone(), value.to_string())),
                other => out.push((name.clone(), text_of(other))),
            }
            continue;
        }
        let style = how.style.clone().unwrap_or_else(|| "form".into());
        let explode = how.explode.unwrap_or(style == "form");
        if nested(value) {
            return None;
        }
        match (style.as_str(), value) {
            ("deepObject", Value::Object(inner)) => {
                out.extend(inner.iter().map(|(key, value)| (format!("{name}[{key}]"), text_of(value))));
            }
            ("spaceDelimited" | "pipeDelimited" | "tabDelimited", Value::Array(items)) if !explode => {
                let sep = match style.as_str() {
                    "spaceDelimited" => " ",
                    "pipeDelimited" => "|",
                    _ => "\t",
                };
                out.push((name.clone(), items.iter().map(text_of).collect::<Vec<_>>().join(sep)));
            }
            (_, Value::Array(items)) if explode => out.extend(items.iter().map(|item| (name.clone(), text_of(item)))),
            (_, Value::Array(items)) => {
                out.push((name.clone(), items.iter().map(text_of).collect::<Vec<_>>().join(",")))
            }
            (_, Value::Object(inner)) if explode => {
                out.extend(inner.iter().map(|(key, value)| (key.clone(), text_of(value))));
            }
            (_, Value::Object(inner)) => out.push((
                name.clone(),
                inner.iter().flat_map(|(key, value)| [key.clone(), text_of(value)]).collect::<Vec<_>>().join(","),
            )),
            (_, other) => out.push((name.clone(), text_of(other))),
        }
    }
    Some(out)
}

/// Sorts (name, value) pairs by name, keeping each name's values in their order: the order of
/// different parameters carries no meaning, the order of one's values does.
fn grouped(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

/// The query's `name=value` segments, with the characters RFC 3986 lets a query hold either
/// way (`[`, `]`, `|`) read as themselves, grouped by name.
fn query_segments(segments: impl IntoIterator<Item = String>) -> Vec<(String, String)> {
    let pairs = segments
        .into_iter()
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            let segment = segment.replace("%5B", "[").replace("%5D", "]").replace("%7C", "|").replace("%5b", "[");
            let segment = segment.replace("%5d", "]").replace("%7c", "|");
            match segment.split_once('=') {
                Some((name, value)) => (name.to_owned(), value.to_owned()),
                None => (segment, String::new()),
            }
        })
        .collect();
    grouped(pairs)
}

/// The parts of a multipart body, as (name, value) pairs.
fn multipart_parts(content_type: &str, body: &[u8]) -> Option<Vec<(String, String)>> {
    let boundary = content_type.split(';').find_map(|part| part.trim().strip_prefix("boundary="))?;
    let boundary = format!("--{}", boundary.trim_matches('"'));
    let text = String::from_utf8_lossy(body).into_owned();
    let mut out = Vec::new();
    for part in text.split(&boundary).skip(1) {
        if part.starts_with("--") {
            break;
        }
        let part = part.strip_prefix("\r\n").unwrap_or(part);
        let (head, value) = part.split_once("\r\n\r\n")?;
        let name = head
            .split("\r\n")
            .find(|line| line.to_ascii_lowercase().starts_with("content-disposition"))?
            .split(';')
            .find_map(|field| field.trim().strip_prefix("name="))?
            .trim_matches('"')
            .to_owned();
        out.push((name, value.strip_suffix("\r\n").unwrap_or(value).to_owned()));
    }
    Some(out)
}

/// How a recorded request differs from what the document describes for `arguments`; `None`
/// when it is that request. `Err` when the specification leaves the request undefined.
/// A call: its arguments, the tool's schema of its body, and the fields the gateway renamed.
struct Call<'a> {
    arguments: &'a Map<String, Value>,
    /// The input schema's `body` property: where it says `contentEncoding: base64`, the value
    /// is the content's base64 and the wire carries the content itself.
    body_schema: Option<&'a Value>,
    /// The input field of each (place, name) the gateway reported naming otherwise.
    renamed: &'a BTreeMap<(In, String), String>,
}

impl Call<'_> {
    /// The argument given for a parameter, under the field the tool has it as.
    fn argument(&self, place: In, name: &str) -> Option<&Value> {
        let field = self.renamed.get(&(place, name.to_owned())).map_or(name, String::as_str);
        self.arguments.get(field).filter(|value| !value.is_null())
    }
}

/// The bytes a base64 argument stands for.
fn decoded(text: &str) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether a schema of the input says its string is base64 (of a file's bytes).
fn is_base64(schema: Option<&Value>) -> bool {
    schema.and_then(|schema| schema.get("contentEncoding")).and_then(Value::as_str) == Some("base64")
}

fn compare(op: &Op, call: &Call<'_>, request: &Recorded) -> Result<Option<String>, String> {
    if request.method != op.method {
        return Ok(Some(format!("method {} instead of {}", request.method, op.method)));
    }
    // The path: the template, each `{name}` its value per the parameter's style.
    let mut path = String::from(BASE_PATH);
    // A `#` in a path (Box writes `/web_links/{id}#get_shared_link` to tell operations apart)
    // starts the URL's fragment, which is never sent.
    let template = op.path.split('#').next().unwrap_or_default();
    // A `?` in a path (OpenAI's `/responses?beta=true`) starts the URL's query: what follows
    // is part of every request's query.
    let (mut rest, fixed_query) = template.split_once('?').unwrap_or((template, ""));
    while let Some(open) = rest.find('{') {
        path.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or("an unclosed { in the path")? + open;
        let name = &rest[open + 1..close];
        let param = op.params.iter().find(|param| param.place == In::Path && param.name == name);
        let value = call.argument(In::Path, name);
        match (param, value) {
            (Some(param), Some(value)) => {
                if nested(value) {
                    return Err(format!("the path parameter {name} holds a nested value"));
                }
                path.push_str(&path_value(param, value));
            }
            _ => return Err(format!("the path parameter {name} is not declared or has no value")),
        }
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    let (got_path, got_query) = request.target.split_once('?').unwrap_or((&request.target, ""));
    if got_path != path {
        return Ok(Some(format!("path {got_path:?} instead of {path:?}")));
    }
    // The query.
    let mut expected: Vec<String> = fixed_query.split('&').filter(|pair| !pair.is_empty()).map(str::to_owned).collect();
    for param in op.params.iter().filter(|param| param.place == In::Query) {
        let Some(value) = call.argument(In::Query, &param.name) else { continue };
        if nested(value) && !param.as_json {
            return Err(format!("the query parameter {} holds a nested value", param.name));
        }
        expected.extend(query_pairs(param, value));
    }
    let expected = query_segments(expected);
    let got = query_segments(got_query.split('&').map(str::to_owned));
    if got != expected {
        let first = got.iter().zip(&expected).find(|(a, b)| a != b);
        let plus = got_query.contains('+')
            && got
                .iter()
                .map(|(n, v)| format!("{n}={v}").replace('+', "%20"))
                .eq(expected.iter().map(|(n, v)| format!("{n}={v}")));
        let note = if plus { " (a space written +, form-urlencoding; RFC 6570 writes %20)" } else { "" };
        return Ok(Some(match first {
            Some((a, b)) => format!("query {}={} instead of {}={}{note}", a.0, a.1, b.0, b.1),
            None => format!(
                "query {got_query:?} instead of {:?}{note}",
                expected.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("&")
            ),
        }));
    }
    // The headers.
    for param in op.params.iter().filter(|param| param.place == In::Header) {
        // OpenAPI: Accept, Content-Type and Authorization header parameters are ignored.
        if ["accept", "content-type", "authorization"].contains(&param.name.to_ascii_lowercase().as_str()) {
            continue;
        }
        let Some(value) = call.argument(In::Header, &param.name) else { continue };
        if nested(value) {
            return Err(format!("the header {} holds a nested value", param.name));
        }
        let want = header_value(param, value);
        match request.header(&param.name) {
            Some(got) if got == want => {}
            got => return Ok(Some(format!("header {}: {got:?} instead of {want:?}", param.name))),
        }
    }
    // The body.
    let body = call.arguments.get("body").filter(|_| !op.body.is_empty());
    let Some(body) = body else {
        if !request.body.is_empty() {
            return Ok(Some(format!("a body of {} bytes where the call gave none", request.body.len())));
        }
        return Ok(None);
    };
    let content_type = request.header("content-type").unwrap_or_default();
    let base = media_base(&content_type);
    let media = op.body.iter().find(|media| {
        let name = media_base(&media.name);
        name == base
            || name == "*/*"
            || name.strip_suffix("/*").is_some_and(|kind| base.starts_with(&format!("{kind}/")))
    });
    let Some(media) = media else {
        let listed: Vec<&str> = op.body.iter().map(|media| media.name.as_str()).collect();
        return Ok(Some(format!("Content-Type {content_type:?}, not one of {listed:?}")));
    };
    if is_json(&base)
        || (base == "*/*" || media_base(&media.name) == "*/*") && serde_json::from_slice::<Value>(&request.body).is_ok()
    {
        return Ok(match serde_json::from_slice::<Value>(&request.body) {
            Ok(got) if &got == body => None,
            Ok(got) => Some(format!("JSON body {} instead of {}", cut(&got.to_string()), cut(&body.to_string()))),
            Err(_) => Some(format!("a body that is not JSON: {}", cut(&String::from_utf8_lossy(&request.body)))),
        });
    }
    if base == "application/x-www-form-urlencoded" {
        let want = grouped(form_fields(media, body, false).ok_or("a form body of nested values")?);
        let got = grouped(form_urlencoded::parse(&request.body).into_owned().collect());
        return Ok((got != want).then(|| format!("form body {got:?} instead of {want:?}")));
    }
    if base == "multipart/form-data" {
        let mut want = form_fields(media, body, true).ok_or("a multipart body of nested values")?;
        let fields = call.body_schema.and_then(|schema| schema.get("properties"));
        for (name, value) in &mut want {
            let field = fields.and_then(|fields| fields.get(name.as_str()));
            let item = field.and_then(|field| field.get("items"));
            if is_base64(field) || is_base64(item) {
                *value = decoded(value);
            }
        }
        let want = grouped(want);
        let got = grouped(multipart_parts(&content_type, &request.body).ok_or("a multipart body that cannot be read")?);
        return Ok((got != want).then(|| format!("multipart parts {got:?} instead of {want:?}")));
    }
    // Any other media type: the body is the argument's text.
    let want = match body {
        Value::String(text) if is_base64(call.body_schema) => decoded(text).into_bytes(),
        Value::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    };
    Ok((request.body != want).then(|| {
        format!(
            "{base} body {} instead of {}",
            cut(&String::from_utf8_lossy(&request.body)),
            cut(&String::from_utf8_lossy(&want))
        )
    }))
}

fn cut(text: &str) -> String {
    if text.chars().count() > 160 {
        format!("{}…", text.chars().take(160).collect::<String>())
    } else {
        text.to_owned()
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments: valid values from an input schema, deterministic.

/// Writes values an input schema accepts: only what it requires, or every property too.
struct Generator<'a> {
    root: &'a Value,
    full: bool,
    /// Which choice of each `oneOf` or `anyOf` is taken: a value of the first may match
    /// another too, which `oneOf` forbids, so a call refused is tried with the next.
    choice: usize,
}

impl Generator<'_> {
    fn value(&self, schema: &Value, depth: usize, variant: usize) -> Option<Value> {
        let schema = self.deref(schema);
        let Some(object) = schema.as_object() else { return Some(json!("x")) };
        if let Some(constant) = object.get("const") {
            return Some(constant.clone());
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let usable: Vec<&Value> = values.iter().filter(|value| !value.is_null()).collect();
            if usable.is_empty() {
                return values.first().cloned();
            }
            return Some(usable[variant % usable.len()].clone());
        }
        if let Some(Value::Array(all)) = object.get("allOf") {
            let mut merged = object.clone();
            merged.remove("allOf");
            for part in all {
                self.merge(&mut merged, part);
            }
            return self.value(&Value::Object(merged), depth, variant);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(choices)) = object.get(key) {
                let usable: Vec<&Value> =
                    choices.iter().filter(|choice| self.deref(choice).get("type") != Some(&json!("null"))).collect();
                let choice = usable.get(self.choice % usable.len().max(1))?;
                let mut merged = object.clone();
                merged.remove(key);
                self.merge(&mut merged, choice);
                // What only the other choices require is left out, so that the value is of
                // this choice alone (OpenAI's `vector_store_ids` or `vector_stores`).
                let required = |schema: &Value| -> Vec<String> {
                    let schema = self.deref(schema);
                    let list = schema.get("required").and_then(Value::as_array);
                    list.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
                };
                let mine = required(choice);
                let others: Vec<String> = usable
                    .iter()
                    .filter(|other| !std::ptr::eq(**other, *choice))
                    .flat_map(|other| required(other))
                    .filter(|name| !mine.contains(name))
                    .collect();
                if let Some(Value::Object(properties)) = merged.get_mut("properties") {
                    for name in &others {
                        properties.remove(name);
                    }
                }
                return self.value(&Value::Object(merged), depth, variant);
            }
        }
        let kind = match object.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => {
                kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("null").to_owned()
            }
            _ if object.contains_key("properties") => "object".into(),
            _ if object.contains_key("items") => "array".into(),
            _ => "string".into(),
        };
        let number = |key: &str| object.get(key).and_then(Value::as_f64);
        match kind.as_str() {
            "null" => Some(Value::Null),
            "boolean" => Some(json!(variant.is_multiple_of(2))),
            "integer" | "number" => {
                let mut low = number("minimum").unwrap_or(f64::MIN);
                if let Some(exclusive) = number("exclusiveMinimum") {
                    low = low.max(exclusive + 1.0);
                } else if object.get("exclusiveMinimum") == Some(&json!(true)) {
                    low += 1.0;
                }
                let mut high = number("maximum").unwrap_or(f64::MAX);
                if let Some(exclusive) = number("exclusiveMaximum") {
                    high = high.min(exclusive - 1.0);
                } else if object.get("exclusiveMaximum") == Some(&json!(true)) {
                    high -= 1.0;
                }
                let mut chosen = (1 + variant as i64) as f64;
                if chosen < low {
                    chosen = low.ceil();
                }
                if chosen > high {
                    chosen = high.floor();
                }
                if let Some(step) = number("multipleOf").filter(|step| *step > 0.0) {
                    chosen = (chosen / step).ceil() * step;
                }
                Some(if chosen.fract() == 0.0 && chosen.abs() < 9e15 { json!(chosen as i64) } else { json!(chosen) })
            }
            "string" => self.string(object, variant),
            "array" => {
                let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = object.get("maxItems").and_then(Value::as_u64).map_or(usize::MAX, |max| max as usize);
                let count = 2.max(min).min(max);
                let items = object.get("items").cloned().unwrap_or(json!({}));
                let mut out = Vec::new();
                let unique = object.get("uniqueItems") == Some(&json!(true));
                // Each item another variant; a duplicate where items must be unique is passed
                // over for the next variant, up to a few more than the items wanted.
                for index in 0..count + 16 {
                    if out.len() == count {
                        break;
                    }
                    let item = self.value(&items, depth + 1, variant + index)?;
                    if unique && out.contains(&item) {
                        continue;
                    }
                    out.push(item);
                }
                Some(Value::Array(out))
            }
            _ => {
                let mut out = Map::new();
                let required: Vec<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let properties = object.get("properties").and_then(Value::as_object);
                for (name, property) in properties.into_iter().flatten() {
                    let wanted = required.contains(&name.as_str()) || (self.full && depth < 4);
                    if !wanted || self.deref(property).get("readOnly") == Some(&json!(true)) {
                        continue;
                    }
                    match self.value(property, depth + 1, variant) {
                        Some(Value::Null) if !required.contains(&name.as_str()) => {}
                        Some(value) => {
                            out.insert(name.clone(), value);
                        }
                        None if required.contains(&name.as_str()) => return None,
                        None => {}
                    }
                }
                // A required property the schema does not describe (Box's revocation requires a
                // `grant_type` it never defines) may hold anything: a string.
                for name in &required {
                    if !properties.is_some_and(|properties| properties.contains_key(*name)) {
                        out.insert((*name).to_owned(), json!(format!("v{variant}")));
                    }
                }
                if out.is_empty()
                    && properties.is_none_or(Map::is_empty)
                    && self.full
                    && depth < 4
                    && let Some(Value::Object(extra)) = object.get("additionalProperties")
                {
                    out.insert("k1".into(), self.value(&Value::Object(extra.clone()), depth + 1, variant)?);
                }
                Some(Value::Object(out))
            }
        }
    }

    fn string(&self, object: &Map<String, Value>, variant: usize) -> Option<Value> {
        let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = object.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |max| max as usize);
        let format = object.get("format").and_then(Value::as_str).unwrap_or_default();
        let formatted = match format {
            "date-time" => Some("2024-01-02T03:04:05Z"),
            "date" => Some("2024-01-02"),
            "time" => Some("03:04:05Z"),
            "email" => Some("a@example.com"),
            "uri" | "url" | "uri-reference" | "iri" => Some("https://example.com/a"),
            "uuid" => Some("123e4567-e89b-12d3-a456-426614174000"),
            "ipv4" => Some("192.0.2.1"),
            "ipv6" => Some("2001:db8::1"),
            "hostname" => Some("example.com"),
            "byte" => Some("aGk="),
            "duration" => Some("P1D"),
            _ => None,
        };
        let mut candidates: Vec<String> = Vec::new();
        if object.get("contentEncoding").and_then(Value::as_str) == Some("base64") {
            candidates.push("aGk=".into());
        }
        if let Some(text) = formatted {
            candidates.push(text.to_owned());
        }
        // A plain string carries a space, a slash and a non-ASCII letter: what each place must
        // encode is seen encoded.
        candidates.push(format!("v{variant} é/x"));
        for key in ["example", "default"] {
            if let Some(Value::String(text)) = object.get(key) {
                candidates.push(text.clone());
            }
        }
        if let Some(Value::Array(examples)) = object.get("examples") {
            candidates.extend(examples.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        candidates
            .extend(["abc", "ABC", "123", "a1", "AB12", "ab-cd", "US", "EUR", "2024-01-02", "a_b"].map(str::to_owned));
        let pattern = object.get("pattern").and_then(Value::as_str).and_then(|pattern| regex::Regex::new(pattern).ok());
        if object.get("pattern").is_some() && pattern.is_none() {
            return None;
        }
        if let Some(text) =
            object.get("pattern").and_then(Value::as_str).and_then(|pattern| from_pattern(pattern, variant))
        {
            // Checked below like any candidate: the pattern's own string, where it could be made.
            candidates.insert(0, text);
        }
        for candidate in candidates {
            let mut text = candidate;
            if text.chars().count() > max {
                text = text.chars().take(max).collect();
            }
            while text.chars().count() < min {
                text.push('x');
            }
            if pattern.as_ref().is_none_or(|pattern| pattern.is_match(&text)) {
                return Some(Value::String(text));
            }
        }
        None
    }

    /// `part` (of an `allOf`, or the `oneOf` choice taken) added to `merged`: its properties and
    /// its required ones joined to those already there, a property both have taking both
    /// schemas (the part's first, so that its narrower `enum` is the one written), any other
    /// keyword kept where `merged` has it.
    fn merge(&self, merged: &mut Map<String, Value>, part: &Value) {
        let Value::Object(part) = self.deref(part) else { return };
        for (key, value) in part {
            match (key.as_str(), merged.get_mut(key)) {
                ("properties", Some(Value::Object(mine))) => {
                    for (name, schema) in value.as_object().into_iter().flatten() {
                        let both = match mine.remove(name) {
                            Some(existing) => json!({"allOf": [schema, existing]}),
                            None => schema.clone(),
                        };
                        mine.insert(name.clone(), both);
                    }
                }
                ("required", Some(Value::Array(mine))) => {
                    mine.extend(value.as_array().cloned().unwrap_or_default());
                }
                (_, Some(_)) => {}
                (_, None) => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }

    /// What a local `$ref` of the input schema names.
    fn deref<'v>(&'v self, mut schema: &'v Value) -> &'v Value {
        for _ in 0..32 {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { return schema };
            match reference.strip_prefix('#').and_then(|pointer| self.root.pointer(pointer)) {
                Some(found) => schema = found,
                None => return &Value::Null,
            }
        }
        schema
    }
}

/// A string a simple regular expression matches: literals, `.`, `\d`, `\w`, classes,
/// groups with alternatives, and quantifiers, each repeated as few times as it allows (once
/// for `+`); `variant` picks other members of each class, so that list items differ. `None`
/// for what it does not know (lookaround, backreferences).
fn from_pattern(pattern: &str, variant: usize) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut at = 0;
    let out = pattern_sequence(&chars, &mut at, variant)?;
    (at == chars.len()).then_some(out)
}

/// The alternatives up to a `)` or the end: the first one's string.
fn pattern_sequence(chars: &[char], at: &mut usize, variant: usize) -> Option<String> {
    let mut out = String::new();
    let mut first: Option<String> = None;
    while *at < chars.len() {
        let c = chars[*at];
        let atom: Vec<char> = match c {
            ')' => break,
            '|' => {
                *at += 1;
                first.get_or_insert(std::mem::take(&mut out));
                continue;
            }
            '^' | '$' => {
                *at += 1;
                continue;
            }
            '(' => {
                *at += 1;
                if chars.get(*at) == Some(&'?') {
                    if chars.get(*at + 1) != Some(&':') {
                        return None;
                    }
                    *at += 2;
                }
                let inner = pattern_sequence(chars, at, variant)?;
                if chars.get(*at) != Some(&')') {
                    return None;
                }
                *at += 1;
                let count = pattern_count(chars, at)?;
                out.push_str(&inner.repeat(count));
                continue;
            }
            '[' => {
                *at += 1;
                let negated = chars.get(*at) == Some(&'^');
                if negated {
                    *at += 1;
                }
                let mut members = Vec::new();
                let mut start = true;
                while *at < chars.len() && (chars[*at] != ']' || start) {
                    start = false;
                    let mut member = chars[*at];
                    if member == '\\' {
                        *at += 1;
                        member = match chars.get(*at)? {
                            'd' => '0',
                            'w' => 'a',
                            's' => ' ',
                            other => *other,
                        };
                    }
                    if chars.get(*at + 1) == Some(&'-') && chars.get(*at + 2).is_some_and(|end| *end != ']') {
                        let end = chars[*at + 2];
                        members.extend(member..=end);
                        *at += 3;
                    } else {
                        members.push(member);
                        *at += 1;
                    }
                }
                *at += 1;
                if negated {
                    let allowed: Vec<char> = ('a'..='z').chain('0'..='9').filter(|c| !members.contains(c)).collect();
                    allowed
                } else {
                    members
                }
            }
            '\\' => {
                *at += 1;
                let escaped = *chars.get(*at)?;
                *at += 1;
                match escaped {
                    'd' => ('0'..='9').collect(),
                    'w' => ('a'..='z').collect(),
                    's' => vec![' '],
                    'b' | 'B' | 'A' | 'z' | 'Z' | '1'..='9' => return None,
                    other => vec![other],
                }
            }
            '.' => {
                *at += 1;
                ('a'..='z').collect()
            }
            '*' | '+' | '?' | '{' => return None,
            other => {
                *at += 1;
                vec![other]
            }
        };
        if atom.is_empty() {
            return None;
        }
        let count = pattern_count(chars, at)?;
        for index in 0..count {
            out.push(atom[(variant + index) % atom.len()]);
        }
    }
    // The alternatives in turn, by variant: `0|[1-9][0-9]*` writes more than one value.
    Some(match first {
        Some(_) if variant % 2 == 1 && !out.is_empty() => out,
        Some(first) => first,
        None => out,
    })
}

/// The quantifier after an atom, as how many times it is repeated: its least, or once for `+`.
fn pattern_count(chars: &[char], at: &mut usize) -> Option<usize> {
    let count = match chars.get(*at) {
        Some('*') | Some('?') => {
            *at += 1;
            0
        }
        Some('+') => {
            *at += 1;
            1
        }
        Some('{') => {
            let close = chars[*at..].iter().position(|c| *c == '}')? + *at;
            let inside: String = chars[*at + 1..close].iter().collect();
            *at = close + 1;
            inside.split(',').next()?.trim().parse().ok()?
        }
        _ => 1,
    };
    // A lazy or possessive mark changes nothing here.
    if matches!(chars.get(*at), Some('?') | Some('+')) {
        *at += 1;
    }
    Some(count)
}

// ---------------------------------------------------------------------------------------------
// The run.

/// What one document came to.
#[derive(Default)]
struct Outcome {
    document: String,
    format: String,
    version: String,
    operations: usize,
    refused: Option<String>,
    served: usize,
    left_out: Vec<String>,
    checked: usize,
    matched: usize,
    undefined: usize,
    /// Tools the generator could write no valid arguments for (a `pattern` it cannot meet).
    skipped: Vec<String>,
    /// Calls the gateway answered with an error and sent no request for.
    not_sent: Vec<String>,
    differ: Vec<String>,
    /// Calls that match, by the body's media type (`none` without one).
    bodies: BTreeMap<String, usize>,
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi-corpus");
    let mut documents: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json" || ext == "yaml" || ext == "yml"))
        .collect();
    documents.sort();
    documents
}

/// Which of the document's operations a tool is: the one whose `operationId` it is named by,
/// else the one whose method and path template the request made matches.
fn operation_of<'a>(
    ops: &'a [Op],
    tool: &str,
    tool_fields: &[String],
    description: &str,
    request: Option<&Recorded>,
) -> Option<&'a Op> {
    if let Some(op) = ops.iter().find(|op| op.id.as_deref() == Some(tool)) {
        return Some(op);
    }
    // An `operationId` outside MCP's tool-name alphabet (`A-Z a-z 0-9 _ -`), each run of other
    // characters one `_`: Box's `get_web_links_id#get_shared_link`.
    let in_alphabet = |id: &str| {
        let mut name = String::new();
        for c in id.chars() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                name.push(c);
            } else if !name.ends_with('_') {
                name.push('_');
            }
        }
        name
    };
    let named: Vec<&Op> = ops.iter().filter(|op| op.id.as_deref().map(in_alphabet).as_deref() == Some(tool)).collect();
    if let [op] = named.as_slice() {
        return Some(op);
    }
    let request = request?;
    let path = request.target.split('?').next().unwrap_or_default();
    let path = path.strip_prefix(BASE_PATH).unwrap_or(path);
    let found: Vec<&Op> = ops
        .iter()
        .filter(|op| op.method == request.method)
        .filter(|op| {
            let mut pattern = String::from("^");
            let mut rest = op.path.split(['#', '?']).next().unwrap_or_default();
            while let Some(open) = rest.find('{') {
                pattern.push_str(&regex::escape(&rest[..open]));
                pattern.push_str("[^/]*");
                rest = rest[open..].find('}').map_or("", |close| &rest[open + close + 1..]);
            }
            pattern.push_str(&regex::escape(rest.trim_end_matches('/')));
            pattern.push_str("/?$");
            regex::Regex::new(&pattern).is_ok_and(|pattern| pattern.is_match(path))
        })
        .collect();
    if found.len() <= 1 {
        return found.first().copied();
    }
    // Several templates match (`/files/{id}/metadata/{scope}/{key}` and a literal
    // `/files/{id}/metadata/enterprise/securityClassification-6VMVochwUWo`): the one whose
    // parameters are the tool's, then the most literal one, as a router picks.
    let fields: Vec<&str> = tool_fields.iter().map(String::as_str).filter(|field| *field != "body").collect();
    let same: Vec<&Op> = found
        .iter()
        .copied()
        .filter(|op| {
            let mut names: Vec<&str> =
                op.params.iter().filter(|param| param.place != In::Cookie).map(|param| param.name.as_str()).collect();
            names.sort_unstable();
            let mut mine = fields.clone();
            mine.sort_unstable();
            names == mine
        })
        .collect();
    let pool = if same.is_empty() { found } else { same };
    let summarised: Vec<&Op> = pool
        .iter()
        .copied()
        .filter(|op| {
            op.summary.as_deref().is_some_and(|summary| !summary.is_empty() && description.starts_with(summary))
        })
        .collect();
    let pool = if summarised.is_empty() { pool } else { summarised };
    let literal = |op: &Op| op.path.split('/').filter(|segment| !segment.contains('{')).map(str::len).sum::<usize>();
    pool.into_iter().max_by_key(|op| literal(op))
}

async fn run_document(path: &Path) -> Outcome {
    let described = describe(path);
    let mut outcome = Outcome {
        document: path.file_name().unwrap().to_string_lossy().into_owned(),
        format: described.format.into(),
        version: described.version.clone(),
        operations: described.ops.len(),
        ..Outcome::default()
    };
    let (logs, _logging) = Logs::capture();
    let stub = Stub::start().await;
    let server = FusionServer::builder::<()>("openapi-corpus", "1").build(()).unwrap();
    let upstream = Upstream::openapi(path.display().to_string()).base_url(format!("{}{BASE_PATH}", stub.url));
    let running = Gateway::new()
        .connect_timeout(Duration::from_secs(60))
        .mount(Mount::new("api").max_tools(100_000), upstream)
        .start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    let tools: Vec<Tool> = client.list_all_tools().await.unwrap();
    let tools: Vec<Tool> = tools.into_iter().filter(|tool| tool.name.starts_with("api.")).collect();
    let log = logs.text();
    if tools.is_empty() && !described.ops.is_empty() {
        let reason = log
            .lines()
            .find_map(|line| line.split_once("upstream unavailable: ").map(|(_, reason)| reason.to_owned()))
            .unwrap_or_else(|| "no tools, and no reason logged".into());
        let reason = reason.split("; next attempt").next().unwrap_or_default().to_owned();
        outcome.refused = Some(reason);
    }
    // The figures name a document by its file alone.
    let log = log.replace(&format!("{}/", path.parent().unwrap().display()), "");
    if let Some(reason) = &mut outcome.refused {
        *reason = reason.replace(&format!("{}/", path.parent().unwrap().display()), "");
    }
    outcome.served = tools.len();
    // Operations left out, as the gateway logs them (the lines that say "left out").
    outcome.left_out = log
        .lines()
        .filter(|line| line.contains(" is left out: "))
        .map(|line| {
            line.split_once(&format!("{}: ", outcome.document)).map_or(line, |(_, note)| note).trim().to_owned()
        })
        .collect();
    let renames = renames(&log);
    for tool in &tools {
        let name = tool.name.strip_prefix("api.").unwrap_or(&tool.name).to_owned();
        let schema = Value::Object((*tool.input_schema).clone());
        let mut previous: Option<Value> = None;
        for full in [false, true] {
            let mut attempt = None;
            for choice in 0..4 {
                let generator = Generator { root: &schema, full, choice };
                let Some(Value::Object(arguments)) = generator.value(&schema, 0, usize::from(full)) else { break };
                let arguments = ascii_headers(&described.ops, arguments);
                stub.take();
                let result = client
                    .call_tool(CallToolRequestParams::new(tool.name.to_string()).with_arguments(arguments.clone()))
                    .await;
                let requests = stub.take();
                // Refused for a `oneOf` choice its value also matched another of: the next choice.
                let refused = requests.is_empty()
                    && result.as_ref().is_ok_and(|result| text(result).contains("more than one of the allowed shapes"));
                attempt = Some((arguments, result, requests));
                if !refused {
                    break;
                }
            }
            let Some((arguments, result, requests)) = attempt else {
                outcome.skipped.push(format!("{name}: no valid arguments could be written from its input schema"));
                break;
            };
            if previous.as_ref() == Some(&Value::Object(arguments.clone())) {
                continue;
            }
            previous = Some(Value::Object(arguments.clone()));
            outcome.checked += 1;
            let Some(request) = requests.first() else {
                let said = match &result {
                    Ok(result) => cut(&text(result)),
                    Err(error) => cut(&error.to_string()),
                };
                outcome
                    .not_sent
                    .push(format!("{name} {}: no request sent: {said}", if full { "(all)" } else { "(required)" }));
                continue;
            };
            let fields: Vec<String> = tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            if let Ok(dir) = std::env::var("OPENAPI_CORPUS_REQUESTS") {
                dump(Path::new(&dir), &outcome.document, &name, request);
            }
            let Some(op) = operation_of(
                &described.ops,
                &name,
                &fields,
                tool.description.as_deref().unwrap_or_default(),
                Some(request),
            ) else {
                outcome
                    .differ
                    .push(format!("{name}: {} {} is no operation of the document", request.method, request.target));
                continue;
            };
            let renamed = renames.get(&op.label()).cloned().unwrap_or_default();
            let generator = Generator { root: &schema, full, choice: 0 };
            let body_schema = schema.pointer("/properties/body").map(|body| generator.deref(body));
            let call = Call { arguments: &arguments, body_schema, renamed: &renamed };
            match compare(op, &call, request) {
                Ok(None) if requests.len() == 1 => {
                    outcome.matched += 1;
                    let media = match request.header("content-type") {
                        Some(media) if !request.body.is_empty() => media_base(&media),
                        _ => "none".into(),
                    };
                    *outcome.bodies.entry(media).or_default() += 1;
                }
                Ok(None) => outcome.differ.push(format!("{name}: {} requests for one call", requests.len())),
                Ok(Some(difference)) => outcome.differ.push(format!(
                    "{name} ({}) {}: {difference}; arguments {}",
                    op.label(),
                    if full { "all" } else { "required" },
                    cut(&Value::Object(arguments.clone()).to_string())
                )),
                Err(why) => {
                    outcome.undefined += 1;
                    let _ = why;
                }
            }
        }
    }
    drop(client);
    running.shutdown().await;
    outcome
}

/// The parameters the gateway says it named otherwise in a tool, by operation (`GET /a`): its
/// note reads `GET /a: /paths/...: the query parameter "id" is "query_id" in the tool` (or
/// "is named").
fn renames(log: &str) -> BTreeMap<String, BTreeMap<(In, String), String>> {
    let note = regex::Regex::new(
        r#"document [^:]*: ([A-Z]+ [^:]*): [^ ]*: the (path|query|header) parameter "((?:[^"\\]|\\.)*)" is (?:named )?"([^"]*)" in the tool"#,
    )
    .unwrap();
    let mut out: BTreeMap<String, BTreeMap<(In, String), String>> = BTreeMap::new();
    for found in note.captures_iter(log) {
        let place = match &found[2] {
            "path" => In::Path,
            "query" => In::Query,
            _ => In::Header,
        };
        out.entry(found[1].to_owned()).or_default().insert((place, found[3].to_owned()), found[4].to_owned());
    }
    out
}

/// `arguments` with each header parameter's text in visible ASCII: a header value is bytes
/// HTTP lets hold only that (RFC 9110's obs-text is obsolete), so the non-ASCII test text goes
/// only where the specification says how to encode it.
fn ascii_headers(ops: &[Op], mut arguments: Map<String, Value>) -> Map<String, Value> {
    // Any header parameter of the document's: which operation a tool is may be known only
    // from the request it makes.
    let headers: Vec<&str> = ops
        .iter()
        .flat_map(|op| op.params.iter().filter(|param| param.place == In::Header).map(|param| param.name.as_str()))
        .collect();
    for (name, value) in arguments.iter_mut() {
        if headers.contains(&name.as_str()) {
            ascii(value);
        }
    }
    arguments
}

fn ascii(value: &mut Value) {
    match value {
        Value::String(text) => *text = text.replace(" é/", "-e-"),
        Value::Array(items) => items.iter_mut().for_each(ascii),
        Value::Object(fields) => fields.values_mut().for_each(ascii),
        _ => {}
    }
}

/// Appends `request` to `dir/<document>.jsonl`, for a second oracle to read
/// (`tests/gateway/openapi-corpus/validate.py`, with openapi-core).
fn dump(dir: &Path, document: &str, tool: &str, request: &Recorded) {
    use base64::Engine as _;
    use std::io::Write as _;
    std::fs::create_dir_all(dir).unwrap();
    let line = json!({
        "tool": tool,
        "method": request.method,
        "target": request.target,
        "headers": request.headers.iter().map(|(name, value)| json!([name, String::from_utf8_lossy(value)])).collect::<Vec<_>>(),
        "body": base64::engine::general_purpose::STANDARD.encode(&request.body),
    });
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(dir.join(format!("{document}.jsonl"))).unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The figures, as Markdown.
fn summary(outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    out.push_str("| Document | Format | Version | Operations | Served | Left out | No arguments written | Calls checked | Match | Undefined by the spec | Not sent | Differ |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for outcome in outcomes {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            outcome.document,
            outcome.format,
            outcome.version,
            outcome.operations,
            if outcome.refused.is_some() { "refused".to_owned() } else { outcome.served.to_string() },
            outcome.left_out.len(),
            outcome.skipped.len(),
            outcome.checked,
            outcome.matched,
            outcome.undefined,
            outcome.not_sent.len(),
            outcome.differ.len()
        );
    }
    let total = |pick: fn(&Outcome) -> usize| outcomes.iter().map(pick).sum::<usize>();
    let _ = writeln!(
        out,
        "| **all {}** | | | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        outcomes.len(),
        total(|o| o.operations),
        total(|o| o.served),
        total(|o| o.left_out.len()),
        total(|o| o.skipped.len()),
        total(|o| o.checked),
        total(|o| o.matched),
        total(|o| o.undefined),
        total(|o| o.not_sent.len()),
        total(|o| o.differ.len())
    );
    let mut bodies: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in outcomes {
        for (media, count) in &outcome.bodies {
            *bodies.entry(media.as_str()).or_default() += count;
        }
    }
    out.push_str("\nCalls that match, by the body's media type: ");
    let listed: Vec<String> = bodies.iter().map(|(media, count)| format!("{media} {count}")).collect();
    out.push_str(&listed.join(", "));
    out.push_str(".\n");
    for outcome in outcomes {
        if outcome.refused.is_none()
            && outcome.left_out.is_empty()
            && outcome.not_sent.is_empty()
            && outcome.differ.is_empty()
        {
            continue;
        }
        let _ = writeln!(out, "\n### `{}`\n", outcome.document);
        if let Some(reason) = &outcome.refused {
            let _ = writeln!(out, "- refused: {reason}");
        }
        for (what, list) in
            [("left out", &outcome.left_out), ("not sent", &outcome.not_sent), ("differs", &outcome.differ)]
        {
            for line in list.iter().take(8) {
                let _ = writeln!(out, "- {what}: {}", line.replace('|', "\\|"));
            }
            if list.len() > 8 {
                let _ = writeln!(out, "- … and {} more {what}", list.len() - 8);
            }
        }
    }
    out
}

/// Every valid document of the corpus loads, and every call is the request it describes.
#[tokio::test]
async fn every_vendor_document_loads_and_every_call_is_the_request_it_describes() {
    let mut outcomes = Vec::new();
    for path in corpus() {
        let only = std::env::var("OPENAPI_CORPUS_ONLY").unwrap_or_default();
        if !only.is_empty() && !path.to_string_lossy().contains(&only) {
            continue;
        }
        outcomes.push(run_document(&path).await);
    }
    let figures = summary(&outcomes);
    println!("{figures}");
    if let Ok(report) = std::env::var("OPENAPI_CORPUS_REPORT") {
        std::fs::write(report, &figures).unwrap();
    }
    let mut failures = Vec::new();
    for outcome in &outcomes {
        let invalid = INVALID.iter().any(|(document, _)| *document == outcome.document);
        if let Some(reason) = outcome.refused.as_ref().filter(|_| !invalid) {
            failures.push(format!("{} is refused: {reason}", outcome.document));
        }
        // Each operation is served or reported left out: none goes missing unsaid.
        if outcome.refused.is_none() && outcome.served + outcome.left_out.len() != outcome.operations {
            failures.push(format!(
                "{}: {} operations, {} served and {} reported left out",
                outcome.document,
                outcome.operations,
                outcome.served,
                outcome.left_out.len()
            ));
        }
        for difference in outcome.differ.iter().chain(&outcome.not_sent) {
            failures.push(format!("{}: {difference}", outcome.document));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// The oracle writes the OpenAPI specification's "Style Examples" (3.1.1's table, which follows
/// RFC 6570 where 3.0's label rows did not), for `color` as `"blue"`, `["blue", "black",
/// "brown"]` and `{"B": 150, "G": 200, "R": 100}` (keys in the order a JSON object keeps them).
#[test]
fn the_oracle_writes_the_specifications_style_examples() {
    let param = |place: In, style: &str, explode: bool| Param {
        name: "color".into(),
        place,
        style: style.into(),
        explode,
        allow_reserved: false,
        as_json: false,
    };
    let string = json!("blue");
    let array = json!(["blue", "black", "brown"]);
    let object = json!({"B": 150, "G": 200, "R": 100});
    let path = |style: &str, explode: bool, value: &Value| path_value(&param(In::Path, style, explode), value);
    assert_eq!(path("matrix", false, &string), ";color=blue");
    assert_eq!(path("matrix", false, &array), ";color=blue,black,brown");
    assert_eq!(path("matrix", false, &object), ";color=B,150,G,200,R,100");
    assert_eq!(path("matrix", true, &array), ";color=blue;color=black;color=brown");
    assert_eq!(path("matrix", true, &object), ";B=150;G=200;R=100");
    assert_eq!(path("matrix", false, &json!("")), ";color");
    assert_eq!(path("label", false, &string), ".blue");
    assert_eq!(path("label", false, &array), ".blue,black,brown");
    assert_eq!(path("label", false, &object), ".B,150,G,200,R,100");
    assert_eq!(path("label", true, &array), ".blue.black.brown");
    assert_eq!(path("label", true, &object), ".B=150.G=200.R=100");
    assert_eq!(path("simple", false, &array), "blue,black,brown");
    assert_eq!(path("simple", false, &object), "B,150,G,200,R,100");
    assert_eq!(path("simple", true, &object), "B=150,G=200,R=100");
    // RFC 6570's simple expansion encodes the reserved characters of a value.
    assert_eq!(path("simple", false, &json!("a b/c,d")), "a%20b%2Fc%2Cd");
    let query =
        |style: &str, explode: bool, value: &Value| query_pairs(&param(In::Query, style, explode), value).join("&");
    assert_eq!(query("form", false, &string), "color=blue");
    assert_eq!(query("form", false, &array), "color=blue,black,brown");
    assert_eq!(query("form", false, &object), "color=B,150,G,200,R,100");
    assert_eq!(query("form", true, &array), "color=blue&color=black&color=brown");
    assert_eq!(query("form", true, &object), "B=150&G=200&R=100");
    assert_eq!(query("form", true, &json!("")), "color=");
    assert_eq!(query("spaceDelimited", false, &array), "color=blue%20black%20brown");
    assert_eq!(query("spaceDelimited", false, &object), "color=B%20150%20G%20200%20R%20100");
    assert_eq!(query("pipeDelimited", false, &array), "color=blue|black|brown");
    assert_eq!(query("pipeDelimited", false, &object), "color=B|150|G|200|R|100");
    assert_eq!(query("deepObject", true, &object), "color[B]=150&color[G]=200&color[R]=100");
    assert_eq!(query("form", true, &json!("a b+c&d")), "color=a%20b%2Bc%26d");
    let header = |explode: bool, value: &Value| header_value(&param(In::Header, "simple", explode), value);
    assert_eq!(header(false, &array), "blue,black,brown");
    assert_eq!(header(false, &object), "B,150,G,200,R,100");
    assert_eq!(header(true, &object), "B=150,G=200,R=100");
    // A form body: exploded form by default, deepObject where the Encoding Object says.
    let mut media = Media { name: "application/x-www-form-urlencoded".into(), encoding: BTreeMap::new() };
    let body = json!({"ids": [1, 2], "name": "a b", "meta": {"k": "v"}});
    let fields = grouped(form_fields(&media, &body, false).unwrap());
    let pairs = |list: &[(&str, &str)]| list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(fields, pairs(&[("ids", "1"), ("ids", "2"), ("k", "v"), ("name", "a b")]));
    media.encoding.insert("meta".into(), Encoding { style: Some("deepObject".into()), explode: Some(true) });
    let fields = grouped(form_fields(&media, &body, false).unwrap());
    assert_eq!(fields, pairs(&[("ids", "1"), ("ids", "2"), ("meta[k]", "v"), ("name", "a b")]));
}

/// The generator meets the patterns vendors write (Twilio's SIDs, Discord's snowflakes), and
/// two variants differ, so that the items of a list with `uniqueItems` do.
#[test]
fn the_generator_writes_strings_the_vendors_patterns_match() {
    for pattern in ["^AC[0-9a-fA-F]{32}$", "^(0|[1-9][0-9]{0,19})$", r"^\+?[1-9]\d{1,14}$", "^[a-z]+(-[a-z]+)*$"] {
        let compiled = regex::Regex::new(pattern).unwrap();
        let (one, two) = (from_pattern(pattern, 0).unwrap(), from_pattern(pattern, 1).unwrap());
        assert!(compiled.is_match(&one) && compiled.is_match(&two), "{pattern}: {one}, {two}");
    }
    assert_ne!(from_pattern("^AC[0-9a-fA-F]{32}$", 0), from_pattern("^AC[0-9a-fA-F]{32}$", 1));
    assert_eq!(from_pattern("(?=a)b", 0), None);
}
