//! Handoff: namespaces of tools another MCP server serves, mounted into this one.
//!
//! A [`Mount`] is a namespace (`crm`) with its own guards. Whoever connects to the upstream
//! (the `mcp-fusion-gateway` crate, or your own code) tells the server where the mount
//! stands with [`FusionServer::set_mount`](crate::FusionServer::set_mount):
//!
//! - [`MountState::Connecting`]: every `crm.*` call answers `HANDOFF_CONNECTING`, a warning
//!   (`isError: false`) with `retry_after` 2, sent with `isError: true` for a tool the
//!   upstream last listed with an output schema (a success of it must carry structured
//!   content);
//! - [`MountState::Unavailable`]: `HANDOFF_UPSTREAM_UNAVAILABLE` with `retry_after` the
//!   seconds until the next attempt (at most 30);
//! - [`MountState::Ready`]: the upstream's tools are listed as `crm.{tool}` with their
//!   schemas, descriptions, annotations and output schemas, and a call is validated against
//!   the upstream's input schema with this framework's sentences (unless the mount turns it
//!   off; a key the schema does not name is refused unless it allows other keys explicitly, or
//!   [`Mount::allow_unknown_fields`]), guarded like any action, and handed to the [`Forward`]er; its result comes back as
//!   it came. An upstream's own tool error that is no envelope of this framework (or the
//!   JSON-RPC error its call was answered with) becomes one: the upstream's words as its
//!   message, the code they make clear (`NOT_FOUND`, `CONFLICT`, `VALIDATION_ERROR`,
//!   `FORBIDDEN`, else `UPSTREAM_ERROR`), and the mount's tools that only read as the actions
//!   that find the right value. A framework upstream's envelopes pass as they came, the
//!   actions they name said as the mount serves them (`crm.billing.list_invoices`).
//!
//! The upstream is held to what it lists: a tool name outside MCP's `[A-Za-z0-9_.-]{1,128}`
//! is not served (one warning names them, escaped); an upstream listing more tools than
//! [`Mount::max_tools`] is served none; a call it does not answer within the timeout is
//! answered `TIMEOUT`; and a success of a tool it listed with an output schema must carry
//! structured content that schema accepts, or the caller gets `HANDOFF_UPSTREAM_UNAVAILABLE`
//! saying what was wrong with it.
//!
//! A call to a namespace no mount has, or to a tool the upstream does not list, answers
//! `HANDOFF_NAMESPACE_MISMATCH` with a did-you-mean and the tools there are. Each change of
//! state swaps the catalog and tells connected clients `notifications/tools/list_changed`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ErrorCode;
use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::context::CallInfo;
use crate::guard::{Concurrency, RateLimit};

/// A namespace of tools served by an upstream MCP server, and the guards its calls pass.
#[derive(Debug, Clone)]
pub struct Mount {
    pub(crate) namespace: String,
    pub(crate) validate: bool,
    pub(crate) allow_unknown_fields: bool,
    pub(crate) assert_formats: bool,
    pub(crate) forgiving_scalars: Option<bool>,
    pub(crate) strict_schemas: Option<bool>,
    pub(crate) value_free_errors: Option<bool>,
    pub(crate) rate_limits: Vec<RateLimit>,
    pub(crate) concurrency: Option<Concurrency>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_tools: usize,
}

impl Mount {
    /// How long a call to a mounted tool may take when neither the mount nor the server sets
    /// a timeout: an upstream that never answers still gets its caller an answer.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// How many tools an upstream may list when the mount does not say: more than a model
    /// chooses among, a tenth of what a lockfile holds.
    pub const DEFAULT_MAX_TOOLS: usize = 1_000;

