//! The idempotency key a call runs under: how it travels, and what it is bound to. The guard
//! that claims keys is [`guard::Idempotency`](crate::guard::Idempotency); this is what a call
//! and a handler see of it.

use std::sync::Arc;

use mcp_fusion_wire::{Sent, ToolError};

/// The argument that carries an idempotency key.
pub const IDEMPOTENCY_KEY_ARGUMENT: &str = "idempotency_key";

/// The key of the request's `_meta` that carries an idempotency key.
pub const IDEMPOTENCY_KEY_META: &str = "fusion/idempotency_key";

/// The longest idempotency key accepted, in characters.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

/// What a key is bound to by the call that claimed it: who called, and with what arguments,
/// each as a SHA-256 digest in hex. Only the same caller with the same arguments gets the
/// result kept under the key; anything else gets `CONFLICT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyBinding {
    /// The digest of the caller's scope: its identity, else its session, else its address
    /// (see [`CallerKey`](crate::auth::CallerKey)).
    pub scope: String,
    /// The digest of the call's arguments as canonical JSON (object keys sorted), the key
    /// itself left out.
    pub arguments: String,
}

/// The idempotency key a call runs under, and what it is bound to; a handler that writes
/// keeps both with its write, so a repeat can be answered from its own record after the store
/// forgot the key (a restart, an eviction).
///
/// ```
/// # use mcp_fusion::guard::{IdempotencyKey, KeyBinding};
/// # fn kept(call: &IdempotencyKey, stored: KeyBinding) -> Result<(), mcp_fusion::wire::ToolError> {
/// // In the write's transaction: a record under `call.key()` exists, bound to `stored`.
/// call.check(&stored)?; // CONFLICT unless it is this caller with these arguments
/// // … answer with what that write made, without writing again.
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct IdempotencyKey {
    pub(crate) key: Arc<str>,
    pub(crate) binding: KeyBinding,
    pub(crate) action: Arc<str>,
    check_with: Option<Arc<str>>,
    /// Whether a `CONFLICT` leaves the key out.
    value_free: bool,
}

impl IdempotencyKey {
    pub(crate) fn new(
        key: Arc<str>,
        binding: KeyBinding,
        action: Arc<str>,
        check_with: Option<Arc<str>>,
    ) -> IdempotencyKey {
        IdempotencyKey { key, binding, action, check_with, value_free: false }
    }

    /// The same key, whose conflicts leave it out when `value_free`.
    pub(crate) fn value_free(mut self, value_free: bool) -> IdempotencyKey {
        self.value_free = value_free;
        self
    }

    /// The key as the client sent it (1 to 255 characters).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The caller and the arguments the key is bound to by this call.
    pub fn binding(&self) -> &KeyBinding {
        &self.binding
    }

    /// Whether a record kept under this key, bound to `stored`, is this same request: `Ok`
    /// then (answer with what it did), else the `CONFLICT` envelope to answer with.
    pub fn check(&self, stored: &KeyBinding) -> Result<(), ToolError> {
        if stored.scope != self.binding.scope {
            return Err(other_caller(&self.action, self.echoed(), self.check_with.as_deref()));
        }
        if stored.arguments != self.binding.arguments {
            return Err(conflict(&self.action, self.echoed()));
        }
        Ok(())
    }

    /// The key as an error repeats it, or nothing when errors repeat no value.
    fn echoed(&self) -> Option<Sent> {
        (!self.value_free).then(|| Sent::text(&self.key))
    }
}

/// The key was first sent by another caller (or this one, on an earlier session).
fn other_caller(action: &str, echoed: Option<Sent>, check_with: Option<&str>) -> ToolError {
    let check = match check_with {
        Some(check) => format!("call {check} to see whether it took effect before sending it again"),
        None => "check whether it took effect before sending it again".to_owned(),
    };
    let said = echoed.as_ref().map(|key| format!(" {key}")).unwrap_or_default();
    let error = ToolError::conflict(format!("The idempotency_key{said} is bound to another caller's call of {action}."))
        .suggest(format!(
            "Send a new, unique idempotency_key (a UUID) for this operation. If you sent it yourself before reconnecting, it may have run: {check}."
        ))
        .actions(check_with);
    with_key(error, echoed)
}

fn conflict(action: &str, echoed: Option<Sent>) -> ToolError {
    let said = echoed.as_ref().map(|key| format!(" {key}")).unwrap_or_default();
    let error =
        ToolError::conflict(format!("The idempotency_key{said} was already used with other arguments for {action}."))
            .suggest(
                "To repeat that call, send its arguments unchanged with this key; for a new operation, send a new idempotency_key.",
            );
    with_key(error, echoed)
}

/// The key in the error's details, when it may be repeated.
fn with_key(error: ToolError, echoed: Option<Sent>) -> ToolError {
    match echoed {
        Some(key) => error.detail("idempotency_key", key.as_str()),
        None => error,
    }
}
