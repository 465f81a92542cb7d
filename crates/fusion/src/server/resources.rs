//! Resources compiled like actions — a checker for a template's parameters, a decoder, a chain
//! of guards around the handler — and `resources/list`, `resources/templates/list` and
//! `resources/read` answered from them.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_fusion_contract::INPUT_SCHEMA_META_KEY;
use mcp_fusion_wire::{Sent, ToolError, ValidationError};
use rmcp::ErrorData;
use rmcp::model::{
    CompletionInfo, ContentBlock, ErrorCode, MetaObject, ReadResourceResponse, ReadResourceResult,
    Resource as ListedResource, ResourceContents, ResourceTemplate as ListedTemplate,
};
use serde_json::{Map, Value, json};

use super::FusionServer;
use super::call::Refusal;
use super::compile::{ReadOnly, Settings, check_icons, compile_read_only};
use super::completion::{Completions, StateCompleter};
use crate::auth::{Caller, Identity};
use crate::cache::{CacheHint, with_hint};
use crate::catalog::listed_icons;
use crate::compiled::CompiledAction;
use crate::context::{EntryKind, RequestInfo};
use crate::error::BuildError;
use crate::handler::ErasedHandler;
use crate::output::{Output, Payload};
use crate::resource::template::UriTemplate;
use crate::resource::{About, Resource, ResourceTemplate, complete};
use crate::similarity::closest;
use crate::validation::{close_unknown_keys, input_generator, into_object, property_names, required_names};

/// How many resources or templates one page of a list holds.
const PAGE: usize = 100;

/// The resources and templates a server reads, as listed and as compiled. The compiled
/// entries are shared, so a change at run time makes a new set without compiling the others
/// again, while reads already running keep the entries they found.
#[derive(Default, Clone)]
pub(crate) struct Resources {
    fixed: Vec<Arc<Compiled>>,
    by_uri: HashMap<String, usize>,
    /// In the order reads try them: the first that a URI expands serves it.
    templates: Vec<Arc<Compiled>>,
    listed: Vec<ListedResource>,
    listed_templates: Vec<ListedTemplate>,
}

/// Why a URI cannot be subscribed to.
pub(crate) enum Unsubscribable {
    /// Neither a fixed resource nor an expansion of a template.
    NotServed,
    /// A template's expansion whose parameters a read refuses.
    Invalid(ValidationError),
    /// Longer than a subscription may hold.
    TooLong { bytes: usize, max: usize },
}

/// One resource or template ready to read.
struct Compiled {
    /// Its chain; its access (who may read it) is asked again of a subscription: a caller
    /// that may not read a resource does not hear of its changes either.
    action: CompiledAction,
    /// `None` for a fixed URI.
    template: Option<UriTemplate>,
    /// The schema of a template's parameters, to read numbers and booleans out of the URI.
    params: Map<String, Value>,
    mime_type: Option<String>,
    /// Its own cache hint (the server's when `None`), and whether its reads may differ by
    /// caller (it asks for an identity or a scope): then they are private.
    cache: Option<CacheHint>,
    per_caller: bool,
    completions: Completions,
}

/// A resource or a template compiled, with what `resources/list` or
/// `resources/templates/list` shows of it (`L`).
pub(crate) struct Entry<L> {
    listed: L,
    compiled: Arc<Compiled>,
}

/// Compiles a fixed resource, whose handler gets `state`.
pub(crate) fn compile_resource<S: Send + Sync + 'static>(
    settings: &Settings,
    resource: Resource<S>,
    state: &Arc<S>,
) -> Result<Entry<ListedResource>, BuildError> {
    let Resource { about, handler } = resource;
    check_icons(|| format!("the resource {:?}", about.uri), &about.icons)?;
    check_annotations(&about)?;
    if about.uri.contains(['{', '}']) {
        return Err(uri_error(&about.uri, "a fixed URI has no {parameter}: declare it as a ResourceTemplate"));
    }
    let compiled = compile(settings, &about, handler, None, Vec::new(), state)?;
    Ok(Entry { listed: listed_resource(&about), compiled: Arc::new(compiled) })
}

