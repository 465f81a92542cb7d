//! An HTTP API described by an OpenAPI document, as a mount's upstream: the document read from
//! a file or a URL, each operation one tool, each call one request, and the API's answer a
//! result, or the envelope its status names.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion::CallInfo;
use mcp_fusion::handoff::{Forward, ForwardError};
use mcp_fusion::wire::{ErrorCode, echo};
use percent_encoding::percent_decode_str;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::openapi::{
    Imported, Location, Note, Operation, Parameter, encode_body, header_value, import, path_value, query_pairs, shown,
};
use crate::oversized::MAX_MESSAGE_BYTES;

/// The largest OpenAPI document read, in bytes.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// An API's operations, where they are served, and the headers every request carries.
pub(crate) struct Api {
    client: reqwest::Client,
    base: Url,
    headers: HeaderMap,
    operations: HashMap<String, Arc<Operation>>,
}

/// Where an API's document is, where its calls go, and what they carry.
pub(crate) struct ApiSource<'a> {
    /// A file's path, or an `http(s)://` URL.
    pub document: &'a str,
    /// Where the operations' paths are joined, if the mount says.
    pub base_url: Option<&'a str>,
    /// Sent with every request (the API's credentials), and with the document's.
    pub headers: &'a [(String, String)],
}

impl ApiSource<'_> {
    /// Reads the document and makes its operations tools (at most `max_tools` of them: one
    /// that has more is refused, as an MCP upstream listing more is). Each operation left out,
    /// renamed or without a parameter the mount sets is logged as a warning, and the rest are
    /// served. The error says what to fix, in words for the mount's state.
    pub(crate) async fn load(&self, max_tools: usize) -> Result<(Vec<Tool>, Api), String> {
        let headers = configured_headers(self.headers)?;
        let client = reqwest::Client::builder()
            // A redirect could carry the API's credentials elsewhere: the answer is the API's.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("fusion-gateway/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| format!("no HTTP client: {error}"))?;
        let (bytes, fetched_from) = self.read(&client, &headers).await?;
        // Parsing and reading up to 16 MiB of JSON takes a while: on a thread of the blocking
        // pool, so other mounts and the gateway's own requests are served meanwhile.
        let source = self.document.to_owned();
        let (document, mut imported) =
            tokio::task::spawn_blocking(move || parse_and_import(&source, &bytes))
                .await
                .map_err(|error| format!("the OpenAPI document {}: its import failed: {error}", self.document))??;
        let base = self.base(&document, fetched_from.as_ref(), !headers.is_empty())?;
        leave_to_the_mount(&mut imported, &headers, &base);
        for note in &imported.notes {
            tracing::warn!("the OpenAPI document {}: {note}", self.document);
        }
        let operations = imported.operations;
        if operations.len() > max_tools {
            return Err(format!(
                "the OpenAPI document {} has {} operations, more than the {max_tools} tools its mount takes (max_tools), so none are served",
                self.document,
                operations.len()
            ));
        }
        let tools = operations.iter().map(tool).collect();
        let operations =
            operations.into_iter().map(|operation| (operation.name.clone(), Arc::new(operation))).collect();
        Ok((tools, Api { client, base, headers, operations }))
    }

    /// The document's bytes, and its URL when it was fetched.
    async fn read(&self, client: &reqwest::Client, headers: &HeaderMap) -> Result<(Vec<u8>, Option<Url>), String> {
        let source = self.document;
        let (bytes, url) = if source.starts_with("http://") || source.starts_with("https://") {
            let url =
                Url::parse(source).map_err(|error| format!("the document's URL {source:?} is no URL: {error}"))?;
            let response = client
                .get(url.clone())
                .headers(headers.clone())
                // A server that picks the format by this header may hold the document in YAML.
                .header(reqwest::header::ACCEPT, "application/json, application/yaml;q=0.9, */*;q=0.8")
                .send()
                .await
                .map_err(|error| format!("the OpenAPI document {source} could not be fetched: {}", reached(&error)))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("the OpenAPI document {source} answered HTTP {}", said_status(status)));
            }
            let bytes = read_capped(response, MAX_DOCUMENT_BYTES)
                .await
                .map_err(|problem| format!("the OpenAPI document {source}: {problem}"))?;
            (bytes, Some(url))
        } else {
            let size = tokio::fs::metadata(source)
                .await
                .map_err(|error| format!("the OpenAPI document {source} cannot be read: {error}"))?
                .len();
            if size > MAX_DOCUMENT_BYTES as u64 {
                return Err(format!(
                    "the OpenAPI document {source} is {size} bytes, more than {MAX_DOCUMENT_BYTES} bytes"
                ));
            }
            let bytes = tokio::fs::read(source)
                .await
                .map_err(|error| format!("the OpenAPI document {source} cannot be read: {error}"))?;
            (bytes, None)
        };
        Ok((bytes, url))
    }

    /// Where the operations' paths are joined: `base_url`, else the document's first server
    /// (relative to where the document came from), else the origin it came from.
    fn base(&self, document: &Value, fetched_from: Option<&Url>, credentials: bool) -> Result<Url, String> {
        if let Some(base) = self.base_url {
            return base_url(base).map_err(|problem| format!("base_url {problem}"));
        }
        let server = document.pointer("/servers/0/url").and_then(Value::as_str);
        let base = match (server, fetched_from) {
            (Some(server), Some(from)) => from.join(server).map_err(|error| {
                format!("the document's first server {} is no URL: {error}; set the mount's base_url", echo(server))
            })?,
            (Some(server), None) => Url::parse(server).map_err(|_| {
                format!("the document's first server {} is not an absolute URL; set the mount's base_url", echo(server))
            })?,
            (None, Some(from)) => from.join("/").map_err(|error| format!("{from} has no origin: {error}"))?,
            (None, None) => {
                return Err(format!(
                    "the OpenAPI document {} names no server; set the mount's base_url to where the API is served",
                    self.document
                ));
            }
        };
        // The document chose this place: the API's credentials go there only if it is where the
        // document itself came from, or the mount says so with base_url.
        if credentials && fetched_from.is_some_and(|from| from.origin() != base.origin()) {
            return Err(format!(
                "the document sends calls to {}, another origin than its own, and the mount's headers would go there; set base_url to it to accept that",
                echo(base.as_str())
            ));
        }
        base_url(base.as_str()).map_err(|problem| format!("the document's first server {problem}"))
    }
}

