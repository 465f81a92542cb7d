//! The gateway's TOML file: what to mount, and how to reach each upstream.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mcp_fusion::contract::MAX_LOCKFILE_TOOLS;
use mcp_fusion::guard::{Concurrency, RateLimit};
use mcp_fusion::handoff::Mount;
use serde::Deserialize;

use crate::openapi::is_header_name;
use crate::{Backoff, ClientCredentials, Gateway, Upstream};

/// A gateway file, as `fusion-gateway --config` reads it.
///
/// ```toml
/// connect_timeout_ms = 10000          # start + handshake + tools/list (default 10 s)
/// keepalive_ms = 15000                # ping each upstream this often (default 15 s)
/// value_free_errors = true            # no envelope repeats a value a call sent (default no)
///
/// [reconnect]                         # optional; these are the defaults
/// initial_ms = 500
/// max_ms = 30000                      # at most 30 s
/// jitter = 0.2
///
/// [[mount]]
/// namespace = "billing"               # tools listed as billing.{tool}
/// command = "billing-server"          # a stdio upstream: found on PATH, or a path
/// args = ["--db", "billing.db"]
/// env = { RUST_LOG = "warn" }
/// rate_limit = "100/60"               # N calls per SECS seconds…
/// rate_limit_per = "caller"           # …per caller (default), session, identity, or server
/// max_active = 4                      # calls running at once…
/// max_queue = 16                      # …and waiting; more get SERVER_BUSY
/// timeout_ms = 5000                   # TIMEOUT past this (default 60 s)
/// max_tools = 200                     # an upstream listing more is served none (default 1000)
///
/// [[mount]]
/// namespace = "crm"
/// url = "https://crm.example.com/mcp" # a Streamable HTTP upstream
/// token_env = "CRM_TOKEN"             # bearer token read from this variable
/// validate = false                    # forward arguments unchecked
/// allow_unknown_fields = true         # let keys the tools' schemas do not name through
/// assert_formats = true               # refuse a string not of its `format` (default: the
///                                     # upstream checks its formats itself)
/// forgiving_scalars = false           # refuse "200" for an integer, "false" for a boolean
///                                     # (default: read them, with a warning)
/// strict_schemas = true               # list input schemas in OpenAI's and Anthropic's strict
///                                     # subset (default: as the upstream wrote them)
/// value_free_errors = true            # no envelope repeats a value a call sent (default: the
///                                     # top-level `value_free_errors`, else no)
///
/// [[mount]]
/// namespace = "erp"
/// url = "https://erp.example.com/mcp"
/// # Instead of `token_env`: the gateway gets its own token (OAuth 2.0 client credentials,
/// # HTTP Basic, the upstream's `url` as the resource) and renews it before it expires.
/// token_url = "https://id.example.com/oauth/token" # the authorization server's token endpoint
/// client_id_env = "ERP_CLIENT_ID"     # variable holding the client id
/// client_secret_env = "ERP_CLIENT_SECRET" # variable holding the client secret
/// scope = "erp:read erp:write"        # optional, space-separated
///
/// [[mount]]
/// namespace = "shop"
/// openapi = "https://shop.example.com/openapi.json" # an HTTP API: a file's path, or a URL
/// base_url = "https://shop.example.com/v2" # optional: else the document's first server, else
///                                     # the origin it came from
/// token_env = "SHOP_TOKEN"            # optional: `Authorization: Bearer` from this variable
/// headers_env = { "X-API-Key" = "SHOP_KEY" } # optional: headers, each from a variable
/// ```
///
/// An `openapi` mount makes each operation of the document (OpenAPI 3.0 or 3.1, or Swagger 2.0
/// converted to OpenAPI 3.0 as it is read; JSON or YAML) a tool, named by
/// its `operationId` (else method and path), its path, query and header parameters and its
/// request body (`body`) the tool's arguments, written as the document's styles and media
/// types say. An operation the tools cannot carry (a recursive schema, a cookie parameter, a
/// header that frames the request, a body of a media type no tool sends) is left out and the
/// rest served, each left out, renamed or parameter the mount sets itself logged as a warning
/// at start-up (`GET /session is left out: /paths/~1session/get/parameters/0/in: a cookie
/// parameter is not supported; a tool sends no cookies`); the document is refused only when it
/// has nothing to serve, and served none when it has more operations than `max_tools`. A call
/// is one request; the API's answer is the result, or an envelope its status names: 400 and
/// 422 `VALIDATION_ERROR` with the API's words, 401 `AUTH_REQUIRED`, 403 `FORBIDDEN`, 404
/// `NOT_FOUND`, 409 `CONFLICT`, 429 `RATE_LIMITED` and 503 `SERVER_BUSY` with its
/// `Retry-After`, 504 `TIMEOUT`, another 5xx or an API that cannot be reached
/// `HANDOFF_UPSTREAM_UNAVAILABLE`. Redirects are not followed. The
/// headers go with the document's request too; a fetched document that sends its calls to
/// another origin than its own needs `base_url` set to it, so credentials go nowhere unsaid.
///
/// `token_url` is https, or http to the loopback only (`localhost`, `127.0.0.1`, `[::1]`).
///
/// Relative paths in `command` and `args` are resolved by the upstream from the directory the
/// gateway runs in.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How long an upstream may take to start, complete its handshake and list its tools.
    pub connect_timeout_ms: Option<u64>,
    /// How often each upstream is pinged, in milliseconds.
    pub keepalive_ms: Option<u64>,
    /// How long to wait between attempts to reach an upstream.
    pub reconnect: Option<ReconnectConfig>,
    /// Whether `tools/list` shows `search_tools` and `get_tool_details` instead of every
    /// mounted tool (default: no; see [`ServerBuilder::tool_search`](mcp_fusion::ServerBuilder::tool_search)).
    pub tool_search: Option<bool>,
    /// Whether no envelope repeats a value a call sent, for every mount that does not say
    /// otherwise (default: no; see
    /// [`ServerBuilder::value_free_errors`](mcp_fusion::ServerBuilder::value_free_errors)).
    pub value_free_errors: Option<bool>,
    /// The mounts, at least one.
    #[serde(default, rename = "mount")]
    pub mounts: Vec<MountConfig>,
}