/// Compiles a resource template, whose handler and completers get `state`.
pub(crate) fn compile_template<S: Send + Sync + 'static>(
    settings: &Settings,
    template: ResourceTemplate<S>,
    state: &Arc<S>,
) -> Result<Entry<ListedTemplate>, BuildError> {
    let ResourceTemplate { about, handler, completers } = template;
    check_icons(|| format!("the resource template {:?}", about.uri), &about.icons)?;
    check_annotations(&about)?;
    let template = UriTemplate::parse(&about.uri).map_err(|error| uri_error(&about.uri, &error.to_string()))?;
    let compiled = compile(settings, &about, handler, Some(template), completers, state)?;
    Ok(Entry { listed: listed_template(&about, &compiled.params), compiled: Arc::new(compiled) })
}

impl Resources {
    /// Compiles the fixed resources and the templates, whose handlers get `state`.
    pub(crate) fn compile<S: Send + Sync + 'static>(
        settings: &Settings,
        fixed: Vec<Resource<S>>,
        templates: Vec<ResourceTemplate<S>>,
        state: &Arc<S>,
    ) -> Result<Resources, BuildError> {
        let mut resources = Resources::default();
        for resource in fixed {
            // At build time a second declaration is a mistake; at run time it replaces.
            if resources.by_uri.contains_key(&resource.about.uri) {
                return Err(BuildError::Duplicate { what: "resource", name: resource.about.uri });
            }
            resources.insert(compile_resource(settings, resource, state)?);
        }
        for template in templates {
            if resources.template_index(&template.about.uri).is_some() {
                return Err(BuildError::Duplicate { what: "resource template", name: template.about.uri });
            }
            resources.insert_template(compile_template(settings, template, state)?);
        }
        Ok(resources)
    }

    /// Adds a fixed resource, or replaces the one at its URI where it stands in the list.
    pub(crate) fn insert(&mut self, entry: Entry<ListedResource>) {
        match self.by_uri.get(&entry.listed.uri) {
            Some(&index) => {
                self.fixed[index] = entry.compiled;
                self.listed[index] = entry.listed;
            }
            None => {
                self.by_uri.insert(entry.listed.uri.clone(), self.fixed.len());
                self.fixed.push(entry.compiled);
                self.listed.push(entry.listed);
            }
        }
    }

    /// Removes the fixed resource at `uri`; `false` when there is none.
    pub(crate) fn remove(&mut self, uri: &str) -> bool {
        let Some(index) = self.by_uri.remove(uri) else {
            return false;
        };
        self.fixed.remove(index);
        self.listed.remove(index);
        for later in self.by_uri.values_mut().filter(|at| **at > index) {
            *later -= 1;
        }
        true
    }

    /// Adds a template, last in the order reads try them, or replaces the one of the same URI
    /// template where it stands (so it keeps its precedence).
    pub(crate) fn insert_template(&mut self, entry: Entry<ListedTemplate>) {
        match self.template_index(&entry.listed.uri_template) {
            Some(index) => {
                self.templates[index] = entry.compiled;
                self.listed_templates[index] = entry.listed;
            }
            None => {
                self.templates.push(entry.compiled);
                self.listed_templates.push(entry.listed);
            }
        }
    }

    /// Removes the template `uri_template`; `false` when there is none.
    pub(crate) fn remove_template(&mut self, uri_template: &str) -> bool {
        let Some(index) = self.template_index(uri_template) else {
            return false;
        };
        self.templates.remove(index);
        self.listed_templates.remove(index);
        true
    }

    fn template_index(&self, uri_template: &str) -> Option<usize> {
        self.listed_templates.iter().position(|listed| listed.uri_template == uri_template)
    }

    /// Whether a client listing both sets sees the same as in `other`.
    pub(crate) fn lists_as(&self, other: &Resources) -> bool {
        self.listed == other.listed && self.listed_templates == other.listed_templates
    }

    /// Whether there is anything to read (from then on the server declares the capability).
    pub(crate) fn any(&self) -> bool {
        !self.fixed.is_empty() || !self.templates.is_empty()
    }

    /// The resources `resources/list` returns.
    pub(crate) fn listed(&self) -> &[ListedResource] {
        &self.listed
    }

    /// How `resources/list` shows the fixed resource at `uri`.
    pub(crate) fn listed_at(&self, uri: &str) -> Option<&ListedResource> {
        self.by_uri.get(uri).map(|&index| &self.listed[index])
    }

    /// The templates `resources/templates/list` returns.
    pub(crate) fn listed_templates(&self) -> &[ListedTemplate] {
        &self.listed_templates
    }

    /// The resources `resources/list` shows `caller`: those it may read.
    pub(crate) fn listed_for(&self, caller: &Caller) -> Vec<ListedResource> {
        offered(&self.listed, &self.fixed, caller)
    }

    /// The templates `resources/templates/list` shows `caller`: those it may read.
    pub(crate) fn listed_templates_for(&self, caller: &Caller) -> Vec<ListedTemplate> {
        offered(&self.listed_templates, &self.templates, caller)
    }

    /// The scopes to ask `identity` for before it may read `uri`, when it lacks one.
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "asked by HTTP's step-up check only"))]
    pub(crate) fn wanted_for_read(&self, uri: &str, identity: &Identity) -> Option<Vec<String>> {
        let (compiled, _) = self.find(uri)?;
        compiled.action.access.wanted_from(identity).map(<[String]>::to_vec)
    }

    /// Whether there is any template (whose parameters may complete).
    pub(crate) fn any_template(&self) -> bool {
        !self.templates.is_empty()
    }

    /// The values the parameter of the template `template` may take, from `prefix`.
    pub(crate) async fn complete(
        &self,
        template: &str,
        parameter: &str,
        prefix: &str,
    ) -> Result<CompletionInfo, ErrorData> {
        let Some(index) = self.template_index(template) else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "No resource template {}. Call resources/templates/list for the templates this server has.",
                    Sent::text(template)
                ),
                Some(json!({"uri": echoed(template)})),
            ));
        };
        let completions = &self.templates[index].completions;
        completions.complete(&format!("The template {}", Sent::text(template)), parameter, prefix).await
    }

    /// Whether `uri` is a fixed resource's or expands a template.
    #[cfg(test)]
    pub(crate) fn serves(&self, uri: &str) -> bool {
        self.find(uri).is_some()
    }

    /// Whether `uri` may be subscribed to: served, with parameters a read accepts, and at
    /// most `max_bytes` long.
    pub(crate) fn subscribable(&self, uri: &str, max_bytes: usize) -> Result<(), Unsubscribable> {
        let Some((compiled, values)) = self.find(uri) else { return Err(Unsubscribable::NotServed) };
        let arguments = Value::Object(typed(&compiled.params, values));
        compiled.action.checked(arguments).map_err(Unsubscribable::Invalid)?;
        if uri.len() > max_bytes {
            return Err(Unsubscribable::TooLong { bytes: uri.len(), max: max_bytes });
        }
        Ok(())
    }

    /// Whether `caller` may hear of changes to `uri`, which [`subscribable`](Self::subscribable)
    /// accepted: as it may read it (an identity, the scopes); the read's refusal if not.
    pub(crate) fn may_subscribe(&self, uri: &str, caller: &Caller) -> Result<(), ErrorData> {
        let Some((compiled, _)) = self.find(uri) else { return Ok(()) };
        compiled.action.access.admits(caller).map_err(|refused| failed(("uri", Some(uri)), &refused))
    }

    /// The refusal of a subscription to `uri`: for a URI a read refuses, the read's own.
    pub(crate) fn unsubscribable(&self, uri: &str, why: Unsubscribable, value_free: bool) -> ErrorData {
        match why {
            Unsubscribable::NotServed => self.not_found(uri, value_free),
            Unsubscribable::Invalid(error) => invalid_uri(uri, &error, value_free),
            Unsubscribable::TooLong { bytes, max } => ErrorData::invalid_params(
                format!(
                    "The resource URI {} is {bytes} bytes long; a subscription holds URIs of at most {max} bytes. \
                     Read the resource when you need it fresh.",
                    Sent::text(uri)
                ),
                Some(json!({"uri": echoed(uri), "bytes": bytes, "limit": max})),
            ),
        }
    }

    /// The fixed resource at `uri`, else the first template `uri` expands, with its
    /// parameters.
    fn find(&self, uri: &str) -> Option<(&Arc<Compiled>, Map<String, Value>)> {
        if let Some(&index) = self.by_uri.get(uri) {
            return Some((&self.fixed[index], Map::new()));
        }
        self.templates.iter().find_map(|compiled| {
            let params = compiled.template.as_ref()?.matches(uri)?;
            Some((compiled, params))
        })
    }

    /// The URIs closest to one nobody serves: a template filled with the sent values where
    /// its literal segments are close, else the closest fixed URI.
    fn closest(&self, uri: &str) -> Vec<String> {
        let close = |sent: &str, own: &str| closest(sent, [own]).is_some();
        let mut found: Vec<String> = self
            .templates
            .iter()
            .filter_map(|compiled| compiled.template.as_ref()?.nearest_expansion(uri, close))
            .collect();
        if found.is_empty() {
            found.extend(closest(uri, self.by_uri.keys().map(String::as_str)).map(str::to_owned));
        }
        found
    }
}