/// The document `source` holds in `bytes`, and its operations: JSON, else YAML; OpenAPI 3,
/// or Swagger 2.0 converted to it first.
pub(crate) fn parse_and_import(source: &str, bytes: &[u8]) -> Result<(Value, Imported), String> {
    let document: Value = match serde_json::from_slice(bytes) {
        Ok(document) => document,
        Err(json) => crate::yaml::parse(bytes).map_err(|yaml| {
            // A document that opens as JSON does is JSON with a mistake: the JSON parser's
            // sentence points at it, where YAML's would not.
            let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace());
            if first == Some(&b'{') {
                format!("the OpenAPI document {source} is neither JSON ({json}) nor YAML")
            } else {
                format!("the OpenAPI document {source} is neither JSON nor YAML ({yaml})")
            }
        })?,
    };
    let document = match (document.get("openapi"), document.get("swagger")) {
        (None, Some(version)) if crate::swagger::is_swagger_2(version) => {
            crate::swagger::convert(&document).map_err(|error| format!("the Swagger 2.0 document {source}: {error}"))?
        }
        (None, Some(version)) => {
            let version = match version {
                Value::String(version) => echo(version),
                Value::Number(version) => version.to_string(),
                other => mcp_fusion_wire::value_kind(other).to_owned(),
            };
            return Err(format!(
                "the OpenAPI document {source} is Swagger {version}, which is not read; the gateway reads OpenAPI 3.0 and 3.1, and Swagger 2.0"
            ));
        }
        _ => document,
    };
    let operations = import(&document).map_err(|error| format!("the OpenAPI document {source}: {error}"))?;
    Ok((document, operations))
}

/// Takes out of each operation the parameters the mount sets itself: a header named as one of
/// the mount's headers (its credentials, like `X-API-Key`), or a query parameter named as a
/// key of the base URL's query (`?api-key=`). The mount sets them on every request, so the
/// tool does not ask for them and no call can set them; a note says so.
fn leave_to_the_mount(imported: &mut Imported, headers: &HeaderMap, base: &Url) {
    let set_by_the_mount = |parameter: &Parameter| match parameter.location {
        Location::Header => {
            headers.keys().any(|set| set.as_str().eq_ignore_ascii_case(&parameter.name)).then_some("its headers")
        }
        Location::Query => {
            base.query_pairs().any(|(set, _)| set == parameter.name.as_str()).then_some("its base_url's query")
        }
        Location::Path => None,
    };
    for operation in &mut imported.operations {
        let label = format!("{} {}", operation.method, shown(&operation.path));
        let mut kept = Vec::with_capacity(operation.parameters.len());
        for parameter in std::mem::take(&mut operation.parameters) {
            let Some(set_by) = set_by_the_mount(&parameter) else {
                kept.push(parameter);
                continue;
            };
            if let Some(Value::Object(properties)) = operation.input_schema.get_mut("properties") {
                properties.remove(&parameter.field);
            }
            if let Some(Value::Array(required)) = operation.input_schema.get_mut("required") {
                required.retain(|field| field.as_str() != Some(parameter.field.as_str()));
                if required.is_empty() {
                    operation.input_schema.remove("required");
                }
            }
            imported.notes.push(Note::Dropped {
                operation: label.clone(),
                at: parameter.at.clone(),
                what: format!("the {} parameter {}", parameter.location.word(), echo(&parameter.name)),
                why: format!("the mount sets it ({set_by})"),
            });
        }
        operation.parameters = kept;
    }
}

/// A base URL: http(s), no credentials, no fragment.
fn base_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|error| format!("{} is not an absolute URL ({error})", echo(text)))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("{} is not an http:// or https:// URL", echo(text)));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{} has credentials in it; send them as a header instead", echo(text)));
    }
    if url.fragment().is_some() {
        return Err(format!("{} has a fragment", echo(text)));
    }
    Ok(url)
}

