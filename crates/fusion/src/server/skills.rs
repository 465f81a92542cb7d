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
        let (skills, next) = page(self.inner.skills.entries(), cursor)?;
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next;
        Ok(with_hint!(result, self.inner.cache.list(Listing::Skills, per_caller)))
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    pub(super) fn skill_entry(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        let catalog = &self.inner.skills;
        let Some(entry) = catalog.entry(uri) else {
            let message = format!("No skill is served at {}.", Sent::text(uri));
            return Err(unknown(message, uri, closest_skill(catalog, uri), LIST_THE_SKILLS));
        };
        Ok(with_hint!(GetSkillResult::new(entry.clone()), self.inner.cache.default_hint()))
    }

    /// The skills it serves, for a transport to check requests against before rmcp decodes
    /// them; `None` when it serves none (rmcp answers the skills methods as unknown then).
    pub(crate) fn served_skills(&self) -> Option<Arc<Catalog>> {
        (!self.inner.skills.is_empty()).then(|| Arc::clone(&self.inner.skills))
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
        let Some(children) = catalog.directory(uri) else { return Err(not_a_directory(catalog, uri)) };
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
        let (listed, next) = page(&listed, cursor)?;
        let mut result = ListResourcesResult::with_all_items(listed);
        result.next_cursor = next;
        Ok(with_hint!(result, self.inner.cache.list(Listing::Resources, per_caller)))
    }
}

/// Why `uri` is no directory this server serves: a file, a directory's URI with a trailing
/// slash, or nothing it serves (with the closest directory).
fn not_a_directory(catalog: &Catalog, uri: &str) -> ErrorData {
    let shown = Sent::text(uri);
    if let Some(file) = catalog.file(uri) {
        let (directory, _) = file.uri.rsplit_once('/').unwrap_or_default();
        let message = format!(
            "{shown} is not a directory resource: it is a file. Read it with resources/read, or list its directory '{directory}'."
        );
        return ErrorData::invalid_params(message, Some(json!({"uri": echoed(uri), "directory": directory})));
    }
    let trimmed = uri.trim_end_matches('/');
    if trimmed != uri && catalog.directory(trimmed).is_some() {
        let message =
            format!("{shown} is not a directory resource: directory URIs end without a slash. Read '{trimmed}'.");
        return ErrorData::invalid_params(message, Some(json!({"uri": echoed(uri), "closest": [trimmed]})));
    }
    let message = format!("No directory resource at {shown}.");
    let help = "The directories are each skill's root (the URI of its SKILL.md without /SKILL.md) and the folders below it; skills/list names the skills.";
    unknown(message, uri, closest(uri, catalog.directory_uris()), help)
}

/// What a `skills/get` for a skill not served should do instead.
const LIST_THE_SKILLS: &str = "Call skills/list for the skills this server serves.";

/// The URI of the served skill whose `SKILL.md` is closest to `uri`, if one is close enough.
fn closest_skill<'a>(catalog: &'a Catalog, uri: &str) -> Option<&'a str> {
    closest(uri, catalog.entries().iter().map(|entry| entry.uri.as_str()))
}

/// The refusal of a `skills/get` whose `uri` is no `SKILL.md`'s (it does not end in
/// `/SKILL.md`, or has a query or fragment), which rmcp would answer with the whole URI as
/// sent: the URI cut and escaped, the form expected, the closest skill, and what to do. The
/// transports answer it before rmcp decodes the request.
pub(crate) fn not_a_skill_md(catalog: &Catalog, uri: &str) -> String {
    let message = format!(
        "{} is not the URI of a SKILL.md: skills/get takes a skill's URI as skills/list gives it, ending in \
         /SKILL.md, without a query or fragment.",
        Sent::text(uri)
    );
    with_guess(message, closest_skill(catalog, uri), LIST_THE_SKILLS)
}

/// `-32602` for a URI nothing is served at: `message`, the closest URI served, then `help`.
fn unknown(message: String, uri: &str, closest: Option<&str>, help: &str) -> ErrorData {
    let data = json!({"uri": echoed(uri), "closest": closest.into_iter().collect::<Vec<_>>()});
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
