//! Skills served as SEP-2640 prescribes: each file a resource compiled like any other (so a
//! read passes the server's guards), and `skills/list`, `skills/get` and
//! `resources/directory/read` answered from the catalog.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_fusion_wire::{Sent, ToolError};
use rmcp::ErrorData;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillResult, JsonObject, ListResourcesResult, ListSkillsResult,
    ReadResourceDirectoryResult, Resource as ListedResource, ResourceContents, SKILLS_EXTENSION_ID,
};
use serde_json::{Value, json};
use std::sync::Arc;

use super::FusionServer;
use super::resources::{echoed, page};
use crate::cache::{Listing, with_hint};
use crate::context::Ctx;
use crate::resource::Resource;
use crate::similarity::closest;
use crate::skill::{Catalog, Child};

/// The extension as the server declares it: the skills methods and `resources/directory/read`.
pub(super) fn extension() -> (String, JsonObject) {
    let mut settings = JsonObject::new();
    settings.insert("directoryRead".to_owned(), Value::Bool(true));
    (SKILLS_EXTENSION_ID.to_owned(), settings)
}

/// One fixed resource per file of the catalog, each serving its bytes: text when they are
/// UTF-8, a base64 blob otherwise.
pub(super) fn resources<S: Send + Sync + 'static>(catalog: &Catalog) -> Vec<Resource<S>> {
    catalog
        .files()
        .iter()
        .map(|file| {
            let contents = match std::str::from_utf8(&file.bytes) {
                Ok(text) if !text.contains('\0') => ResourceContents::text(text, file.uri.clone()),
                _ => ResourceContents::blob(STANDARD.encode(&file.bytes), file.uri.clone()),
            };
            let contents = Arc::new(contents.with_mime_type(file.mime_type));
            let resource = Resource::new(file.uri.clone(), file.name.clone()).mime_type(file.mime_type);
            let resource = match &file.description {
                Some(description) => resource.description(description.clone()),
                None => resource,
            };
            resource.handler(move |_ctx: Ctx<S>| {
                let contents = Arc::clone(&contents);
                async move { Ok::<_, ToolError>(ResourceContents::clone(&contents)) }
            })
        })
        .collect()
}

impl FusionServer {
    /// The skills `skills/list` returns now, every page together.
    pub fn skills(&self) -> Vec<rmcp::model::Skill> {
        self.inner.skills.entries().to_vec()
    }

    /// A page of `skills/list`; `per_caller` when the listing is made for its caller.
    pub(super) fn skills_page(&self, cursor: Option<&str>, per_caller: bool) -> Result<ListSkillsResult, ErrorData> {
        let (skills, next) = page(self.inner.skills.entries(), cursor, self.value_free())?;
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next;
        Ok(with_hint!(result, self.inner.cache.list(Listing::Skills, per_caller)))
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    pub(super) fn skill_entry(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        let catalog = &self.inner.skills;
        let Some(entry) = catalog.entry(uri) else {
            let asked = Asked { uri, value_free: self.value_free() };
            let message = format!("No skill is served at {}.", asked.shown());
            return Err(unknown(message, asked, closest_skill(catalog, uri), LIST_THE_SKILLS));
        };
        Ok(with_hint!(GetSkillResult::new(entry.clone()), self.inner.cache.default_hint()))
    }

    /// The skills it serves, for a transport to check requests against before rmcp decodes
    /// them; `None` when it serves none (rmcp answers the skills methods as unknown then).
    pub(crate) fn served_skills(&self) -> Option<SkillsServed> {
        (!self.inner.skills.is_empty()).then(|| SkillsServed { value_free: self.value_free() })
    }

    /// `resources/directory/read`: a page of the direct children of the directory at `uri`,
    /// files as `resources/list` shows them and folders as `inode/directory`.
    pub(super) fn directory_page(
        &self,
        uri: &str,
        cursor: Option<&str>,
        per_caller: bool,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let catalog = &self.inner.skills;
        let asked = Asked { uri, value_free: self.value_free() };
        let Some(children) = catalog.directory(uri) else { return Err(not_a_directory(catalog, asked)) };
        let resources = self.inner.resources.load();
        let listed: Vec<ListedResource> = children
            .iter()
            .filter_map(|child| match child {
                // A file removed at run time is no longer listed, here as in resources/list.
                Child::File(file) => resources.listed_at(file).cloned(),
                Child::Directory(directory, name) => {
                    Some(ListedResource::new(directory.clone(), name.clone()).with_mime_type(DIRECTORY_MIME_TYPE))
                }
            })
            .collect();
        let (listed, next) = page(&listed, cursor, asked.value_free)?;
        let mut result = ListResourcesResult::with_all_items(listed);
        result.next_cursor = next;
        Ok(with_hint!(result, self.inner.cache.list(Listing::Resources, per_caller)))
    }

    fn value_free(&self) -> bool {
        self.inner.settings.guards.value_free_errors
    }
}

/// The URI a request asked for, as its refusal repeats it: not at all on a value-free server.
#[derive(Clone, Copy)]
struct Asked<'a> {
    uri: &'a str,
    value_free: bool,
}

