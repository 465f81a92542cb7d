//! Step-up authorization: a request for an entry whose scopes the caller's token lacks is
//! answered `403 insufficient_scope` naming them, before MCP runs it, so the client can have
//! the user grant them and retry with a new token.

use std::borrow::Cow;
use std::sync::Arc;

use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::refusal;
use crate::auth::{Caller, uri::is_scope_token};
use crate::server::{Addressed, FusionServer};

/// What the step-up check needs: the server's entries, and where its metadata is.
#[derive(Debug)]
pub(super) struct StepUp {
    pub server: FusionServer,
    pub resource_metadata: Option<Arc<str>>,
}

/// The part of a JSON-RPC request that names an entry.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default)]
    params: Params,
}

#[derive(Deserialize, Default)]
struct Params {
    name: Option<String>,
    uri: Option<String>,
    arguments: Option<Map<String, Value>>,
}

impl StepUp {
    /// The `403` for `body`, a request from `caller` for an entry needing a scope it lacks;
    /// `None` for anything else (a batch, a notification, a call it may make, an anonymous
    /// caller, whose refusal is the entry's own).
    pub(super) fn refuse(&self, caller: Option<&Caller>, body: &[u8]) -> Option<Response> {
        let Some(Caller::Authenticated(identity)) = caller else { return None };
        let message: Message<'_> = serde_json::from_slice(body).ok()?;
        let params = &message.params;
        let addressed = match message.method.as_ref() {
            "tools/call" => Addressed::Tool { name: params.name.as_deref()?, arguments: params.arguments.as_ref() },
            "resources/read" | "resources/subscribe" => Addressed::Resource { uri: params.uri.as_deref()? },
            "prompts/get" => Addressed::Prompt { name: params.name.as_deref()? },
            _ => return None,
        };
        let wanted = self.server.scopes_wanted(identity, addressed)?;
        // A scope a header cannot carry is left out of it; the call's own refusal names it.
        let wanted: Vec<String> = wanted.into_iter().filter(|scope| is_scope_token(scope)).collect();
        let description = format!(
            "this request needs the scope {}; ask the user to grant it, then retry with the new token",
            wanted.join(" ")
        );
        tracing::info!(target: "mcp_fusion::auth", scopes = %wanted.join(" "), "asked the client to step up: the token lacks a scope the request needs");
        Some(refusal::insufficient_scope(&wanted, &description, self.resource_metadata.as_deref()))
    }
}