/// The `[reconnect]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconnectConfig {
    /// The first wait, in milliseconds.
    pub initial_ms: Option<u64>,
    /// The longest wait, in milliseconds (at most 30 000).
    pub max_ms: Option<u64>,
    /// The spread of each wait, as a fraction (0.2 = ±20 %).
    pub jitter: Option<f64>,
}

/// One `[[mount]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MountConfig {
    /// The namespace its tools are listed under.
    pub namespace: String,
    /// A stdio upstream: the program to start.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables added to the gateway's for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A Streamable HTTP upstream: its endpoint.
    pub url: Option<String>,
    /// An HTTP API: its OpenAPI document, a file's path or an `http(s)://` URL.
    pub openapi: Option<String>,
    /// Where the API of `openapi` is served, if not where its document says.
    pub base_url: Option<String>,
    /// Headers sent to the API of `openapi`: each header's name, and the environment variable
    /// holding its value.
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
    /// The environment variable holding the bearer token sent to `url` or the `openapi` API.
    pub token_env: Option<String>,
    /// The authorization server's token endpoint, where the gateway gets its own bearer token
    /// for `url` with the client-credentials grant (instead of `token_env`).
    pub token_url: Option<String>,
    /// The environment variable holding the client id at `token_url`.
    pub client_id_env: Option<String>,
    /// The environment variable holding the client secret at `token_url`.
    pub client_secret_env: Option<String>,
    /// The scope asked of `token_url`: space-separated scope tokens.
    pub scope: Option<String>,
    /// Whether arguments are checked against the upstream's schemas first (default: yes).
    pub validate: Option<bool>,
    /// Whether a call may send keys a tool's schema does not name (default: no, unless the
    /// schema allows other keys explicitly; see [`Mount::allow_unknown_fields`]).
    pub allow_unknown_fields: Option<bool>,
    /// Whether a string's `format` (`email`, `date-time`, …) is checked before the call is
    /// forwarded (default: no; see [`Mount::assert_formats`]).
    pub assert_formats: Option<bool>,
    /// Whether a string that spells the number or boolean a tool expects is read as it, with
    /// a warning (default: yes; see [`Mount::forgiving_scalars`]).
    pub forgiving_scalars: Option<bool>,
    /// Whether the tools are listed with input schemas in the strict subset of OpenAI's and
    /// Anthropic's strict tool use (default: no; see [`Mount::strict_schemas`]).
    pub strict_schemas: Option<bool>,
    /// Whether this mount's envelopes repeat no value a call sent (default: the top-level
    /// `value_free_errors`; see [`Mount::value_free_errors`]).
    pub value_free_errors: Option<bool>,
    /// `N/SECS`: at most N calls to the mount per SECS seconds.
    pub rate_limit: Option<String>,
    /// What `rate_limit` counts per: `session` (default), `identity` or `server`.
    pub rate_limit_per: Option<String>,
    /// Calls to the mount running at once.
    pub max_active: Option<u32>,
    /// Calls waiting for a slot when `max_active` are running.
    pub max_queue: Option<u32>,
    /// Calls the upstream takes longer than this to answer fail with `TIMEOUT` (default
    /// [`Mount::DEFAULT_TIMEOUT`], 60 s).
    pub timeout_ms: Option<u64>,
    /// The most tools the upstream may list (default [`Mount::DEFAULT_MAX_TOOLS`], 1000; at
    /// most 10 000, what a lockfile holds); one that lists more is served none, and its calls
    /// say why.
    pub max_tools: Option<usize>,
}

/// What is wrong with a gateway file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read the file: {error}")]
    Read {
        /// Why.
        error: std::io::Error,
    },
    /// The file is not TOML of the expected shape (the message has the line and the key).
    #[error("{0}")]
    Syntax(toml::de::Error),
    /// A value is out of its range or contradicts another.
    #[error("{at}: {problem}")]
    Invalid {
        /// Where: `mount "crm"`, `[reconnect] max_ms`, `[[mount]]`.
        at: String,
        /// What was found, and what was expected.
        problem: String,
    },
}

