//! What compiling the built-in guards of one entry takes: the server's settings, the entry's
//! group, and what the entry asks. Each guard's `compile` reads what it needs from an
//! [`GuardedEntry`]; [`built_in`](super::built_in) runs them stage by stage.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{ConcurrencyGuard, Idempotency, RateLimit, StoreSettings};

/// What the server's builder set for the guards of every entry.
pub(crate) struct ServerGuards {
    pub require_identity: bool,
    pub rate_limits: Vec<RateLimit>,
    pub concurrency: Option<Arc<ConcurrencyGuard>>,
    pub store: StoreSettings,
    pub timeout: Option<Duration>,
    pub idempotency: Idempotency,
    pub max_result_bytes: Option<usize>,
    /// Whether errors repeat no value a call sent (not even its idempotency key).
    pub value_free_errors: bool,
}

/// What an entry's guards take from its group (none, for a resource or a prompt).
pub(crate) struct GroupScope<'a> {
    pub name: &'a str,
    pub rate_limits: &'a [RateLimit],
    pub concurrency: Option<&'a Arc<ConcurrencyGuard>>,
}

/// What an entry asks of its guards, whether it is a typed action, a mounted tool, a
/// resource or a prompt.
pub(crate) struct GuardSpec<'a> {
    pub require_identity: bool,
    pub scopes: &'a [String],
    pub rate_limits: &'a [RateLimit],
    pub deprecated: Option<Option<&'a str>>,
    pub deprecated_fields: &'a [(String, Option<String>)],
    pub timeout: Option<Duration>,
    pub idempotent: bool,
    pub read_only: bool,
    pub by_key: bool,
    pub check_with: Option<&'a str>,
}

impl<'a> GuardSpec<'a> {
    /// A read (a resource, a prompt): idempotent, read-only, asking for an identity when it
    /// asks for scopes.
    pub(crate) fn read(
        require_identity: bool,
        scopes: &'a [String],
        rate_limits: &'a [RateLimit],
        timeout: Option<Duration>,
    ) -> GuardSpec<'a> {
        GuardSpec {
            require_identity: require_identity || !scopes.is_empty(),
            scopes,
            rate_limits,
            timeout,
            idempotent: true,
            read_only: true,
            ..GuardSpec::nothing()
        }
    }

    /// A tool forwarded to an upstream: its deadline, and the hints its upstream gave.
    pub(crate) fn forwarded(timeout: Duration, idempotent: bool, read_only: bool) -> GuardSpec<'a> {
        GuardSpec { timeout: Some(timeout), idempotent, read_only, ..GuardSpec::nothing() }
    }

    /// Asks for nothing.
    fn nothing() -> GuardSpec<'a> {
        GuardSpec {
            require_identity: false,
            scopes: &[],
            rate_limits: &[],
            deprecated: None,
            deprecated_fields: &[],
            timeout: None,
            idempotent: false,
            read_only: false,
            by_key: false,
            check_with: None,
        }
    }
}

/// One entry whose built-in guards are being compiled.
pub(crate) struct GuardedEntry<'a> {
    /// The qualified name (`billing.get_invoice`, a URI, a prompt's name).
    pub qualified: &'a Arc<str>,
    /// The entry's input schema.
    pub input: &'a Map<String, Value>,
    pub server: &'a ServerGuards,
    pub group: &'a GroupScope<'a>,
    pub asks: &'a GuardSpec<'a>,
}

impl GuardedEntry<'_> {
    /// The read-only action of the group to check with, qualified (`billing.get_invoice`); for
    /// an action that stands alone (its own group), as written.
    pub(crate) fn check_with(&self) -> Option<String> {
        let check = self.asks.check_with?;
        let group = self.group.name;
        if **self.qualified == *group {
            return Some(check.to_owned());
        }
        Some(match check.strip_prefix(group).and_then(|rest| rest.strip_prefix('.')) {
            Some(_) => check.to_owned(),
            None => format!("{group}.{check}"),
        })
    }

    /// The concurrency slots a call takes, the group's first, then the server's: a call waits
    /// in one line only.
    pub(crate) fn slots(&self) -> impl Iterator<Item = &Arc<ConcurrencyGuard>> {
        self.group.concurrency.into_iter().chain(&self.server.concurrency)
    }
}
