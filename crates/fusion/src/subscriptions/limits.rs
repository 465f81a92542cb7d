//! How many resource subscriptions clients may hold, and how long a URI they may hold one for.

/// Bounds on what `resources/subscribe` and `subscriptions/listen` may hold: URIs per listen
/// request, per session (a stateful HTTP session, a stdio connection; its subscriptions and
/// its open listens together), across the server, and the length of one URI. A request past
/// a bound is refused with a JSON-RPC error that says what was sent, the bound, and what to do.
///
/// The defaults:
///
/// - 100 URIs per listen: a client listens for the resources its user is looking at, a
///   handful; and rmcp matches the accepted URIs against the requested ones pairwise, which
///   only a short list keeps cheap (30,000 URIs took it seconds).
/// - 1,000 URIs per session: ten full listens, or as many subscriptions.
/// - 20,000 URIs across the server: 20,000 subscriptions of URIs about 50 bytes long took
///   10.4 MB of the demo server's memory; URIs of the longest length add 40 MB to that.
/// - 2,048 bytes per URI: the longest URL most software accepts.
///
/// ```
/// use mcp_fusion::FusionServer;
/// use mcp_fusion::resource::SubscriptionLimits;
///
/// let limits = SubscriptionLimits::default().per_session(200);
/// let server = FusionServer::builder::<()>("billing", "1.0.0").subscription_limits(limits).build(()).unwrap();
/// assert_eq!(server.subscription_limits().uris_per_session(), 200);
/// assert_eq!(server.subscription_limits().uris_per_listen(), 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionLimits {
    per_listen: usize,
    per_session: usize,
    total: usize,
    max_uri_bytes: usize,
}

impl Default for SubscriptionLimits {
    fn default() -> SubscriptionLimits {
        SubscriptionLimits { per_listen: 100, per_session: 1_000, total: 20_000, max_uri_bytes: 2_048 }
    }
}

impl SubscriptionLimits {
    /// The most URIs one `subscriptions/listen` request may ask for (default 100; at least 1).
    pub fn per_listen(mut self, uris: usize) -> SubscriptionLimits {
        self.per_listen = uris.max(1);
        self
    }

    /// The most URIs one session may hold, its subscriptions and its open listens together
    /// (default 1,000; at least 1).
    pub fn per_session(mut self, uris: usize) -> SubscriptionLimits {
        self.per_session = uris.max(1);
        self
    }

    /// The most URIs held across the server, every session and listen together (default
    /// 20,000; at least 1).
    pub fn total(mut self, uris: usize) -> SubscriptionLimits {
        self.total = uris.max(1);
        self
    }

    /// The longest URI a subscription may hold, in bytes (default 2,048; at least 1).
    pub fn max_uri_bytes(mut self, bytes: usize) -> SubscriptionLimits {
        self.max_uri_bytes = bytes.max(1);
        self
    }

    /// The most URIs one listen request may ask for.
    pub fn uris_per_listen(&self) -> usize {
        self.per_listen
    }

    /// The most URIs one session may hold.
    pub fn uris_per_session(&self) -> usize {
        self.per_session
    }

    /// The most URIs held across the server.
    pub fn uris_in_total(&self) -> usize {
        self.total
    }

    /// The longest URI a subscription may hold, in bytes.
    pub fn uri_bytes(&self) -> usize {
        self.max_uri_bytes
    }

    /// The refusal of a listen request that asks for `found` URIs, more than one may.
    pub(crate) fn too_many_for_one_listen(&self, found: usize) -> String {
        format!(
            "Invalid params for subscriptions/listen: resourceSubscriptions holds {found} URIs, and this server \
             accepts at most {} per listen request (and {} per session). Listen for the resources you need now, \
             at most {} of them; read the others when you need them.",
            self.per_listen, self.per_session, self.per_listen
        )
    }
}