impl Config {
    /// Reads and checks the gateway file at `path`.
    pub fn read(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read { error })?;
        Config::parse(&text)
    }

    /// Parses and checks a gateway file's text.
    ///
    /// ```
    /// use mcp_fusion_gateway::Config;
    ///
    /// let config = Config::parse("[[mount]]\nnamespace = \"crm\"\nurl = \"http://localhost:9000/mcp\"\n").unwrap();
    /// assert_eq!(config.mounts[0].namespace, "crm");
    /// let error = Config::parse("[[mount]]\nnamespace = \"crm\"\n").unwrap_err();
    /// assert_eq!(error.to_string(), "mount \"crm\": none of `command`, `url` and `openapi` is set; expected one of them");
    /// ```
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(ConfigError::Syntax)?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if self.mounts.is_empty() {
            return Err(invalid("[[mount]]", "none is set; expected at least one"));
        }
        for (index, mount) in self.mounts.iter().enumerate() {
            mount.check()?;
            if self.mounts[..index].iter().any(|earlier| earlier.namespace == mount.namespace) {
                return Err(invalid(mount.at(), "the namespace is mounted twice; expected each once"));
            }
        }
        if self.connect_timeout_ms == Some(0) {
            return Err(invalid("connect_timeout_ms", "0; expected a number of milliseconds above zero"));
        }
        if let Some(ms) = self.keepalive_ms
            && ms < 100
        {
            return Err(invalid("keepalive_ms", format!("{ms}; expected at least 100 milliseconds")));
        }
        if let Some(reconnect) = &self.reconnect {
            reconnect.check()?;
        }
        Ok(())
    }

    /// The gateway the file describes; `env` gives the value of an environment variable
    /// (`token_env`, `client_id_env`, `client_secret_env`), so tests need not touch the
    /// process's.
    pub fn gateway(&self, env: impl Fn(&str) -> Option<String>) -> Result<Gateway, ConfigError> {
        let mut gateway = Gateway::new();
        if let Some(ms) = self.connect_timeout_ms {
            gateway = gateway.connect_timeout(Duration::from_millis(ms));
        }
        if let Some(ms) = self.keepalive_ms {
            gateway = gateway.keepalive(Duration::from_millis(ms));
        }
        if let Some(reconnect) = &self.reconnect {
            gateway = gateway.backoff(reconnect.backoff());
        }
        for mount in &self.mounts {
            gateway = gateway.mount(mount.mount()?, mount.upstream(&env)?);
        }
        Ok(gateway)
    }
}

impl ReconnectConfig {
    fn check(&self) -> Result<(), ConfigError> {
        if self.initial_ms == Some(0) {
            return Err(invalid("[reconnect] initial_ms", "0; expected milliseconds above zero"));
        }
        if let Some(max) = self.max_ms
            && !(1..=30_000).contains(&max)
        {
            return Err(invalid("[reconnect] max_ms", format!("{max}; expected 1 to 30000 milliseconds")));
        }
        if let Some(jitter) = self.jitter
            && !(0.0..=1.0).contains(&jitter)
        {
            return Err(invalid("[reconnect] jitter", format!("{jitter}; expected a fraction from 0 to 1")));
        }
        Ok(())
    }

    fn backoff(&self) -> Backoff {
        let default = Backoff::default();
        Backoff {
            initial: self.initial_ms.map_or(default.initial, Duration::from_millis),
            max: self.max_ms.map_or(default.max, Duration::from_millis),
            jitter: self.jitter.unwrap_or(default.jitter),
        }
    }
}