    /// The namespace `namespace` (`crm`): the upstream's tool `search` is listed as
    /// `crm.search`. Validation against the upstream's schemas is on; calls time out after
    /// [`Mount::DEFAULT_TIMEOUT`] unless the server sets its own timeout; the upstream may
    /// list [`Mount::DEFAULT_MAX_TOOLS`] tools.
    pub fn new(namespace: impl Into<String>) -> Mount {
        Mount {
            namespace: namespace.into(),
            validate: true,
            allow_unknown_fields: false,
            assert_formats: false,
            forgiving_scalars: None,
            strict_schemas: None,
            value_free_errors: None,
            rate_limits: Vec::new(),
            concurrency: None,
            timeout: None,
            max_tools: Mount::DEFAULT_MAX_TOOLS,
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Whether arguments are checked against the upstream's input schema before they are
    /// forwarded (default: yes), so a bad call gets this framework's healing sentences instead
    /// of whatever the upstream says.
    pub fn validate(mut self, validate: bool) -> Mount {
        self.validate = validate;
        self
    }

    /// Whether a call may send keys a tool's input schema does not name (default: no). Many
    /// upstreams' schemas leave other keys open without meaning to take them: the upstream then
    /// ignores a misspelt or invented key (`dry_run` for `dryRun`), and the call "succeeds"
    /// with the wrong effect. So a key that nothing applying to its object names or admits —
    /// its `properties`, `patternProperties` and `additionalProperties`, and those reached
    /// through `$ref`, `allOf`, the matching branch of an `anyOf` / `oneOf`, `if` / `then` /
    /// `else` and `dependentSchemas` — is refused with a did-you-mean, at any depth. An object
    /// schema that names no properties (`{"type": "object"}`, a map such as `metadata`) takes
    /// any key, and one that says itself what other keys may be (`additionalProperties`,
    /// `unevaluatedProperties`, `patternProperties`) is taken at its word. Nothing is refused
    /// when [`validate`](Mount::validate) is off.
    pub fn allow_unknown_fields(mut self, allow: bool) -> Mount {
        self.allow_unknown_fields = allow;
        self
    }

    /// Whether a string that spells the number or boolean a tool's schema expects (`"200"`,
    /// `"false"`) is read as it and forwarded so, with an `ARGUMENTS_CONVERTED` warning
    /// (default: the server's [`forgiving_scalars`](crate::ServerBuilder::forgiving_scalars)).
    /// Nothing is read when [`validate`](Mount::validate) is off.
    pub fn forgiving_scalars(mut self, forgive: bool) -> Mount {
        self.forgiving_scalars = Some(forgive);
        self
    }

    /// Whether the upstream's tools are listed with their input schemas in the strict subset
    /// of OpenAI's and Anthropic's strict tool use (default: the server's
    /// [`strict_schemas`](crate::ServerBuilder::strict_schemas)). Calls are checked against
    /// the upstream's full schema when [`validate`](Mount::validate) is on, and a `null` sent
    /// for a field the upstream's schema leaves optional is left out before the call is
    /// forwarded.
    pub fn strict_schemas(mut self, strict: bool) -> Mount {
        self.strict_schemas = Some(strict);
        self
    }

    /// Whether the envelopes of this namespace's calls repeat no value the call sent — its
    /// refusals, the upstream's own words and the warnings alike (default: the server's
    /// [`value_free_errors`](crate::ServerBuilder::value_free_errors)).
    pub fn value_free_errors(mut self, value_free: bool) -> Mount {
        self.value_free_errors = Some(value_free);
        self
    }

    /// Whether a string's `format` (`email`, `date-time`, `uuid`, `uri`, …) is checked before
    /// the call is forwarded (default: no). JSON Schema 2020-12 makes formats annotations, and
    /// an upstream's own parser usually takes more than the strict forms the validator checks
    /// (pydantic takes a date-time without an offset, and numbers for one): checking them
    /// here would refuse calls the upstream accepts. The upstream still checks its values,
    /// and its refusal reaches the model with its words. Turn it on for an upstream that
    /// checks formats as strictly as JSON Schema defines them, to have the format's sentence
    /// (`Expected an RFC 3339 date-time, like 2026-01-31T09:30:00Z`) instead.
    pub fn assert_formats(mut self, assert: bool) -> Mount {
        self.assert_formats = assert;
        self
    }

    /// Limits the calls to this mount's tools, counted together under the namespace.
    pub fn rate_limit(mut self, limit: RateLimit) -> Mount {
        self.rate_limits.push(limit);
        self
    }

    /// Limits the calls to this mount running at once, with a line of waiting calls.
    pub fn concurrency(mut self, limits: Concurrency) -> Mount {
        self.concurrency = Some(limits);
        self
    }

    /// Fails calls the upstream takes longer than `timeout` to answer with `TIMEOUT`
    /// (default: the server's timeout, else [`Mount::DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Mount {
        self.timeout = Some(timeout);
        self
    }

    /// The most tools the upstream may list (default [`Mount::DEFAULT_MAX_TOOLS`]). An
    /// upstream that lists more is served none of them: which of its tools a model could
    /// call would otherwise depend on the order it lists them in.
    pub fn max_tools(mut self, max: usize) -> Mount {
        self.max_tools = max;
        self
    }

    /// Whether calls may send keys a tool's schema does not name.
    pub fn allows_unknown_fields(&self) -> bool {
        self.allow_unknown_fields
    }

    /// Whether strings are checked against their `format` before calls are forwarded.
    pub fn asserts_formats(&self) -> bool {
        self.assert_formats
    }

    /// The most tools the upstream may list.
    pub fn tool_limit(&self) -> usize {
        self.max_tools
    }

    /// Whether this namespace's envelopes repeat no value a call sent, when the mount says
    /// (`None`: as the server says).
    pub fn value_free(&self) -> Option<bool> {
        self.value_free_errors
    }
}

/// Where a mount stands.
#[derive(Clone)]
#[non_exhaustive]
pub enum MountState {
    /// The upstream is starting or being reconnected.
    Connecting,
    /// The upstream is down, crashed, timed out or failed its handshake; the next attempt is
    /// at `retry_at`.
    Unavailable {
        /// When the next attempt starts.
        retry_at: Instant,
        /// What went wrong, for the envelope (cut there like any echo).
        reason: String,
    },
    /// The upstream is connected and lists `tools`; `forward` carries calls to it.
    Ready {
        /// The upstream's tools, as its `tools/list` says them.
        tools: Vec<Tool>,
        /// Carries a call to the upstream.
        forward: Arc<dyn Forward>,
    },
}

impl std::fmt::Debug for MountState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MountState::Connecting => f.write_str("Connecting"),
            MountState::Unavailable { retry_at, reason } => {
                f.debug_struct("Unavailable").field("retry_at", retry_at).field("reason", reason).finish()
            }
            MountState::Ready { tools, .. } => {
                f.debug_struct("Ready").field("tools", &tools.len()).finish_non_exhaustive()
            }
        }
    }
}