/// The mount's headers, each checked.
fn configured_headers(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("{} is no header name", echo(name)))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name} holds a character no header may"))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    Ok(map)
}

/// An operation as a tool: its method says whether it only reads.
fn tool(operation: &Operation) -> Tool {
    let annotations = match operation.method.as_str() {
        "GET" | "HEAD" | "OPTIONS" => ToolAnnotations::new().read_only(true).idempotent(true),
        "PUT" => ToolAnnotations::new().read_only(false).destructive(false).idempotent(true),
        "DELETE" => ToolAnnotations::new().read_only(false).destructive(true).idempotent(true),
        _ => ToolAnnotations::new().read_only(false).destructive(false).idempotent(false),
    };
    Tool::new(operation.name.clone(), operation.description.clone(), Arc::new(operation.input_schema.clone()))
        .with_annotations(annotations.open_world(true))
}

/// How long a call the client cancelled waits for the API's answer: an answer says what
/// happened; none leaves the call's effect unknown.
const CANCELLED_ANSWER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl Forward for Api {
    fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        call: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>> {
        let request = self.operations.get(tool).ok_or_else(|| ForwardError::NoSuchTool(format!("no operation {tool}")));
        let request = request.and_then(|operation| self.request(operation, &arguments));
        Box::pin(async move {
            let (operation, request) = request?;
            let exchange = async {
                let response = request.send().await.map_err(|error| sent_failure(&operation, error))?;
                answered(response).await
            };
            // A request that only reads changes nothing: dropped when cancelled, it was
            // cancelled whole.
            if matches!(operation.method.as_str(), "GET" | "HEAD" | "OPTIONS") {
                return exchange.await;
            }
            // Any other may change the API's state once sent: its answer says whether it did.
            call.hand_off();
            tokio::pin!(exchange);
            tokio::select! {
                biased;
                answer = &mut exchange => answer,
                () = call.cancellation().cancelled() => {
                    if call.client_left() {
                        return exchange.await;
                    }
                    // HTTP has no word for "cancel": the API is waited for a moment.
                    let answer = tokio::time::timeout(CANCELLED_ANSWER_GRACE, exchange).await;
                    answer.unwrap_or(Err(ForwardError::CancelledInFlight))
                }
            }
        })
    }
}

impl Api {
    /// The request `arguments` make of `operation`, or why they make none.
    fn request(
        &self,
        operation: &Arc<Operation>,
        arguments: &JsonObject,
    ) -> Result<(Arc<Operation>, reqwest::RequestBuilder), ForwardError> {
        let mut url = self.url(operation, arguments)?;
        let mut headers = HeaderMap::new();
        // The base URL's own query first, then each query parameter as its style writes it.
        let mut query: Vec<String> =
            url.query().filter(|query| !query.is_empty()).map(str::to_owned).into_iter().collect();
        for parameter in &operation.parameters {
            let Some(value) = argument(parameter, arguments) else { continue };
            match parameter.location {
                Location::Path => {}
                Location::Query => {
                    let style = (parameter.style, parameter.explode, parameter.allow_reserved);
                    for pair in query_pairs(&parameter.name, style.0, style.1, style.2, &value) {
                        // An exploded object's keys are the call's: none may be one of the
                        // mount's own (a key in `?api-key=`), which it would add to.
                        let name = pair.split('=').next().unwrap_or_default();
                        let name = percent_decode_str(name).decode_utf8_lossy();
                        if self.base.query_pairs().any(|(set, _)| set == name) {
                            return Err(ForwardError::InvalidParams(format!(
                                "{} would set the query parameter {}, which the mount sets",
                                parameter.field,
                                echo(&name)
                            )));
                        }
                        query.push(pair);
                    }
                }
                Location::Header => {
                    let text = header_value(parameter.explode, &value);
                    let refused = || {
                        ForwardError::InvalidParams(format!(
                            "the header parameter {} cannot carry {}",
                            parameter.field,
                            echo(&text)
                        ))
                    };
                    let name = HeaderName::from_bytes(parameter.name.as_bytes()).map_err(|_| refused())?;
                    headers.insert(name, HeaderValue::from_str(&text).map_err(|_| refused())?);
                }
            }
        }
        url.set_query((!query.is_empty()).then(|| query.join("&")).as_deref());
        // The mount's own headers last: no argument replaces its credentials.
        headers.extend(self.headers.clone());
        let method = reqwest::Method::from_bytes(operation.method.as_bytes())
            .map_err(|_| ForwardError::NoSuchTool(format!("no method {}", operation.method)))?;
        let mut request =
            self.client.request(method, url).headers(headers).header(reqwest::header::ACCEPT, "application/json");
        if let (Some(body), Some(value)) = (&operation.body, arguments.get("body").filter(|value| !value.is_null())) {
            let (media, bytes) =
                encode_body(body, value).map_err(|error| ForwardError::InvalidParams(error.to_string()))?;
            let media = HeaderValue::from_str(&media).map_err(|_| {
                ForwardError::InvalidParams(format!("the body's media type {} is no header value", echo(&media)))
            })?;
            request = request.header(CONTENT_TYPE, media).body(bytes);
        }
        Ok((Arc::clone(operation), request))
    }