impl MountConfig {
    fn at(&self) -> String {
        format!("mount {:?}", self.namespace)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if let Some(problem) = namespace_problem(&self.namespace) {
            return Err(invalid(self.at(), problem));
        }
        let kinds = [
            ("`command`", self.command.is_some()),
            ("`url`", self.url.is_some()),
            ("`openapi`", self.openapi.is_some()),
        ];
        let set: Vec<&str> = kinds.iter().filter(|(_, set)| *set).map(|(key, _)| *key).collect();
        if set.len() > 1 {
            return Err(invalid(self.at(), format!("{} are set; expected one", listed(&set))));
        }
        if self.openapi.is_none()
            && let Some(key) = self.openapi_only_key()
        {
            return Err(invalid(self.at(), format!("`{key}` is set without `openapi`; it applies to `openapi` only")));
        }
        if let Some(document) = &self.openapi {
            return self.check_openapi(document).and_then(|()| self.check_guards());
        }
        match (&self.command, &self.url) {
            (None, None) => {
                return Err(invalid(self.at(), "none of `command`, `url` and `openapi` is set; expected one of them"));
            }
            (Some(command), _) => {
                if command.trim().is_empty() {
                    return Err(invalid(self.at(), "`command` is empty; expected a program"));
                }
                if let Some(key) = self.http_only_key() {
                    return Err(invalid(
                        self.at(),
                        format!("`{key}` is set on a stdio upstream; it applies to `url` only"),
                    ));
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid(self.at(), format!("`url` is {url:?}; expected an http:// or https:// URL")));
                }
                if !self.args.is_empty() || !self.env.is_empty() {
                    return Err(invalid(
                        self.at(),
                        "`args` or `env` is set on an HTTP upstream; they apply to `command` only",
                    ));
                }
                self.check_client_credentials()?;
            }
        }
        self.check_guards()
    }

    /// The keys only an `openapi` mount takes, the first one set.
    fn openapi_only_key(&self) -> Option<&'static str> {
        [("base_url", self.base_url.is_some()), ("headers_env", !self.headers_env.is_empty())]
            .into_iter()
            .find_map(|(key, set)| set.then_some(key))
    }

    /// An `openapi` mount: a document, an http(s) `base_url`, header names HTTP takes, and no
    /// key of the other kinds of upstream.
    fn check_openapi(&self, document: &str) -> Result<(), ConfigError> {
        if document.trim().is_empty() {
            return Err(invalid(self.at(), "`openapi` is empty; expected a file's path or an http(s):// URL"));
        }
        if !self.args.is_empty() || !self.env.is_empty() {
            return Err(invalid(
                self.at(),
                "`args` or `env` is set on an `openapi` mount; they apply to `command` only",
            ));
        }
        if let Some(key) = self.http_only_key().filter(|key| *key != "token_env") {
            return Err(invalid(
                self.at(),
                format!(
                    "`{key}` is set on an `openapi` mount; it applies to `url` only (use `token_env` or `headers_env`)"
                ),
            ));
        }
        if let Some(url) = &self.base_url {
            let parsed = reqwest::Url::parse(url)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some());
            if parsed.is_none() {
                return Err(invalid(
                    format!("{} base_url", self.at()),
                    format!("{url:?}; expected an http:// or https:// URL, like \"https://api.example.com/v2\""),
                ));
            }
        }
        for name in self.headers_env.keys() {
            if !is_header_name(name) {
                return Err(invalid(
                    format!("{} headers_env", self.at()),
                    format!("{name:?} is no header name; expected letters, digits and - like \"X-API-Key\""),
                ));
            }
        }
        Ok(())
    }

    /// The guards' keys, whatever the upstream.
    fn check_guards(&self) -> Result<(), ConfigError> {
        if let Some(limit) = &self.rate_limit {
            parse_rate_limit(limit).map_err(|problem| invalid(format!("{} rate_limit", self.at()), problem))?;
        }
        if let Some(per) = &self.rate_limit_per {
            if self.rate_limit.is_none() {
                return Err(invalid(self.at(), "`rate_limit_per` is set without `rate_limit`"));
            }
            if !matches!(per.as_str(), "caller" | "session" | "identity" | "server") {
                return Err(invalid(
                    format!("{} rate_limit_per", self.at()),
                    format!("{per:?}; expected \"caller\", \"session\", \"identity\" or \"server\""),
                ));
            }
        }
        if self.max_active == Some(0) {
            return Err(invalid(format!("{} max_active", self.at()), "0; expected at least 1"));
        }
        if self.max_queue.is_some() && self.max_active.is_none() {
            return Err(invalid(self.at(), "`max_queue` is set without `max_active`"));
        }
        if self.timeout_ms == Some(0) {
            return Err(invalid(format!("{} timeout_ms", self.at()), "0; expected milliseconds above zero"));
        }
        if let Some(max) = self.max_tools
            && !(1..=MAX_LOCKFILE_TOOLS).contains(&max)
        {
            return Err(invalid(
                format!("{} max_tools", self.at()),
                format!("{max}; expected 1 to {MAX_LOCKFILE_TOOLS} (the most tools a lockfile holds)"),
            ));
        }
        Ok(())
    }

    /// The first key set that only an HTTP upstream takes.
    fn http_only_key(&self) -> Option<&'static str> {
        [
            ("token_env", self.token_env.is_some()),
            ("token_url", self.token_url.is_some()),
            ("client_id_env", self.client_id_env.is_some()),
            ("client_secret_env", self.client_secret_env.is_some()),
            ("scope", self.scope.is_some()),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key))
    }

    /// `token_url`, `client_id_env` and `client_secret_env` all three or none, not with
    /// `token_env`; `token_url` https (http to the loopback only); `scope` of RFC 6749 tokens.
    fn check_client_credentials(&self) -> Result<(), ConfigError> {
        let keys = [
            ("`token_url`", self.token_url.is_some()),
            ("`client_id_env`", self.client_id_env.is_some()),
            ("`client_secret_env`", self.client_secret_env.is_some()),
        ];
        let set: Vec<_> = keys.iter().filter(|(_, set)| *set).map(|(key, _)| *key).collect();
        let missing: Vec<_> = keys.iter().filter(|(_, set)| !*set).map(|(key, _)| *key).collect();
        if set.is_empty() {
            if self.scope.is_some() {
                return Err(invalid(
                    self.at(),
                    "`scope` is set without `token_url`, `client_id_env` and `client_secret_env`; it applies to the client-credentials grant only",
                ));
            }
            return Ok(());
        }
        if !missing.is_empty() {
            return Err(invalid(
                self.at(),
                format!(
                    "{} {} set without {}; expected all three of `token_url`, `client_id_env` and `client_secret_env`, or none",
                    listed(&set),
                    if set.len() == 1 { "is" } else { "are" },
                    listed(&missing)
                ),
            ));
        }
        if self.token_env.is_some() {
            return Err(invalid(
                self.at(),
                "both `token_env` and `token_url` are set; expected one: a fixed token, or one fetched with client credentials",
            ));
        }
        if let Some(token_url) = &self.token_url {
            check_token_url(token_url).map_err(|problem| invalid(format!("{} token_url", self.at()), problem))?;
        }
        if let Some(scope) = &self.scope {
            let expected = "expected space-separated scope tokens of printable ASCII but `\"` and `\\`, like \"crm:read crm:write\"";
            let at = format!("{} scope", self.at());
            if let Some(bad) = bad_scope_character(scope) {
                return Err(invalid(at, format!("{scope:?} has {bad:?}, which no scope token may hold; {expected}")));
            }
            if scope.trim_matches(' ').is_empty() {
                return Err(invalid(at, format!("{scope:?} has no scope token; {expected}")));
            }
        }
        Ok(())
    }

    fn mount(&self) -> Result<Mount, ConfigError> {
        let mut mount = Mount::new(&self.namespace)
            .validate(self.validate.unwrap_or(true))
            .allow_unknown_fields(self.allow_unknown_fields.unwrap_or(false))
            .assert_formats(self.assert_formats.unwrap_or(false));
        if let Some(forgive) = self.forgiving_scalars {
            mount = mount.forgiving_scalars(forgive);
        }
        if let Some(value_free) = self.value_free_errors {
            mount = mount.value_free_errors(value_free);
        }
        if let Some(strict) = self.strict_schemas {
            mount = mount.strict_schemas(strict);
        }
        if let Some(limit) = &self.rate_limit {
            let limit =
                parse_rate_limit(limit).map_err(|problem| invalid(format!("{} rate_limit", self.at()), problem))?;
            mount = mount.rate_limit(match self.rate_limit_per.as_deref() {
                Some("identity") => limit.per_identity(),
                Some("server") => limit.global(),
                Some("session") => limit.per_session(),
                _ => limit.per_caller(),
            });
        }
        if let Some(active) = self.max_active {
            mount = mount.concurrency(Concurrency::new(active as usize, self.max_queue.unwrap_or(0) as usize));
        }
        if let Some(ms) = self.timeout_ms {
            mount = mount.timeout(Duration::from_millis(ms));
        }
        if let Some(max) = self.max_tools {
            mount = mount.max_tools(max);
        }
        Ok(mount)
    }

    fn upstream(&self, env: &impl Fn(&str) -> Option<String>) -> Result<Upstream, ConfigError> {
        if let Some(document) = &self.openapi {
            let mut upstream = Upstream::openapi(document);
            if let Some(url) = &self.base_url {
                upstream = upstream.base_url(url);
            }
            if let Some(variable) = &self.token_env {
                upstream = upstream.token(self.variable("token_env", variable, "the API's token", env)?);
            }
            for (name, variable) in &self.headers_env {
                let value = self.variable("headers_env", variable, &format!("the value of {name}"), env)?;
                upstream = upstream.header(name, value);
            }
            return Ok(upstream);
        }
        if let Some(command) = &self.command {
            let upstream = Upstream::stdio(command, &self.args);
            return Ok(self.env.iter().fold(upstream, |upstream, (key, value)| upstream.env(key, value)));
        }
        let url = self.url.as_deref().unwrap_or_default();
        let upstream = Upstream::http(url);
        if let (Some(token_url), Some(id), Some(secret)) =
            (&self.token_url, &self.client_id_env, &self.client_secret_env)
        {
            let id = self.variable("client_id_env", id, "the client id", env)?;
            let secret = self.variable("client_secret_env", secret, "the client secret", env)?;
            let mut credentials = ClientCredentials::new(token_url, id, secret);
            if let Some(scope) = &self.scope {
                // One space between tokens, as RFC 6749 writes them.
                credentials =
                    credentials.scope(scope.split(' ').filter(|token| !token.is_empty()).collect::<Vec<_>>().join(" "));
            }
            return Ok(upstream.client_credentials(credentials));
        }
        match &self.token_env {
            None => Ok(upstream),
            Some(variable) => Ok(upstream.token(self.variable("token_env", variable, "the upstream's token", env)?)),
        }
    }

    /// The value of the variable `name` that `key` names, which holds `what`.
    fn variable(
        &self,
        key: &str,
        name: &str,
        what: &str,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<String, ConfigError> {
        match env(name) {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(invalid(self.at(), format!("`{key}` names {name}, which is not set; expected {what} in it"))),
        }
    }
}