/// The items of `listed` whose entry (at the same index of `compiled`) `caller` may use.
fn offered<T: Clone>(listed: &[T], compiled: &[Arc<Compiled>], caller: &Caller) -> Vec<T> {
    listed
        .iter()
        .zip(compiled)
        .filter(|(_, compiled)| compiled.action.access.offered_to(caller))
        .map(|(listed, _)| listed.clone())
        .collect()
}

/// What `data` says of a text the client sent: the text itself when the echo keeps it whole,
/// else the echo (cut, escaped, quoted), as the message says it.
pub(super) fn echoed(text: &str) -> String {
    let echo = mcp_fusion_wire::echo(text);
    let whole = echo.len() == text.len() + 2 && echo.get(1..echo.len() - 1) == Some(text);
    if whole { text.to_owned() } else { echo }
}

/// A page of `items` from the opaque `cursor` (an offset, as text) a previous page gave; a
/// cursor that is not one is named in the refusal, unless the server is `value_free`.
pub(crate) fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    value_free: bool,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().ok().filter(|&start| start <= items.len()).ok_or_else(|| {
            let shown = if value_free { String::new() } else { format!(" {}", Sent::text(cursor)) };
            ErrorData::invalid_params(
                format!(
                    "Invalid cursor{shown}: use the nextCursor of the previous page, or no cursor for the first page"
                ),
                None,
            )
        })?,
    };
    let end = (start + PAGE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

/// A priority MCP can carry (0.0 to 1.0) and a time a client can read (RFC 3339).
fn check_annotations(about: &About) -> Result<(), BuildError> {
    let Some(annotations) = &about.annotations else { return Ok(()) };
    if let Some(priority) = annotations.priority.filter(|priority| !(0.0..=1.0).contains(priority)) {
        return Err(uri_error(&about.uri, &format!("its priority {priority} is outside 0.0 to 1.0")));
    }
    if let Some(time) = &annotations.last_modified
        && chrono::DateTime::parse_from_rfc3339(time).is_err()
    {
        let shown: String = time.chars().take(40).collect();
        let reason = format!("its last_modified {shown:?} is not an RFC 3339 time (like 2026-12-01T09:30:00Z)");
        return Err(uri_error(&about.uri, &reason));
    }
    Ok(())
}

fn uri_error(uri: &str, reason: &str) -> BuildError {
    BuildError::ResourceUri { uri: uri.to_owned(), reason: reason.to_owned() }
}

fn listed_resource(about: &About) -> ListedResource {
    let mut listed = ListedResource::new(about.uri.clone(), about.name.clone());
    listed.title.clone_from(&about.title);
    listed.icons = listed_icons(&about.icons);
    listed.description.clone_from(&about.description);
    listed.mime_type.clone_from(&about.mime_type);
    listed.annotations.clone_from(&about.annotations);
    listed.meta.clone_from(&about.meta);
    listed
}

/// The template as listed, with its parameters' schema in `_meta` for contracts to compare.
fn listed_template(about: &About, params: &Map<String, Value>) -> ListedTemplate {
    let mut listed = ListedTemplate::new(about.uri.clone(), about.name.clone());
    listed.meta = Some(input_schema_meta(params));
    listed.title.clone_from(&about.title);
    listed.icons = listed_icons(&about.icons);
    listed.description.clone_from(&about.description);
    listed.mime_type.clone_from(&about.mime_type);
    listed.annotations.clone_from(&about.annotations);
    listed
}

/// `_meta` stating a prompt's or template's input schema.
pub(super) fn input_schema_meta(schema: &Map<String, Value>) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert(INPUT_SCHEMA_META_KEY.into(), Value::Object(schema.clone()));
    meta
}