    /// The operation's path under the base, byte for byte as the document writes it (a
    /// trailing `/`, an empty segment), its `{parameters}` filled in as their styles write
    /// them, each value within its segment whatever it holds.
    fn url(&self, operation: &Operation, arguments: &JsonObject) -> Result<Url, ForwardError> {
        let mut segments = Vec::new();
        for segment in operation.path.split('/') {
            let mut filled = segment.to_owned();
            let mut slots = 0;
            for parameter in operation.parameters.iter().filter(|parameter| parameter.location == Location::Path) {
                let slot = format!("{{{}}}", parameter.name);
                if !filled.contains(&slot) {
                    continue;
                }
                slots += 1;
                let Some(value) = argument(parameter, arguments) else {
                    return Err(ForwardError::InvalidParams(format!(
                        "the path parameter {} is required",
                        parameter.field
                    )));
                };
                let value = path_value(&parameter.name, parameter.style, parameter.explode, &value);
                filled = filled.replace(&slot, &value);
            }
            // A value must not empty its segment (another resource), nor make `.` or `..`,
            // which would climb out of the operation's path once the URL is read.
            if (slots > 0 && filled.is_empty()) || filled == "." || filled == ".." {
                return Err(ForwardError::InvalidParams(format!(
                    "{} would make the path segment {}, which names no resource",
                    operation.path,
                    echo(&filled)
                )));
            }
            segments.push(filled);
        }
        let path = segments.join("/");
        let base = self.base.as_str();
        let (base, query) = base.split_once('?').unwrap_or((base, ""));
        let joined = format!("{}{path}", base.trim_end_matches('/'));
        let mut url = Url::parse(&joined)
            .map_err(|error| ForwardError::InvalidParams(format!("the path {} makes no URL: {error}", echo(&path))))?;
        if !query.is_empty() {
            url.set_query(Some(query));
        }
        let inside =
            url.origin() == self.base.origin() && url.path().starts_with(self.base.path().trim_end_matches('/'));
        if !inside {
            return Err(ForwardError::InvalidParams(format!("the path {} leaves the API", echo(&path))));
        }
        Ok(url)
    }
}

/// The value a call gives `parameter`, if any: a parameter described by `content` as its JSON.
fn argument(parameter: &Parameter, arguments: &JsonObject) -> Option<Value> {
    let value = arguments.get(&parameter.field).filter(|value| !value.is_null())?;
    Some(if parameter.json { Value::String(value.to_string()) } else { value.clone() })
}

/// Why a request got no answer.
fn sent_failure(operation: &Operation, error: reqwest::Error) -> ForwardError {
    // The URL may carry a key in its query: the log has the operation instead.
    let error = error.without_url();
    tracing::warn!("{} {} failed: {}", operation.method, operation.path, echo(&error.to_string()));
    if error.is_timeout() {
        return ForwardError::Coded {
            code: ErrorCode::Timeout,
            message: format!("{} {} did not answer in time", operation.method, operation.path),
            retry_after: None,
        };
    }
    ForwardError::Unavailable { message: format!("the API {}", reached(&error)), retry_after: None }
}

/// What went wrong reaching a URL, in words.
fn reached(error: &reqwest::Error) -> &'static str {
    if error.is_connect() {
        "could not be reached"
    } else if error.is_timeout() {
        "did not answer in time"
    } else if error.is_body() || error.is_decode() {
        "broke off its answer"
    } else {
        "failed the request"
    }
}

/// `404 Not Found`.
fn said_status(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The API's answer: a result, or the failure its status names.
async fn answered(response: reqwest::Response) -> Result<CallToolResult, ForwardError> {
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let location =
        response.headers().get(reqwest::header::LOCATION).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|media| media.split(';').next().is_some_and(|media| media.trim().ends_with("json")));
    let bytes = read_capped(response, MAX_MESSAGE_BYTES)
        .await
        .map_err(|_| ForwardError::TooLarge { limit_bytes: MAX_MESSAGE_BYTES })?;
    if status.is_success() {
        return Ok(success(status, json, &bytes));
    }
    let said = match words(&bytes) {
        Some(words) => format!("HTTP {}: {words}", said_status(status)),
        None => format!("HTTP {}", said_status(status)),
    };
    let coded = |code| ForwardError::Coded { code, message: said.clone(), retry_after };
    Err(match status.as_u16() {
        400 | 422 => ForwardError::InvalidParams(said.clone()),
        401 => coded(ErrorCode::AuthRequired),
        403 => coded(ErrorCode::Forbidden),
        404 => coded(ErrorCode::NotFound),
        409 => coded(ErrorCode::Conflict),
        429 => coded(ErrorCode::RateLimited),
        503 => coded(ErrorCode::ServerBusy),
        504 => coded(ErrorCode::Timeout),
        300..=399 => ForwardError::Unavailable {
            message: match location {
                Some(to) => format!("HTTP {} to {}, which the gateway does not follow", said_status(status), echo(&to)),
                None => format!("HTTP {}, which the gateway does not follow", said_status(status)),
            },
            retry_after: None,
        },
        500..=599 => coded(ErrorCode::HandoffUpstreamUnavailable),
        code => ForwardError::Failed { code: i32::from(code), message: said.clone() },
    })
}