/// What is wrong with a mount's namespace, if anything.
pub(crate) fn namespace_problem(namespace: &str) -> Option<&'static str> {
    let fine = (1..=64).contains(&namespace.len())
        && namespace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (!fine).then_some("the namespace is not 1 to 64 of A-Z a-z 0-9 _ - (a dot would make its tool names ambiguous)")
}

/// `a`, `a and b`, `a, b and c`.
fn listed(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A token endpoint's URL: absolute, https (or http to the loopback), no credentials in it,
/// no fragment (RFC 6749 §3.2).
fn check_token_url(text: &str) -> Result<(), String> {
    let expected = "expected the authorization server's token endpoint, like \"https://id.example.com/oauth/token\"";
    let url =
        reqwest::Url::parse(text).map_err(|error| format!("{text:?} is not an absolute URL ({error}); {expected}"))?;
    // The host as the URL standard writes it: lowercase, addresses in their shortest form.
    let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match url.scheme() {
        "https" if url.host().is_some() => {}
        "http" if loopback => {}
        "http" => {
            return Err(format!(
                "{text:?} is plain http to a host other than the loopback, which would send the client secret in the clear; expected https (http only to localhost, 127.0.0.1 or [::1])"
            ));
        }
        _ => return Err(format!("{text:?} is not an https URL; {expected}")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{text:?} has credentials in it; expected them in `client_id_env` and `client_secret_env`"
        ));
    }
    if url.fragment().is_some() {
        return Err(format!("{text:?} has a fragment, which a token endpoint's URL may not have (RFC 6749 §3.2)"));
    }
    Ok(())
}

/// `N/SECS`, like `10/60`.
fn parse_rate_limit(text: &str) -> Result<RateLimit, String> {
    let expected = || format!("{text:?}; expected N/SECS with whole numbers above zero, like \"10/60\"");
    let (calls, seconds) = text.split_once('/').ok_or_else(expected)?;
    let calls: u32 = calls.trim().parse().map_err(|_| expected())?;
    let seconds: u64 = seconds.trim().parse().map_err(|_| expected())?;
    if calls == 0 || seconds == 0 {
        return Err(expected());
    }
    Ok(RateLimit::new(calls, Duration::from_secs(seconds)))
}

/// Whether `scope` is space-separated scope tokens of RFC 6749 §3.3: printable ASCII but the
/// space, `"` and `\`. The first offending character, if any.
fn bad_scope_character(scope: &str) -> Option<char> {
    scope.chars().find(|&c| c != ' ' && !(c.is_ascii_graphic() && c != '"' && c != '\\'))
}

