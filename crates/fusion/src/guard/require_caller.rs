//! The auth guard: credentials the transport refused, anonymous calls to actions that need an
//! identity, and identities short of a scope.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::{Sent, ToolError};

use super::entry::GuardedEntry;
use crate::auth::{AuthError, Caller, Identity};
use crate::error::BuildError;
use crate::middleware::{Call, Middleware, Next, Outcome};

/// Refuses calls whose caller may not run the action.
pub(crate) struct RequireCaller {
    action: Arc<str>,
    require_identity: bool,
    scopes: Vec<String>,
}

impl RequireCaller {
    /// The guard of `action`: an identity when `require_identity` or any scope is asked for.
    /// Refused credentials fail every action, whatever it asks for.
    pub(crate) fn new(action: Arc<str>, require_identity: bool, scopes: Vec<String>) -> RequireCaller {
        RequireCaller { action, require_identity, scopes }
    }

    /// Asks nothing of the caller: a mounted tool, whose upstream decides.
    pub(crate) fn open(action: Arc<str>) -> RequireCaller {
        RequireCaller::new(action, false, Vec::new())
    }

    /// Whether a list shown to `caller` offers the entry: an identity it asks for is there,
    /// and every scope it asks for is held.
    pub(crate) fn offered_to(&self, caller: &Caller) -> bool {
        match caller {
            Caller::Authenticated(identity) => self.scopes.iter().all(|scope| identity.has_scope(scope)),
            Caller::Anonymous | Caller::Refused(_) => !self.require_identity && self.scopes.is_empty(),
        }
    }

    /// The scopes to ask for when `identity` lacks one of them: every scope the entry asks for.
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "asked by HTTP's step-up check only"))]
    pub(crate) fn wanted_from(&self, identity: &Identity) -> Option<&[String]> {
        self.scopes.iter().any(|scope| !identity.has_scope(scope)).then_some(self.scopes.as_slice())
    }

    /// The scopes it asks for.
    pub(crate) fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether it asks anything of the caller.
    pub(crate) fn asks(&self) -> bool {
        self.require_identity || !self.scopes.is_empty()
    }

    /// Whether `caller` may run the action: the refusal to answer with, if not.
    pub(crate) fn admits(&self, caller: &Caller) -> Result<(), ToolError> {
        let action = &self.action;
        let identity = match caller {
            Caller::Refused(AuthError::Unavailable) => {
                return Err(ToolError::unauthorized(
                    "The credentials sent with this call could not be checked: the identity provider did not answer.",
                )
                .suggest("Retry the call in a while with the same credentials; tell the user if it keeps failing."));
            }
            Caller::Refused(reason) => {
                let reason = match reason {
                    AuthError::Expired => "the bearer token has expired",
                    _ => "the bearer token is not valid",
                };
                return Err(ToolError::unauthorized(format!("The credentials sent with this call were refused: {reason}."))
                    .suggest("Tell the user to sign in again (the client must send a fresh bearer token); do not retry with the same credentials."));
            }
            Caller::Anonymous if self.require_identity || !self.scopes.is_empty() => {
                return Err(ToolError::auth_required(format!("{action} needs an authenticated caller, and this call came without credentials."))
                    .suggest("Tell the user this action needs them to sign in (the client must send a bearer token); do not retry until then."));
            }
            Caller::Anonymous => return Ok(()),
            Caller::Authenticated(identity) => identity,
        };
        if let Some(missing) = self.scopes.iter().find(|scope| !identity.has_scope(scope)) {
            return Err(ToolError::forbidden(format!(
                "{action} needs the scope \"{missing}\", which {} does not have.",
                Sent::text(&identity.subject)
            ))
            .suggest(format!(
                "Tell the user this needs the permission \"{missing}\", which their sign-in does not grant; \
                 do not retry until they have it, or use an action you are allowed to call."
            ))
            .detail("required_scope", missing));
        }
        Ok(())
    }
}

impl Middleware for RequireCaller {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        match self.admits(&call.info.caller) {
            Ok(()) => next.run(call),
            Err(refused) => Box::pin(std::future::ready(Err(refused))),
        }
    }

    fn name(&self) -> String {
        match (self.require_identity, self.scopes.as_slice()) {
            (_, [_, ..]) => format!("auth (scopes {})", self.scopes.join(", ")),
            (true, []) => "auth (identity required)".to_owned(),
            (false, []) => "auth".to_owned(),
        }
    }
}

/// The auth stage of `entry`: its identity and scopes, or the server's `requires_identity`.
pub(super) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    let require_identity = entry.server.require_identity || entry.asks.require_identity;
    layers.push(Arc::new(RequireCaller::new(
        Arc::clone(entry.qualified),
        require_identity,
        entry.asks.scopes.to_vec(),
    )));
    Ok(())
}