/// What an error's body says: the message of the usual JSON shapes (FastAPI's `detail`, a
/// problem document's `title` and `detail`, `message`, `error`), else its text.
fn words(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else { return Some(text.to_owned()) };
    let string = |key: &str| object.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let said = match (object.get("detail"), string("title")) {
        // FastAPI's validation errors: where, and what is wrong there.
        (Some(Value::Array(problems)), _) => {
            let lines: Vec<String> = problems.iter().filter_map(problem_line).collect();
            (!lines.is_empty()).then(|| lines.join("; "))
        }
        (Some(Value::String(detail)), Some(title)) if detail.trim() != title => {
            Some(format!("{title}: {}", detail.trim()))
        }
        (Some(Value::String(detail)), _) if !detail.trim().is_empty() => Some(detail.trim().to_owned()),
        (_, Some(title)) => Some(title.to_owned()),
        _ => None,
    };
    let nested = object.get("error").and_then(|error| error.get("message")).and_then(Value::as_str);
    said.or_else(|| string("message").map(str::to_owned))
        .or_else(|| string("error").map(str::to_owned))
        .or_else(|| nested.map(str::to_owned))
        .or_else(|| Some(text.to_owned()))
}

/// `body.amount_cents: Input should be greater than 0` from one of FastAPI's problems.
fn problem_line(problem: &Value) -> Option<String> {
    let message = problem.get("msg").and_then(Value::as_str)?;
    let place: Vec<String> = problem
        .get("loc")
        .and_then(Value::as_array)
        .map(|loc| loc.iter().map(|part| part.as_str().map_or_else(|| part.to_string(), str::to_owned)).collect())
        .unwrap_or_default();
    Some(if place.is_empty() { message.to_owned() } else { format!("{}: {message}", place.join(".")) })
}

/// A success: the body as text, and as structured content when it is a JSON object.
fn success(status: StatusCode, json: bool, bytes: &[u8]) -> CallToolResult {
    if bytes.is_empty() {
        return CallToolResult::success(vec![ContentBlock::text(format!(
            "HTTP {}, with no content.",
            said_status(status)
        ))]);
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return CallToolResult::success(vec![ContentBlock::text(format!(
            "HTTP {}, with {} bytes that are not text.",
            said_status(status),
            bytes.len()
        ))]);
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text.to_owned())]);
    if json && let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        result.structured_content = Some(value);
    }
    result
}