/// Carries a call to the upstream of a mount.
pub trait Forward: Send + Sync + 'static {
    /// Calls the upstream's tool `tool` (its own name, without the namespace) with
    /// `arguments`; `call` is the caller's call: its progress and cancellation are the
    /// upstream call's too.
    fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        call: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>>;
}

/// Why a forwarded call got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForwardError {
    /// The upstream refused the arguments (JSON-RPC `-32602`).
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// The upstream has no such tool (JSON-RPC `-32601`, or its own unknown-tool error).
    #[error("no such tool: {0}")]
    NoSuchTool(String),
    /// The upstream's answer was larger than one message may be, so it was dropped unread.
    #[error("the answer was larger than {limit_bytes} bytes")]
    TooLarge {
        /// The most bytes one message may take.
        limit_bytes: usize,
    },
    /// The upstream answered the call with another JSON-RPC error: its tool failed, as an
    /// error result would say. Sorted into an envelope by what `message` says.
    #[error("JSON-RPC error {code}: {message}")]
    Failed {
        /// The JSON-RPC error code.
        code: i32,
        /// The upstream's words.
        message: String,
    },
    /// The upstream answered with a failure whose kind it made plain, as an HTTP API's status
    /// does (404, 409, 429…): `code` is the envelope's, `message` the upstream's words (quoted
    /// and cut there), `retry_after` what it asked for (`Retry-After`).
    #[error("{code}: {message}")]
    Coded {
        /// The envelope's code (`NOT_FOUND`, `CONFLICT`, `RATE_LIMITED`, `TIMEOUT`…).
        code: ErrorCode,
        /// The upstream's words.
        message: String,
        /// When the upstream said to try again.
        retry_after: Option<Duration>,
    },
    /// The upstream could not be asked: a closed connection, a crash, an answer that is no
    /// result.
    #[error("{message}")]
    Unavailable {
        /// What happened.
        message: String,
        /// When to try again, when the forwarder knows (the next reconnect attempt).
        retry_after: Option<Duration>,
    },
    /// The client cancelled the call after it reached the upstream (see
    /// [`CallInfo::hand_off`](crate::CallInfo::hand_off)), and the upstream gave no answer:
    /// the call may have taken effect.
    #[error("cancelled after it reached the upstream, which did not answer")]
    CancelledInFlight,
}