impl Asked<'_> {
    /// The URI as a refusal's message says it.
    fn shown(self) -> String {
        match self.value_free {
            true => "the URI asked".to_owned(),
            false => Sent::text(self.uri).to_string(),
        }
    }

    /// A refusal's `data`: the URI as it was asked, unless value-free, then `rest`.
    fn data(self, rest: Value) -> Value {
        let mut data = JsonObject::new();
        if !self.value_free {
            data.insert("uri".to_owned(), Value::String(echoed(self.uri)));
        }
        if let Value::Object(rest) = rest {
            data.extend(rest);
        }
        Value::Object(data)
    }
}

/// Why the URI asked is no directory this server serves: a file, a directory's URI with a
/// trailing slash, or nothing it serves (with the closest directory).
fn not_a_directory(catalog: &Catalog, asked: Asked<'_>) -> ErrorData {
    let (uri, shown) = (asked.uri, asked.shown());
    if let Some(file) = catalog.file(uri) {
        let (directory, _) = file.uri.rsplit_once('/').unwrap_or_default();
        let message = format!(
            "{shown} is not a directory resource: it is a file. Read it with resources/read, or list its directory '{directory}'."
        );
        return ErrorData::invalid_params(message, Some(asked.data(json!({"directory": directory}))));
    }
    let trimmed = uri.trim_end_matches('/');
    if trimmed != uri && catalog.directory(trimmed).is_some() {
        let message =
            format!("{shown} is not a directory resource: directory URIs end without a slash. Read '{trimmed}'.");
        return ErrorData::invalid_params(message, Some(asked.data(json!({"closest": [trimmed]}))));
    }
    let message = format!("No directory resource at {shown}.");
    let help = "The directories are each skill's root (the URI of its SKILL.md without /SKILL.md) and the folders below it; skills/list names the skills.";
    unknown(message, asked, closest(uri, catalog.directory_uris()), help)
}

/// What a `skills/get` for a skill not served should do instead.
const LIST_THE_SKILLS: &str = "Call skills/list for the skills this server serves.";

/// The URI of the served skill whose `SKILL.md` is closest to `uri`, if one is close enough.
fn closest_skill<'a>(catalog: &'a Catalog, uri: &str) -> Option<&'a str> {
    closest(uri, catalog.entries().iter().map(|entry| entry.uri.as_str()))
}

/// The refusal of a `skills/get` whose `uri` is no `SKILL.md`'s (it does not end in
/// `/SKILL.md`, or has a query or fragment), which rmcp would answer with the whole URI as
/// sent: the URI cut and escaped (not at all on a value-free server), the form expected, and
/// what to do. The transports answer it before rmcp decodes the request, so before the
/// server's guards: it names no skill the caller might not be allowed to see.
pub(crate) fn not_a_skill_md(uri: &str, served: SkillsServed) -> String {
    let asked = Asked { uri, value_free: served.value_free };
    format!(
        "{} is not the URI of a SKILL.md: skills/get takes a skill's URI as skills/list gives it, ending in \
         /SKILL.md, without a query or fragment. {LIST_THE_SKILLS}",
        asked.shown()
    )
}

/// What a transport checks the skills requests against before rmcp decodes them, for a server
/// that serves skills.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkillsServed {
    /// Whether refusals repeat nothing the request sent.
    pub(crate) value_free: bool,
}

/// `-32602` for a URI nothing is served at: `message`, the closest URI served, then `help`.
fn unknown(message: String, asked: Asked<'_>, closest: Option<&str>, help: &str) -> ErrorData {
    let data = asked.data(json!({"closest": closest.into_iter().collect::<Vec<_>>()}));
    ErrorData::invalid_params(with_guess(message, closest, help), Some(data))
}

/// `message`, then the closest URI served (if any) as a question, then `help`.
fn with_guess(message: String, closest: Option<&str>, help: &str) -> String {
    let guess = closest.map(|closest| format!(" Did you mean '{closest}'?")).unwrap_or_default();
    format!("{message}{guess} {help}")
}

/// What is wrong with the `cursor` of a `method` request's params, when it is there and
/// neither a string nor `null` (which means no cursor).
pub(crate) fn cursor_problem(method: &str, cursor: &Value) -> Option<String> {
    (!cursor.is_string() && !cursor.is_null()).then(|| {
        let kind = mcp_fusion_wire::value_kind(cursor);
        format!("Invalid params for {method}: \"cursor\" must be a string, but it is {kind}")
    })
}

/// What is wrong with the params of a skills request (`method`) that did not decode.
pub(super) fn params_problem(method: &str, params: Option<&Value>) -> String {
    use mcp_fusion_wire::value_kind as kind;
    let wants_uri = method != "skills/list";
    let expected = if wants_uri {
        format!(
            "an object with \"uri\", a string{}",
            if method == "skills/get" { " (the URI of a SKILL.md)" } else { "" }
        )
    } else {
        "an object with an optional \"cursor\" string, or no params".to_owned()
    };
    let Some(Value::Object(params)) = params else {
        return format!("Invalid params for {method}: expected {expected}");
    };
    let cursor = params.get("cursor").filter(|_| method != "skills/get");
    match (params.get("uri"), cursor.and_then(|cursor| cursor_problem(method, cursor))) {
        (None, _) if wants_uri => format!("Invalid params for {method}: \"uri\" is missing; expected {expected}"),
        (Some(uri), _) if wants_uri && !uri.is_string() => {
            format!("Invalid params for {method}: \"uri\" must be a string, but it is {}", kind(uri))
        }
        (_, Some(problem)) => problem,
        _ => format!("Invalid params for {method}: they do not match the schema; expected {expected}"),
    }
}