/// Compiles one resource or template: its parameters' schema and checker, and its chain
/// with the server's guards (as for a read-only action) and middleware.
fn compile<S: Send + Sync + 'static>(
    settings: &Settings,
    about: &About,
    handler: Option<Arc<dyn ErasedHandler<S>>>,
    template: Option<UriTemplate>,
    completers: Vec<(String, StateCompleter<S>)>,
    state: &Arc<S>,
) -> Result<Compiled, BuildError> {
    let handler = handler.ok_or_else(|| uri_error(&about.uri, "it has no handler: call `.handler(..)` on it"))?;
    let params = close_unknown_keys(into_object(handler.input_schema(&mut input_generator())));
    if let Some(template) = &template {
        check_parameters(&about.uri, template, &params)?;
    }
    let asks = ReadOnly {
        require_identity: about.require_identity,
        scopes: &about.scopes,
        rate_limits: &about.rate_limits,
        timeout: about.timeout,
    };
    let mut action = compile_read_only(settings, &about.uri, handler.as_ref(), &params, &asks, state)?;
    action.kind = EntryKind::Resource;
    let completions = Completions::new(completers, &params, state);
    if let Some(argument) = completions.unknown_arguments().first() {
        return Err(BuildError::Completion {
            of: format!("the template {:?}", about.uri),
            argument: (*argument).to_owned(),
        });
    }
    let cache = about.cache.map(|hint| hint.checked(&format!("the resource {:?}", about.uri))).transpose()?;
    let per_caller = about.require_identity || !about.scopes.is_empty();
    Ok(Compiled { action, template, params, mime_type: about.mime_type.clone(), cache, per_caller, completions })
}