fn invalid(at: impl Into<String>, problem: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { at: at.into(), problem: problem.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        Config::parse(text).unwrap_err().to_string()
    }

    const STDIO: &str = "[[mount]]\nnamespace = \"billing\"\ncommand = \"billing-server\"\n";

    #[test]
    fn a_full_file_makes_its_gateway() {
        let text = r#"
            connect_timeout_ms = 2500
            keepalive_ms = 1000
            [reconnect]
            initial_ms = 100
            max_ms = 2000
            jitter = 0.1
            [[mount]]
            namespace = "billing"
            command = "billing-server"
            args = ["--db", "billing.db"]
            env = { RUST_LOG = "warn" }
            rate_limit = "10/60"
            rate_limit_per = "identity"
            max_active = 2
            max_queue = 4
            timeout_ms = 500
            max_tools = 50
            [[mount]]
            namespace = "crm"
            url = "https://crm.example.com/mcp"
            token_env = "CRM_TOKEN"
            validate = false
            allow_unknown_fields = true
            assert_formats = true
            value_free_errors = true
        "#;
        let config = Config::parse(text).unwrap();
        let gateway = config.gateway(|name| (name == "CRM_TOKEN").then(|| "s3cret".to_owned())).unwrap();
        assert_eq!(gateway.connect_timeout, Duration::from_millis(2500));
        assert_eq!(gateway.keepalive, Duration::from_secs(1));
        assert_eq!(gateway.backoff.initial, Duration::from_millis(100));
        let mounts: Vec<_> = gateway.mounts().collect();
        assert_eq!(mounts.len(), 2);
        assert_eq!(mounts[0].0.namespace(), "billing");
        assert_eq!((mounts[0].0.tool_limit(), mounts[1].0.tool_limit()), (50, Mount::DEFAULT_MAX_TOOLS));
        assert_eq!((mounts[0].0.allows_unknown_fields(), mounts[1].0.allows_unknown_fields()), (false, true));
        assert_eq!((mounts[0].0.value_free(), mounts[1].0.value_free()), (None, Some(true)));
        assert_eq!((mounts[0].0.asserts_formats(), mounts[1].0.asserts_formats()), (false, true));
        assert_eq!(mounts[0].1, &Upstream::stdio("billing-server", ["--db", "billing.db"]).env("RUST_LOG", "warn"));
        assert_eq!(mounts[1].1, &Upstream::http("https://crm.example.com/mcp").token("s3cret"));
    }

    #[test]
    fn a_missing_token_variable_is_named() {
        let config =
            Config::parse("[[mount]]\nnamespace = \"crm\"\nurl = \"http://h/mcp\"\ntoken_env = \"CRM_TOKEN\"\n")
                .unwrap();
        let error = config.gateway(|_| None).unwrap_err().to_string();
        assert_eq!(
            error,
            "mount \"crm\": `token_env` names CRM_TOKEN, which is not set; expected the upstream's token in it"
        );
    }

    const CRM: &str = "[[mount]]\nnamespace = \"crm\"\nurl = \"https://crm.example.com/mcp\"\n";
    const GRANT: &str = "token_url = \"https://id.example.com/oauth/token\"\nclient_id_env = \"CRM_ID\"\nclient_secret_env = \"CRM_SECRET\"\n";

    fn crm_env(name: &str) -> Option<String> {
        match name {
            "CRM_ID" => Some("gateway".to_owned()),
            "CRM_SECRET" => Some("s3cret".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn a_mount_with_client_credentials_gets_them_from_its_variables() {
        let config = Config::parse(&format!("{CRM}{GRANT}scope = \"crm:read  crm:write\"\n")).unwrap();
        let gateway = config.gateway(crm_env).unwrap();
        let (_, upstream) = gateway.mounts().next().unwrap();
        let credentials = ClientCredentials::new("https://id.example.com/oauth/token", "gateway", "s3cret")
            .scope("crm:read crm:write");
        assert_eq!(upstream, &Upstream::http("https://crm.example.com/mcp").client_credentials(credentials));
        assert!(!format!("{upstream:?}").contains("s3cret"), "Debug shows the secret: {upstream:?}");
        for url in ["http://localhost:8080/token", "http://127.0.0.1/token", "http://[::1]:9/t", "HTTPS://ID.example/t"]
        {
            let text =
                format!("{CRM}token_url = {url:?}\nclient_id_env = \"CRM_ID\"\nclient_secret_env = \"CRM_SECRET\"\n");
            assert!(Config::parse(&text).is_ok(), "{url}");
        }
    }

    #[test]
    fn a_missing_client_variable_is_named() {
        let config = Config::parse(&format!("{CRM}{GRANT}")).unwrap();
        assert_eq!(
            config.gateway(|_| None).unwrap_err().to_string(),
            "mount \"crm\": `client_id_env` names CRM_ID, which is not set; expected the client id in it"
        );
        let no_secret = config.gateway(|name| (name == "CRM_ID").then(|| "gateway".to_owned())).unwrap_err();
        assert_eq!(
            no_secret.to_string(),
            "mount \"crm\": `client_secret_env` names CRM_SECRET, which is not set; expected the client secret in it"
        );
        let empty =
            config.gateway(|name| crm_env(name).map(|value| if name == "CRM_SECRET" { String::new() } else { value }));
        assert!(empty.unwrap_err().to_string().contains("CRM_SECRET, which is not set"));
    }

    #[test]
    fn garbage_client_credentials_are_refused_with_where_and_what() {
        let id_and_secret = "client_id_env = \"CRM_ID\"\nclient_secret_env = \"CRM_SECRET\"\n";
        let with_url = |url: &str| error(&format!("{CRM}token_url = {url:?}\n{id_and_secret}"));
        assert_eq!(
            error(&format!("{STDIO}{GRANT}")),
            "mount \"billing\": `token_url` is set on a stdio upstream; it applies to `url` only"
        );
        assert!(error(&format!("{STDIO}scope = \"a\"\n")).contains("`scope` is set on a stdio upstream"));
        assert!(
            error(&format!("{STDIO}client_secret_env = \"S\"\n")).contains("`client_secret_env` is set on a stdio")
        );
        assert_eq!(
            error(&format!("{CRM}token_url = \"https://id.example.com/t\"\n")),
            "mount \"crm\": `token_url` is set without `client_id_env` and `client_secret_env`; expected all three \
             of `token_url`, `client_id_env` and `client_secret_env`, or none"
        );
        assert!(
            error(&format!("{CRM}{id_and_secret}"))
                .contains("`client_id_env` and `client_secret_env` are set without `token_url`")
        );
        assert!(
            error(&format!("{CRM}client_secret_env = \"S\"\n"))
                .contains("`client_secret_env` is set without `token_url` and `client_id_env`")
        );
        assert!(error(&format!("{CRM}scope = \"crm:read\"\n")).contains("`scope` is set without `token_url`"));
        assert_eq!(
            error(&format!("{CRM}{GRANT}token_env = \"CRM_TOKEN\"\n")),
            "mount \"crm\": both `token_env` and `token_url` are set; expected one: a fixed token, or one fetched with client credentials"
        );
        assert_eq!(
            with_url("http://id.example.com/token"),
            "mount \"crm\" token_url: \"http://id.example.com/token\" is plain http to a host other than the loopback, \
             which would send the client secret in the clear; expected https (http only to localhost, 127.0.0.1 or [::1])"
        );
        assert!(with_url("http://127.0.0.2/token").contains("plain http"));
        assert!(with_url("http://localhost.example.com/token").contains("plain http"));
        assert!(with_url("/oauth/token").contains("is not an absolute URL (relative URL without a base)"));
        assert!(with_url("").contains("is not an absolute URL"));
        assert!(with_url("id.example.com/token").contains("is not an absolute URL"));
        assert!(with_url("https://").contains("is not an absolute URL"));
        assert!(with_url("ftp://id.example.com/token").contains("is not an https URL"));
        assert!(with_url("javascript:alert(1)").contains("is not an https URL"));
        assert!(with_url("https://user:pw@id.example.com/token").contains("has credentials in it"));
        assert!(with_url("https://id.example.com/token#frag").contains("has a fragment"));
        assert!(with_url("https://id.exa mple.com/token").contains("is not an absolute URL"));
        let scope = |scope: &str| error(&format!("{CRM}{GRANT}scope = {scope:?}\n"));
        assert_eq!(
            scope("crm:read \"all\""),
            "mount \"crm\" scope: \"crm:read \\\"all\\\"\" has '\"', which no scope token may hold; expected \
             space-separated scope tokens of printable ASCII but `\"` and `\\`, like \"crm:read crm:write\""
        );
        assert!(scope("a\\b").contains("has '\\\\'"));
        assert!(scope("a\tb").contains("has '\\t'"));
        assert!(scope("a\nb").contains("has '\\n'"));
        assert!(scope("crm:lecture\u{e9}").contains("has '\u{e9}'"));
        assert!(scope("").contains("has no scope token"));
        assert!(scope("   ").contains("has no scope token"));
        assert!(error(&format!("{CRM}{GRANT}scope = 3\n")).contains("scope"));
        assert!(error(&format!("{CRM}{GRANT}client_id = \"inline\"\n")).contains("unknown field `client_id`"));
    }

    const SHOP: &str = "[[mount]]\nnamespace = \"shop\"\nopenapi = \"http://127.0.0.1:8000/openapi.json\"\n";

    #[test]
    fn an_openapi_mount_gets_its_headers_from_its_variables() {
        let text = format!(
            "{SHOP}base_url = \"http://127.0.0.1:8000/v2\"\ntoken_env = \"SHOP_TOKEN\"\nheaders_env = {{ \"X-API-Key\" = \"SHOP_KEY\" }}\nrate_limit = \"5/1\"\n"
        );
        let config = Config::parse(&text).unwrap();
        let env = |name: &str| match name {
            "SHOP_TOKEN" => Some("t0ken".to_owned()),
            "SHOP_KEY" => Some("k3y".to_owned()),
            _ => None,
        };
        let gateway = config.gateway(env).unwrap();
        let (_, upstream) = gateway.mounts().next().unwrap();
        let expected = Upstream::openapi("http://127.0.0.1:8000/openapi.json")
            .base_url("http://127.0.0.1:8000/v2")
            .token("t0ken")
            .header("X-API-Key", "k3y");
        assert_eq!(upstream, &expected);
        let shown = format!("{upstream:?}");
        assert!(!shown.contains("t0ken") && !shown.contains("k3y"), "Debug shows a secret: {shown}");
        let error = config.gateway(|name| (name == "SHOP_TOKEN").then(|| "t".to_owned())).unwrap_err().to_string();
        assert_eq!(
            error,
            "mount \"shop\": `headers_env` names SHOP_KEY, which is not set; expected the value of X-API-Key in it"
        );
        assert!(Config::parse(SHOP).is_ok());
        assert!(Config::parse("[[mount]]\nnamespace = \"s\"\nopenapi = \"specs/shop.json\"\n").is_ok());
    }

    #[test]
    fn garbage_openapi_mounts_are_refused_with_where_and_what() {
        assert_eq!(
            error(&format!("{SHOP}command = \"x\"\n")),
            "mount \"shop\": `command` and `openapi` are set; expected one"
        );
        assert!(error(&format!("{SHOP}url = \"http://h/mcp\"\n")).contains("`url` and `openapi` are set"));
        assert!(error("[[mount]]\nnamespace = \"s\"\nopenapi = \" \"\n").contains("`openapi` is empty"));
        assert!(error(&format!("{SHOP}args = [\"x\"]\n")).contains("`command` only"));
        assert!(error(&format!("{SHOP}{GRANT}")).contains("`token_url` is set on an `openapi` mount"));
        assert!(
            error(&format!("{SHOP}base_url = \"ftp://h\"\n")).contains("base_url: \"ftp://h\"; expected an http://")
        );
        assert!(error(&format!("{SHOP}base_url = \"/v2\"\n")).contains("expected an http://"));
        assert!(
            error(&format!("{SHOP}headers_env = {{ \"X Key\" = \"K\" }}\n")).contains("\"X Key\" is no header name")
        );
        assert!(error(&format!("{SHOP}headers_env = {{ \"\" = \"K\" }}\n")).contains("is no header name"));
        assert!(error(&format!("{SHOP}headers_env = 3\n")).contains("headers_env"));
        assert!(error(&format!("{SHOP}max_active = 0\n")).contains("at least 1"));
        assert_eq!(
            error(&format!("{STDIO}base_url = \"http://h\"\n")),
            "mount \"billing\": `base_url` is set without `openapi`; it applies to `openapi` only"
        );
        assert!(
            error(&format!("{CRM}headers_env = {{ A = \"B\" }}\n")).contains("`headers_env` is set without `openapi`")
        );
    }

    #[test]
    fn scope_tokens_are_those_of_rfc_6749() {
        assert_eq!(bad_scope_character("crm:read crm:write openid https://x.example/a"), None);
        assert_eq!(bad_scope_character("a\"b"), Some('"'));
        assert_eq!(bad_scope_character("a\\b"), Some('\\'));
        assert_eq!(bad_scope_character("a\tb"), Some('\t'));
        assert_eq!(bad_scope_character("naïve"), Some('ï'));
        assert_eq!(bad_scope_character("a\nb"), Some('\n'));
    }

    #[test]
    fn garbage_is_refused_with_where_and_what() {
        assert_eq!(error(""), "[[mount]]: none is set; expected at least one");
        assert!(error("\u{0}\u{1}garbage = = =").contains("TOML parse error"));
        assert!(error("[[mount]]\nnamespace = 3\ncommand = \"x\"\n").contains("namespace"));
        assert!(error(&format!("{STDIO}colour = \"red\"\n")).contains("unknown field `colour`"));
        assert!(error("verbose = true\n").contains("unknown field `verbose`"));
        assert!(error("[[mount]]\nnamespace = \"a.b\"\ncommand = \"x\"\n").contains("a dot"));
        assert!(error("[[mount]]\nnamespace = \"\"\ncommand = \"x\"\n").contains("not 1 to 64"));
        assert!(
            error("[[mount]]\nnamespace = \"a\"\ncommand = \"x\"\nurl = \"http://h\"\n")
                .contains("`command` and `url` are set; expected one")
        );
        assert!(error("[[mount]]\nnamespace = \"a\"\ncommand = \" \"\n").contains("`command` is empty"));
        assert!(error("[[mount]]\nnamespace = \"a\"\nurl = \"ftp://h\"\n").contains("http:// or https://"));
        assert!(error("[[mount]]\nnamespace = \"a\"\nurl = \"http://h\"\nargs = [\"x\"]\n").contains("`command` only"));
        assert!(error("[[mount]]\nnamespace = \"a\"\ncommand = \"x\"\ntoken_env = \"T\"\n").contains("`url` only"));
        assert!(error(&format!("{STDIO}rate_limit = \"ten\"\n")).contains("expected N/SECS"));
        assert!(error(&format!("{STDIO}rate_limit = \"0/60\"\n")).contains("expected N/SECS"));
        assert!(error(&format!("{STDIO}rate_limit_per = \"session\"\n")).contains("without `rate_limit`"));
        assert!(error(&format!("{STDIO}rate_limit = \"1/1\"\nrate_limit_per = \"moon\"\n")).contains("\"moon\""));
        assert!(error(&format!("{STDIO}max_active = 0\n")).contains("at least 1"));
        assert!(error(&format!("{STDIO}max_queue = 3\n")).contains("without `max_active`"));
        assert!(error(&format!("{STDIO}max_active = -1\n")).contains("max_active"));
        assert!(error(&format!("{STDIO}timeout_ms = 0\n")).contains("timeout_ms"));
        assert!(error(&format!("{STDIO}max_tools = 0\n")).contains("max_tools"));
        assert!(error(&format!("{STDIO}max_tools = -3\n")).contains("max_tools"));
        assert!(error(&format!("{STDIO}max_tools = 10001\n")).contains("1 to 10000"));
        assert!(error(&format!("{STDIO}assert_formats = \"yes\"\n")).contains("assert_formats"));
        assert!(error(&format!("{STDIO}{STDIO}")).contains("mounted twice"));
        assert!(error(&format!("connect_timeout_ms = 0\n{STDIO}")).contains("connect_timeout_ms"));
        assert!(error(&format!("keepalive_ms = 5\n{STDIO}")).contains("at least 100"));
        assert!(error(&format!("[reconnect]\nmax_ms = 60000\n{STDIO}")).contains("1 to 30000"));
        assert!(error(&format!("[reconnect]\njitter = 2.0\n{STDIO}")).contains("from 0 to 1"));
        assert!(error(&format!("[reconnect]\ninitial_ms = 0\n{STDIO}")).contains("initial_ms"));
    }
}