/// `Retry-After` in seconds, or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// The body, unless it is longer than `cap` bytes.
async fn read_capped(mut response: reqwest::Response, cap: usize) -> Result<Vec<u8>, String> {
    if response.content_length().is_some_and(|length| length > cap as u64) {
        return Err(format!("its answer is larger than {cap} bytes"));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) =
        response.chunk().await.map_err(|error| format!("its answer broke off: {}", reached(&error)))?
    {
        if bytes.len() + chunk.len() > cap {
            return Err(format!("its answer is larger than {cap} bytes"));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn api(base: &str) -> Api {
        api_of(
            &json!({"openapi": "3.1.0", "paths": {
                "/files/{name}.json": {"get": {"operationId": "file", "parameters": [
                    {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "tag", "in": "query", "schema": {"type": "array"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}]}},
                "/items/{id}": {"put": {"operationId": "put_item", "parameters": [
                    {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                    "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}}},
            }}),
            base,
        )
    }

    fn api_of(document: &Value, base: &str) -> Api {
        let operations = import(document).unwrap().operations;
        Api {
            client: reqwest::Client::new(),
            base: Url::parse(base).unwrap(),
            headers: configured_headers(&[("Authorization".into(), "Bearer s3cret".into())]).unwrap(),
            operations: operations.into_iter().map(|operation| (operation.name.clone(), Arc::new(operation))).collect(),
        }
    }

    fn built(api: &Api, tool: &str, arguments: Value) -> Result<reqwest::Request, ForwardError> {
        let Value::Object(arguments) = arguments else { unreachable!() };
        let (_, request) = api.request(&api.operations[tool], &arguments)?;
        Ok(request.build().unwrap())
    }

    #[test]
    fn arguments_fill_the_path_query_headers_and_body() {
        let api = api("http://127.0.0.1:9/api/v1?key=k");
        let request = built(&api, "file", json!({"name": "a b/c?d#e%", "tag": ["x", "y&z"], "X-Trace": "t1"})).unwrap();
        assert_eq!(
            request.url().as_str(),
            "http://127.0.0.1:9/api/v1/files/a%20b%2Fc%3Fd%23e%25.json?key=k&tag=x&tag=y%26z"
        );
        assert_eq!(request.headers()["x-trace"], "t1");
        assert_eq!(request.headers()["authorization"], "Bearer s3cret");
        let request = built(&api, "put_item", json!({"id": "7", "body": {"a": 1}})).unwrap();
        assert_eq!(request.method(), "PUT");
        assert_eq!(request.body().and_then(|body| body.as_bytes()), Some(&b"{\"a\":1}"[..]));
    }

    #[test]
    fn no_argument_leaves_the_api_or_replaces_its_credentials() {
        let api = api("http://127.0.0.1:9/api/");
        for name in ["..", "."] {
            let error = built(&api, "put_item", json!({"id": name})).unwrap_err();
            assert!(
                matches!(&error, ForwardError::InvalidParams(message) if message.contains("names no resource")),
                "{error:?}"
            );
        }
        let error = built(&api, "put_item", json!({"id": ""})).unwrap_err();
        assert!(matches!(error, ForwardError::InvalidParams(_)));
        let request = built(&api, "put_item", json!({"id": "../../admin"})).unwrap();
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/api/items/..%2F..%2Fadmin");
        let error = built(&api, "file", json!({"name": "a", "X-Trace": "a\r\nX-Evil: 1"})).unwrap_err();
        assert!(matches!(&error, ForwardError::InvalidParams(message) if message.contains("X-Trace")), "{error:?}");
        let error = built(&api, "put_item", json!({})).unwrap_err();
        assert!(matches!(&error, ForwardError::InvalidParams(message) if message.contains("is required")));
        // A header the mount sets is the mount's, whatever the call's header parameter says.
        let mut pinned = api;
        pinned.headers = configured_headers(&[("X-Trace".into(), "mount".into())]).unwrap();
        let request = built(&pinned, "file", json!({"name": "a", "X-Trace": "caller"})).unwrap();
        assert_eq!(request.headers().get_all("x-trace").iter().collect::<Vec<_>>(), ["mount"]);
    }

    /// Loads a mount of `operation` (under `/a`) with `headers` and `base_url`; why not.
    fn loaded(operation: Value, headers: &[(String, String)], base_url: &str) -> Result<(Vec<Tool>, Api), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.json");
        std::fs::write(&path, json!({"openapi": "3.1.0", "paths": {"/a": {"get": operation}}}).to_string()).unwrap();
        let source = ApiSource { document: path.to_str().unwrap(), base_url: Some(base_url), headers };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(source.load(100))
    }

    fn fields(tool: &Tool) -> Vec<&str> {
        tool.input_schema["properties"].as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn a_parameter_the_mount_sets_is_left_to_the_mount() {
        // Adyen: `X-API-Key` is a parameter of each operation and the mount's credential.
        let key = [("X-API-Key".to_owned(), "MOUNTKEY".to_owned())];
        let header = json!({"operationId": "a", "parameters": [
            {"name": "x-api-key", "in": "header", "required": true}, {"name": "q", "in": "query"}]});
        let (tools, api) = loaded(header, &key, "http://127.0.0.1:9/").unwrap();
        assert_eq!(fields(&tools[0]), ["q"]);
        assert!(tools[0].input_schema.get("required").is_none());
        let request = built(&api, "a", json!({"x-api-key": "caller", "q": "1"})).unwrap();
        assert_eq!(request.headers().get_all("x-api-key").iter().collect::<Vec<_>>(), ["MOUNTKEY"]);
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/a?q=1");
        // NYTimes: `api-key` is a query parameter, and in the mount's base_url.
        let query = json!({"operationId": "a", "parameters": [{"name": "api-key", "in": "query"}]});
        let (tools, api) = loaded(query.clone(), &[], "http://127.0.0.1:9/v1?api-key=MOUNTKEY").unwrap();
        assert!(fields(&tools[0]).is_empty());
        let request = built(&api, "a", json!({"api-key": "caller"})).unwrap();
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/v1/a?api-key=MOUNTKEY");
        // Nor through another parameter: an exploded object's keys, a reserved value's `&`.
        let smuggler = json!({"operationId": "a", "parameters": [
            {"name": "filter", "in": "query", "schema": {"type": "object"}},
            {"name": "next", "in": "query", "allowReserved": true}]});
        let (_, api) = loaded(smuggler, &[], "http://127.0.0.1:9/v1?api-key=MOUNTKEY").unwrap();
        let refused = built(&api, "a", json!({"filter": {"api-key": "caller"}})).unwrap_err();
        assert!(
            matches!(&refused, ForwardError::InvalidParams(message) if message == "filter would set the query parameter 'api-key', which the mount sets"),
            "{refused:?}"
        );
        let request = built(&api, "a", json!({"next": "/p?x&api-key=caller"})).unwrap();
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/v1/a?api-key=MOUNTKEY&next=/p?x%26api-key=caller");
        // Other names, or the same name where the mount sets nothing, are the call's to set.
        let (tools, _) = loaded(query, &key, "http://127.0.0.1:9/v1?version=2").unwrap();
        assert_eq!(fields(&tools[0]), ["api-key"]);
        // A framing header leaves its operation out: here the only one, so nothing is served.
        let framing = json!({"parameters": [{"name": "Content-Length", "in": "header"}]});
        let refused = loaded(framing, &[], "http://127.0.0.1:9/").err().unwrap();
        assert!(refused.contains("nothing to serve: every operation is left out"), "{refused}");
        assert!(refused.contains("which would let a call set how the request is framed or routed"), "{refused}");
    }

    #[test]
    fn the_operations_served_are_counted_against_max_tools() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.json");
        let document = json!({"openapi": "3.1.0", "paths": {
            "/a": {"get": {}, "post": {}},
            "/session": {"get": {"parameters": [{"name": "sid", "in": "cookie"}]}}}});
        std::fs::write(&path, document.to_string()).unwrap();
        let source =
            ApiSource { document: path.to_str().unwrap(), base_url: Some("http://127.0.0.1:9/"), headers: &[] };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // The one left out is not counted: two served, which a mount of two takes.
        assert_eq!(runtime.block_on(source.load(2)).map(|(tools, _)| tools.len()).ok(), Some(2));
        let refused = runtime.block_on(source.load(1)).err().unwrap();
        assert!(
            refused
                .ends_with("has 2 operations, more than the 1 tools its mount takes (max_tools), so none are served"),
            "{refused}"
        );
    }

    #[test]
    fn the_mount_s_parameters_are_noted() {
        let mut imported = import(&json!({"openapi": "3.0.3", "paths": {"/payments": {"post": {"parameters": [
            {"name": "X-API-Key", "in": "header"}]}}}}))
        .unwrap();
        let headers = configured_headers(&[("x-api-key".into(), "k".into())]).unwrap();
        leave_to_the_mount(&mut imported, &headers, &Url::parse("http://h/").unwrap());
        assert_eq!(
            imported.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "POST /payments: /paths/~1payments/post/parameters/0: the header parameter 'X-API-Key' is not in the tool's input, since the mount sets it (its headers)"
            ]
        );
    }

    #[test]
    fn styles_write_the_query_the_path_and_headers() {
        let api = api_of(
            &json!({"openapi": "3.1.0", "paths": {
                "/users/{id}/files/{name}/{point}": {"get": {"operationId": "styled", "parameters": [
                    {"name": "id", "in": "path", "style": "matrix", "explode": true},
                    {"name": "name", "in": "path", "style": "label"},
                    {"name": "point", "in": "path"},
                    {"name": "filter", "in": "query", "style": "deepObject", "explode": true},
                    {"name": "ids", "in": "query", "style": "pipeDelimited", "explode": false},
                    {"name": "words", "in": "query", "style": "spaceDelimited", "explode": false},
                    {"name": "color", "in": "query", "explode": false},
                    {"name": "next", "in": "query", "allowReserved": true},
                    {"name": "where", "in": "query", "content": {"application/json": {}}},
                    {"name": "X-Ids", "in": "header"}]}},
            }}),
            "http://127.0.0.1:9/api",
        );
        let request = built(
            &api,
            "styled",
            json!({
                "id": [5, 6], "name": "a b", "point": {"x": 1, "y": 2},
                "filter": {"status": "open", "owner": {"id": "u 1"}},
                "ids": [1, 2], "words": ["a", "b"], "color": {"R": 100, "G": 200},
                "next": "/page?2", "where": {"a": 1}, "X-Ids": [1, 2],
            }),
        )
        .unwrap();
        assert_eq!(
            request.url().as_str(),
            "http://127.0.0.1:9/api/users/;id=5;id=6/files/.a%20b/x,1,y,2\
             ?filter[status]=open&filter[owner][id]=u%201&ids=1|2&words=a%20b&color=R,100,G,200&next=/page?2\
             &where=%7B%22a%22%3A1%7D"
        );
        assert_eq!(request.headers()["x-ids"], "1,2");
    }

    #[test]
    fn paths_are_sent_byte_for_byte() {
        let api = api_of(
            &json!({"openapi": "3.1.0", "paths": {
                "/": {"get": {"operationId": "root"}},
                "/items/": {"get": {"operationId": "items"}},
                "/a//b/{id}": {"get": {"operationId": "empty", "parameters": [{"name": "id", "in": "path"}]}},
            }}),
            "http://127.0.0.1:9/api/?v=1",
        );
        let url = |tool, arguments| built(&api, tool, arguments).unwrap().url().to_string();
        assert_eq!(url("root", json!({})), "http://127.0.0.1:9/api/?v=1");
        assert_eq!(url("items", json!({})), "http://127.0.0.1:9/api/items/?v=1");
        assert_eq!(url("empty", json!({"id": "x"})), "http://127.0.0.1:9/api/a//b/x?v=1");
        // A value is still one segment, never `.` or `..`, never empty.
        assert_eq!(url("empty", json!({"id": "../x"})), "http://127.0.0.1:9/api/a//b/..%2Fx?v=1");
        for id in ["..", ".", ""] {
            assert!(matches!(built(&api, "empty", json!({"id": id})), Err(ForwardError::InvalidParams(_))), "{id}");
        }
    }

    #[test]
    fn bodies_are_sent_as_their_media_type() {
        let api = api_of(
            &json!({"openapi": "3.1.0", "paths": {
                "/json-api": {"patch": {"operationId": "json_api", "requestBody": {"content": {"application/vnd.api+json": {}}}}},
                "/charges": {"post": {"operationId": "charge", "requestBody": {"content": {"application/x-www-form-urlencoded": {
                    "encoding": {"expand": {"style": "deepObject", "explode": true}}}}}}},
                "/upload": {"put": {"operationId": "upload", "requestBody": {"content": {"multipart/form-data": {
                    "schema": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}}}}}},
                "/note": {"post": {"operationId": "note", "requestBody": {"content": {"text/plain": {}}}}},
                "/Folders": {"put": {"operationId": "createFolder", "requestBody": {"content": {"application/json": {
                    "schema": {"type": "object", "required": ["name"], "properties": {"Name": {"type": "string"}}}}}}}},
            }}),
            "http://127.0.0.1:9/",
        );
        let sent = |tool, body: Value| {
            let request = built(&api, tool, json!({"body": body})).unwrap();
            let media = request.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
            (media, String::from_utf8_lossy(request.body().and_then(|body| body.as_bytes()).unwrap()).into_owned())
        };
        assert_eq!(
            sent("json_api", json!({"data": {"type": "articles"}})),
            ("application/vnd.api+json".into(), r#"{"data":{"type":"articles"}}"#.into())
        );
        assert_eq!(
            sent("charge", json!({"amount": 2000, "metadata": {"order": "7"}, "expand": ["customer"]})),
            ("application/x-www-form-urlencoded".into(), "amount=2000&metadata[order]=7&expand[0]=customer".into())
        );
        let (media, bytes) = sent("upload", json!({"file": "aGk="}));
        let boundary = media.strip_prefix("multipart/form-data; boundary=").unwrap();
        assert_eq!(
            bytes,
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n--{boundary}--\r\n"
            )
        );
        assert_eq!(sent("note", json!("plain words")), ("text/plain".into(), "plain words".into()));
        // Xero: a call valid by the document is forwarded as it is.
        assert_eq!(sent("createFolder", json!({"name": "x"})), ("application/json".into(), r#"{"name":"x"}"#.into()));
        let refused = built(&api, "charge", json!({"body": [1]})).unwrap_err();
        assert!(
            matches!(&refused, ForwardError::InvalidParams(message) if message.contains("object of fields")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_renamed_parameter_is_sent_by_its_own_name() {
        let api = api_of(
            &json!({"openapi": "3.1.0", "paths": {"/marketing/lists/{list_id}": {"delete": {"operationId": "DeleteList", "parameters": [
                {"name": "list_id", "in": "path", "required": true},
                {"name": "list_id", "in": "query"}]}}}}),
            "http://127.0.0.1:9/v3",
        );
        let request = built(&api, "DeleteList", json!({"list_id": "a", "query_list_id": "b"})).unwrap();
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/v3/marketing/lists/a?list_id=b");
    }

    #[test]
    fn garbage_headers_and_base_urls_are_refused() {
        assert!(configured_headers(&[("X Bad".into(), "v".into())]).unwrap_err().contains("no header name"));
        assert!(configured_headers(&[("X-Key".into(), "a\nb".into())]).unwrap_err().contains("x-key"));
        assert!(base_url("ftp://h/").unwrap_err().contains("http://"));
        assert!(base_url("/relative").unwrap_err().contains("not an absolute URL"));
        assert!(base_url("https://u:p@h/").unwrap_err().contains("credentials"));
        assert!(base_url("https://h/#x").unwrap_err().contains("fragment"));
    }

    #[test]
    fn an_error_body_says_its_message() {
        let said = |body: &str| words(body.as_bytes());
        assert_eq!(said(r#"{"detail":"no invoice inv_9"}"#).as_deref(), Some("no invoice inv_9"));
        assert_eq!(
            said(r#"{"detail":[{"loc":["body","amount_cents"],"msg":"Input should be greater than 0"},{"loc":["query",1],"msg":"bad"}]}"#)
                .as_deref(),
            Some("body.amount_cents: Input should be greater than 0; query.1: bad")
        );
        assert_eq!(
            said(r#"{"title":"Out of stock","detail":"sku 7 is gone"}"#).as_deref(),
            Some("Out of stock: sku 7 is gone")
        );
        assert_eq!(said(r#"{"message":"nope"}"#).as_deref(), Some("nope"));
        assert_eq!(said(r#"{"error":{"message":"deep"}}"#).as_deref(), Some("deep"));
        assert_eq!(said(r#"{"code":7}"#).as_deref(), Some(r#"{"code":7}"#));
        assert_eq!(said("  plain words \n").as_deref(), Some("plain words"));
        assert_eq!(said(" \n"), None);
        assert_eq!(said("\u{0}\u{ff}<x>").as_deref(), Some("\u{0}\u{ff}<x>"));
        assert_eq!(words(&[0xff, 0xfe]).as_deref(), Some("\u{fffd}\u{fffd}"));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(reqwest::header::RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert(reqwest::header::RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }
}