/// Every parameter of the template is a field of the struct, and every required field is a
/// parameter.
fn check_parameters(uri: &str, template: &UriTemplate, params: &Map<String, Value>) -> Result<(), BuildError> {
    let fields = property_names(params);
    let names: Vec<&str> = template.parameters().collect();
    let unknown: Vec<&str> = names.iter().copied().filter(|name| !fields.iter().any(|f| f == name)).collect();
    let unset: Vec<String> = required_names(params).into_iter().filter(|f| !names.contains(&f.as_str())).collect();
    let mut reasons = Vec::new();
    if !unknown.is_empty() {
        reasons.push(format!("the struct has no field {}", quoted(&unknown)));
    }
    if !unset.is_empty() {
        reasons.push(format!("the template has no parameter for the required field {}", quoted(&unset)));
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(BuildError::TemplateParameters { template: uri.to_owned(), reason: reasons.join("; ") })
    }
}

fn quoted<T: AsRef<str>>(names: &[T]) -> String {
    names.iter().map(|name| format!("{:?}", name.as_ref())).collect::<Vec<_>>().join(", ")
}

/// A parameter taken from a URI is text; where the field's schema asks for a number or a
/// boolean and the text reads as one, it becomes one (what does not read stays text, and the
/// check says so).
pub(super) fn typed(params: &Map<String, Value>, mut values: Map<String, Value>) -> Map<String, Value> {
    let properties = params.get("properties").and_then(Value::as_object);
    for (name, value) in &mut values {
        let Some(Value::String(text)) = Some(&*value) else { continue };
        let types: Vec<&str> = match properties.and_then(|p| p.get(name)).and_then(|s| s.get("type")) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if types.contains(&"string") {
            continue;
        }
        let read = if types.contains(&"integer") || types.contains(&"number") {
            serde_json::from_str::<serde_json::Number>(text).ok().map(Value::Number)
        } else if types.contains(&"boolean") {
            match text.as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            }
        } else {
            None
        };
        if let Some(read) = read {
            *value = read;
        }
    }
    values
}

