//! Cache hints (MCP 2026-07-28, SEP-2549): how long a list or a read stays fresh (`ttlMs`), and
//! whether a cache may hand it to other callers (`cacheScope`).
//!
//! A server sets a default for everything it lists and reads
//! ([`ServerBuilder::cache_hint`](crate::ServerBuilder::cache_hint)), one per list
//! ([`ServerBuilder::list_cache_hint`](crate::ServerBuilder::list_cache_hint)) and one per
//! resource or template (`Resource::cache_hint`). Without any, a result is stale at once and
//! for its caller alone (`ttlMs: 0`, `private`), what a client must assume anyway.
//!
//! A hint never lets a cache give one caller what another may see: a list made for its caller
//! (lists per caller, over HTTP with an authenticator) and the read of a resource that asks for
//! an identity or a scope are always `private`, whatever the hint says.
//!
//! ```
//! use std::time::Duration;
//! use mcp_fusion::cache::{CacheHint, Listing};
//!
//! let hour = CacheHint::shared(Duration::from_secs(3600));
//! assert_eq!((hour.ttl_ms(), hour.is_shared()), (3_600_000, true));
//! assert_eq!(CacheHint::default(), CacheHint::private(Duration::ZERO));
//! # let _ = Listing::Tools;
//! ```

use std::time::Duration;

use rmcp::model::CacheScope;

use crate::error::BuildError;

/// How long a result stays fresh, and whether a cache may serve it to other callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHint {
    ttl: Duration,
    shared: bool,
}

/// The longest freshness a hint may say: `ttlMs` is a JSON number, and a client reading it as
/// a double (JavaScript) holds integers exactly up to 2^53 - 1.
pub const MAX_TTL: Duration = Duration::from_millis((1 << 53) - 1);

impl CacheHint {
    /// Fresh for `ttl`, kept by the caller's client alone (`cacheScope: "private"`).
    pub fn private(ttl: Duration) -> CacheHint {
        CacheHint { ttl, shared: false }
    }

    /// Fresh for `ttl`, and the same for every caller: any cache may keep it and serve it to
    /// anyone (`cacheScope: "public"`).
    pub fn shared(ttl: Duration) -> CacheHint {
        CacheHint { ttl, shared: true }
    }

    /// `ttlMs`: the freshness in whole milliseconds (a part of one counts as none).
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether a cache may serve it to other callers.
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// `cacheScope`.
    pub(crate) fn scope(&self) -> CacheScope {
        if self.shared { CacheScope::Public } else { CacheScope::Private }
    }

    /// The hint for a result that may differ by caller: private, whatever this one says.
    pub(crate) fn for_one_caller(self) -> CacheHint {
        CacheHint { shared: false, ..self }
    }

    /// Refuses a freshness no client can read back exactly; `what` names where it was set.
    pub(crate) fn checked(self, what: &str) -> Result<CacheHint, BuildError> {
        if self.ttl > MAX_TTL {
            return Err(BuildError::CacheHint { what: what.to_owned(), ttl: self.ttl, max: MAX_TTL });
        }
        Ok(self)
    }
}

/// The lists a server answers, each of which may carry a hint of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Listing {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
    /// `skills/list` (see [`skill`](crate::skill)).
    Skills,
}

impl Listing {
    const ALL: [Listing; 5] =
        [Listing::Tools, Listing::Prompts, Listing::Resources, Listing::ResourceTemplates, Listing::Skills];

    fn index(self) -> usize {
        match self {
            Listing::Tools => 0,
            Listing::Prompts => 1,
            Listing::Resources => 2,
            Listing::ResourceTemplates => 3,
            Listing::Skills => 4,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Prompts => "prompts/list",
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
            Listing::Skills => "skills/list",
        }
    }
}

/// A server's hints: its default, and what each list says instead.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CacheHints {
    default: CacheHint,
    lists: [Option<CacheHint>; 5],
}

impl CacheHints {
    pub(crate) fn set_default(&mut self, hint: CacheHint) {
        self.default = hint;
    }

    pub(crate) fn set_list(&mut self, listing: Listing, hint: CacheHint) {
        self.lists[listing.index()] = Some(hint);
    }

    /// The server's default, for a read whose resource sets none.
    pub(crate) fn default_hint(&self) -> CacheHint {
        self.default
    }

    /// The hint of a list; `per_caller` when it was made for its caller.
    pub(crate) fn list(&self, listing: Listing, per_caller: bool) -> CacheHint {
        let hint = self.lists[listing.index()].unwrap_or(self.default);
        if per_caller { hint.for_one_caller() } else { hint }
    }

    /// Every hint checked (see [`CacheHint::checked`]).
    pub(crate) fn checked(self) -> Result<CacheHints, BuildError> {
        self.default.checked("the server's default")?;
        for listing in Listing::ALL {
            if let Some(hint) = self.lists[listing.index()] {
                hint.checked(listing.method())?;
            }
        }
        Ok(self)
    }
}

/// Sets `ttlMs` and `cacheScope` of a list or read result to `hint`.
macro_rules! with_hint {
    ($result:expr, $hint:expr) => {{
        let hint: $crate::cache::CacheHint = $hint;
        let mut result = $result;
        result.ttl_ms = Some(hint.ttl_ms());
        result.cache_scope = Some(hint.scope());
        result
    }};
}
pub(crate) use with_hint;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_made_for_its_caller_is_never_shared() {
        let mut hints = CacheHints::default();
        hints.set_default(CacheHint::shared(Duration::from_secs(60)));
        hints.set_list(Listing::Prompts, CacheHint::private(Duration::from_secs(5)));
        assert_eq!(hints.list(Listing::Tools, false), CacheHint::shared(Duration::from_secs(60)));
        assert_eq!(hints.list(Listing::Tools, true), CacheHint::private(Duration::from_secs(60)));
        assert_eq!(hints.list(Listing::Prompts, false), CacheHint::private(Duration::from_secs(5)));
    }

    #[test]
    fn a_freshness_no_client_reads_back_exactly_is_refused() {
        assert!(CacheHint::shared(MAX_TTL).checked("x").is_ok());
        let error = CacheHint::shared(MAX_TTL + Duration::from_millis(1)).checked("tools/list").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the cache hint of tools/list says 9007199254740.992s, longer than the 9007199254740.991s a client reads back exactly: give a shorter ttl"
        );
        assert_eq!(CacheHint::private(Duration::from_micros(1500)).ttl_ms(), 1);
    }
}
