//! What a request asks of its caller before it runs: the scopes an action, a resource or a
//! prompt needs, for a transport that asks a client to get them (HTTP's step-up `403`).

use serde_json::{Map, Value};

use super::FusionServer;
use crate::auth::Identity;

/// The entry a request addresses, as its params name it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Addressed<'a> {
    /// `tools/call` of `name` with `arguments`.
    Tool { name: &'a str, arguments: Option<&'a Map<String, Value>> },
    /// `resources/read` (or a subscription) of `uri`.
    Resource { uri: &'a str },
    /// `prompts/get` of `name`.
    Prompt { name: &'a str },
}

impl FusionServer {
    /// The scopes to ask `identity` for before the entry `addressed` may run, when it lacks
    /// one: every scope the entry asks for. `None` when it holds them, or the request
    /// addresses nothing served (the request then fails as it would anyway).
    pub(crate) fn scopes_wanted(&self, identity: &Identity, addressed: Addressed<'_>) -> Option<Vec<String>> {
        match addressed {
            Addressed::Tool { name, arguments } => {
                let catalog = self.inner.catalog.load();
                catalog.access_of(name, arguments)?.wanted_from(identity).map(<[String]>::to_vec)
            }
            Addressed::Resource { uri } => self.inner.resources.load().wanted_for_read(uri, identity),
            Addressed::Prompt { name } => self.inner.prompts.wanted_for_get(name, identity),
        }
    }
}