impl FusionServer {
    /// Reads the resource at `uri` (`resources/read`): the fixed resource at that URI, else the
    /// first template the URI expands, through the guards to its handler.
    pub async fn read_resource(&self, uri: &str, request: RequestInfo) -> Result<ReadResourceResponse, ErrorData> {
        let _counted = self.inner.in_flight.enter();
        let value_free = self.inner.settings.guards.value_free_errors;
        // The entry, not the set: a change while the read runs replaces neither.
        let (compiled, values) = {
            let resources = self.inner.resources.load();
            let Some((compiled, values)) = resources.find(uri) else {
                return Err(resources.not_found(uri, value_free));
            };
            (Arc::clone(compiled), values)
        };
        let arguments = Value::Object(typed(&compiled.params, values));
        let (outcome, _warnings) = compiled.action.outcome(arguments, request, &self.inner.settings).await;
        match outcome {
            Ok(output) => {
                let hint = compiled.cache.unwrap_or(self.inner.cache.default_hint());
                let hint = if compiled.per_caller { hint.for_one_caller() } else { hint };
                Ok(with_hint!(ReadResourceResult::new(contents(output, uri, compiled.mime_type.as_deref())?), hint)
                    .into())
            }
            Err(Refusal::InputRequired(input)) => Ok(ReadResourceResponse::InputRequired(*input)),
            Err(Refusal::Protocol(error)) => Err(error),
            Err(Refusal::Invalid(error)) => Err(invalid_uri(uri, &error, value_free)),
            Err(Refusal::Failed(error)) => Err(failed(("uri", (!value_free).then_some(uri)), &error)),
        }
    }
}

/// A template's expansion whose parameters do not fit: one sentence per field, as a read
/// answers it.
fn invalid_uri(uri: &str, error: &ValidationError, value_free: bool) -> ErrorData {
    let headline = match value_free {
        true => "Invalid parameters in the resource URI:".to_owned(),
        false => format!("Invalid parameters in the resource URI {}:", Sent::text(uri)),
    };
    invalid_params(
        &headline,
        "Fix the URI and read it again; resources/templates/list describes the templates.",
        ("uri", (!value_free).then_some(uri)),
        error,
    )
}

/// The contents a handler's output carries, then one contents per content block a
/// middleware added, completed with the URI read and the MIME type.
///
/// An image or an audio block becomes a blob of its MIME type: the block already holds
/// base64 data and its type, which is all a blob holds, so the client gets every byte the
/// middleware meant to send. A block with no data to send as contents (a link to another
/// resource, a kind a later rmcp adds) refuses the read with `INTERNAL_ERROR` naming the
/// resource: dropping it would send a read that looks whole and is not.
fn contents(mut output: Output, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorData> {
    let mut contents = match output.take_payload() {
        Some(Payload::Contents(contents)) => contents,
        None => Vec::new(),
        Some(Payload::Messages { .. }) => return Err(unsendable(uri, "a prompt's messages")),
    };
    for block in output.content {
        let added = match block {
            ContentBlock::Resource(embedded) => embedded.resource,
            // A middleware may answer with text of its own.
            ContentBlock::Text(text) => ResourceContents::text(text.text, String::new()),
            ContentBlock::Image(image) => {
                ResourceContents::blob(image.data, String::new()).with_mime_type(image.mime_type)
            }
            ContentBlock::Audio(audio) => {
                ResourceContents::blob(audio.data, String::new()).with_mime_type(audio.mime_type)
            }
            ContentBlock::ResourceLink(_) => return Err(unsendable(uri, "a resource link")),
            _ => return Err(unsendable(uri, "a content block of a kind resources cannot hold")),
        };
        contents.push(added);
    }
    complete(&mut contents, uri, mime_type);
    Ok(contents)
}

/// A read whose output holds `what`, which resource contents cannot carry.
fn unsendable(uri: &str, what: &str) -> ErrorData {
    tracing::error!(uri = %Sent::text(uri), "a read's output holds {what}, which resource contents cannot carry");
    ErrorData::internal_error(
        format!(
            "The contents of the resource {} could not be sent; report it to the server's operator.",
            Sent::text(uri)
        ),
        Some(json!({"uri": echoed(uri)})),
    )
}

impl Resources {
    /// Resource not found: what was asked (unless `value_free`), the closest URIs served, and
    /// what to call instead.
    pub(crate) fn not_found(&self, uri: &str, value_free: bool) -> ErrorData {
        not_found(uri, &self.closest(uri), value_free)
    }
}

fn not_found(uri: &str, closest: &[String], value_free: bool) -> ErrorData {
    let guess = match closest {
        [] => String::new(),
        [one] => format!(" Did you mean {}?", Sent::text(one)),
        many => format!(
            " Did you mean one of {}?",
            many.iter().map(|u| Sent::text(u).to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    let asked = match value_free {
        true => "the URI asked is served by no resource or template".to_owned(),
        false => Sent::text(uri).to_string(),
    };
    let message = format!(
        "Resource not found: {asked}.{guess} Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
    let closest: Vec<String> = closest.iter().map(|uri| echoed(uri)).collect();
    let data = match value_free {
        true => json!({"closest": closest}),
        false => json!({"uri": asked_uri(uri), "closest": closest}),
    };
    ErrorData::resource_not_found(message, Some(data))
}

/// The URI a not-found error's `data` names: as asked, so that a client can tell which of its
/// reads failed (SEP-2164), unless it is longer than a URI has reason to be or holds characters
/// a reader would not see; then the echo, as the message cuts it.
fn asked_uri(uri: &str) -> String {
    const WHOLE_UP_TO: usize = 2048;
    let plain = !uri.chars().any(|c| c.is_control() || mcp_fusion_wire::is_invisible(c));
    if plain && uri.len() <= WHOLE_UP_TO { uri.to_owned() } else { echoed(uri) }
}

/// Parameters or arguments that do not fit: `headline`, one sentence per field as a tool
/// call's validation says them, then `closing`; `subject` (what was asked) and the fields in
/// `data` (cut as the message cuts it).
pub(super) fn invalid_params(
    headline: &str,
    closing: &str,
    subject: (&str, Option<&str>),
    error: &ValidationError,
) -> ErrorData {
    let mut message = headline.to_owned();
    for field in &error.fields {
        message.push_str(&format!("\n{}: {}", field.name, field.text));
    }
    message.push('\n');
    message.push_str(closing);
    let fields: Vec<Value> = error.fields.iter().map(|f| json!({"name": f.name, "text": f.text})).collect();
    let mut data = Map::new();
    if let (key, Some(asked)) = subject {
        data.insert(key.to_owned(), Value::String(echoed(asked)));
    }
    data.insert("fields".to_owned(), Value::Array(fields));
    ErrorData::invalid_params(message, Some(Value::Object(data)))
}

/// A guard's or a handler's failure: its message, and its code, recovery and the rest in
/// `data` (with the whole envelope, for a client that shows the model what a tool would),
/// beside `subject`: what was asked (cut as an echo is), unless it is left out.
pub(super) fn failed(subject: (&str, Option<&str>), error: &ToolError) -> ErrorData {
    use mcp_fusion_wire::ErrorCode as Code;
    // JSON-RPC reserves -32000 to -32099 for the server's own errors.
    let code = if error.code == Code::NotFound {
        ErrorCode::RESOURCE_NOT_FOUND
    } else if error.code == Code::ValidationError {
        ErrorCode::INVALID_PARAMS
    } else if error.code == Code::InternalError {
        ErrorCode::INTERNAL_ERROR
    } else {
        ErrorCode(-32000)
    };
    let details: Map<String, Value> =
        error.details.iter().map(|(key, value)| (key.clone(), Value::String(value.clone()))).collect();
    let mut data = json!({
        "code": error.code.as_str(),
        "severity": error.severity.as_str(),
        "message": error.message,
        "recovery": error.recovery,
        "available_actions": error.available_actions,
        "retry_after": error.retry_after,
        "details": details,
        "envelope": error.render(),
    });
    if let (key, Some(asked)) = subject {
        data[key] = Value::String(echoed(asked));
    }
    let message = match &error.recovery {
        Some(recovery) => format!("{} {recovery}", error.message),
        None => error.message.clone(),
    };
    ErrorData::new(code, message, Some(data))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, ErrorCode, ResourceContents};

    use crate::context::RequestInfo;
    use crate::middleware::{Call, Next, from_fn};
    use crate::resource::{Blob, Resource};
    use crate::wire::ToolError;
    use crate::{Ctx, FusionServer, Output, Payload};

    /// A server whose one resource serves a blob, behind a middleware that adds `added`.
    fn server(added: ContentBlock) -> FusionServer {
        let added = std::sync::Arc::new(added);
        FusionServer::builder("s", "1")
            .resource(
                Resource::new("files://logo", "logo")
                    .mime_type("image/png")
                    .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>(Blob(vec![1, 2])) }),
            )
            .middleware(from_fn(move |call: Call, next: Next| {
                let added = (*added).clone();
                async move {
                    let mut output = next.run(call).await?;
                    assert!(
                        matches!(output.payload(), Some(Payload::Contents(contents)) if contents.len() == 1),
                        "the middleware sees the handler's contents typed"
                    );
                    output.content.push(added);
                    Ok::<Output, ToolError>(output)
                }
            }))
            .build(())
            .unwrap()
    }

    #[tokio::test]
    async fn an_image_or_audio_block_a_middleware_adds_is_read_as_a_blob() {
        for (block, mime_type) in [
            (ContentBlock::image("iVBO", "image/webp"), "image/webp"),
            (ContentBlock::audio("UklG", "audio/wav"), "audio/wav"),
        ] {
            let Ok(rmcp::model::ReadResourceResponse::Complete(read)) =
                server(block).read_resource("files://logo", RequestInfo::default()).await
            else {
                panic!("the read did not complete")
            };
            let blob = |data: &str, mime_type: &str| ResourceContents::BlobResourceContents {
                uri: "files://logo".into(),
                mime_type: Some(mime_type.into()),
                blob: data.into(),
                meta: None,
            };
            let added = if mime_type == "image/webp" { "iVBO" } else { "UklG" };
            assert_eq!(read.contents, vec![blob("AQI=", "image/png"), blob(added, mime_type)]);
        }
    }

    #[tokio::test]
    async fn a_block_contents_cannot_hold_refuses_the_read_naming_the_resource() {
        let link = ContentBlock::resource_link(rmcp::model::Resource::new("files://other", "other"));
        let error = server(link).read_resource("files://logo", RequestInfo::default()).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.contains("'files://logo'"), "{}", error.message);
        assert_eq!(error.data.unwrap()["uri"], "files://logo");
    }
}
