//! Who wants to hear that a resource changed: sessions that sent `resources/subscribe`
//! (protocol versions before 2026-07-28) and open `subscriptions/listen` requests (2026-07-28
//! and later). Both are told with `notifications/resources/updated`; listeners that asked for
//! list changes hear those too (see `Peers::list_changed`).
//!
//! Everything held is indexed by URI, so a change is told by one lookup, and by session, so
//! a session's end frees what it held at once. What a session, a listen and the whole server
//! may hold is bounded by [`SubscriptionLimits`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

mod limits;
mod missed;

pub use limits::SubscriptionLimits;
pub(crate) use missed::{Change, ListChanged};

use crate::lock::locked;

/// The subscribers of one server.
#[derive(Default)]
pub(crate) struct Subscriptions {
    limits: SubscriptionLimits,
    state: Mutex<State>,
    /// The next number of a listen request or of a connection.
    next: AtomicU64,
    /// Where changes go instead when replicas share sessions: to every replica, each telling
    /// its own subscribers.
    #[cfg(feature = "http")]
    relay: std::sync::OnceLock<RelayUpdates>,
}

/// Tells every replica that a URI changed.
#[cfg(feature = "http")]
pub(crate) type RelayUpdates = Box<dyn Fn(&str) + Send + Sync>;

/// What the subscribers hold, under one lock.
#[derive(Default)]
struct State {
    /// Who hears of each URI.
    by_uri: HashMap<Arc<str>, Hearers>,
    /// The sessions holding a subscription or an open listen, in order of their connection.
    sessions: BTreeMap<SessionKey, Session>,
    /// The open listen requests, by their number.
    listens: HashMap<u64, Listen>,
    /// URIs held in all: one per subscription of a session, one per URI of an open listen.
    held: usize,
    /// The changes told lately, for listens acknowledged before they were held.
    recent: missed::Recent,
}

/// The sessions subscribed to one URI and the listens that accepted it.
#[derive(Default)]
struct Hearers {
    sessions: HashSet<SessionKey>,
    listens: HashSet<u64>,
}

impl Hearers {
    fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.listens.is_empty()
    }
}

/// One session's subscriptions and open listens.
#[derive(Default)]
struct Session {
    /// The client to tell, once the session subscribed.
    peer: Option<Peer<RoleServer>>,
    subscribed: HashSet<Arc<str>>,
    listens: HashSet<u64>,
    /// The URIs its open listens hold together.
    listening: usize,
}

impl Session {
    fn held(&self) -> usize {
        self.subscribed.len() + self.listening
    }

    fn is_empty(&self) -> bool {
        self.subscribed.is_empty() && self.listens.is_empty()
    }
}

/// An open listen request: whose it is, where it is told, and the URIs it accepted.
struct Listen {
    session: SessionKey,
    sink: SubscriptionSink,
    uris: Vec<Arc<str>>,
}

/// A session: the connection the transport issued (a stateful HTTP session, a stdio
/// connection, a stateless HTTP request), and the client in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SessionKey {
    connection: u64,
    /// The address of the client's handshake, shared by every handle of its peer; 0 for a
    /// client that never initialized (2026-07-28 and later).
    peer: usize,
}

/// Why a subscription was not taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The session would hold more than it may.
    #[error(
        "This session holds {held} resource subscriptions and asked for {asked} more; a session may hold at most \
         {limit}, its subscriptions and open listens together. Unsubscribe (resources/unsubscribe) or end listens \
         you no longer need, or read the resources when you need them fresh."
    )]
    Session { held: usize, asked: usize, limit: usize },
    /// The server would hold more than it may.
    #[error(
        "This server holds its maximum of {limit} resource subscriptions across all sessions, and this request \
         asked for {asked} more. Read the resources when you need them fresh, or subscribe again later."
    )]
    Server { asked: usize, limit: usize },
}

impl From<Refused> for rmcp::ErrorData {
    fn from(refused: Refused) -> rmcp::ErrorData {
        let message = refused.to_string();
        match refused {
            Refused::Session { held, asked, limit } => rmcp::ErrorData::invalid_params(
                message,
                Some(serde_json::json!({"held": held, "asked": asked, "limit": limit})),
            ),
            // JSON-RPC reserves -32000 to -32099 for the server's own errors: the request is
            // fine, the server is full.
            Refused::Server { asked, limit } => rmcp::ErrorData::new(
                rmcp::model::ErrorCode(-32000),
                message,
                Some(serde_json::json!({"asked": asked, "limit": limit})),
            ),
        }
    }
}

/// One connection a server serves: the value handed to rmcp, which rmcp drops when the
/// connection ends. Dropped, it frees whatever its sessions still hold.
pub(crate) struct Connection {
    id: u64,
    subscriptions: Arc<Subscriptions>,
    /// Whether a session of this connection ever held anything (only then is there anything
    /// to free).
    used: AtomicBool,
    /// The mark of the earliest listen accepted on this connection and not held yet
    /// (`u64::MAX`: none).
    listen_mark: AtomicU64,
}

impl Connection {
    /// The session of `peer` in this connection.
    pub(crate) fn session(&self, peer: &Peer<RoleServer>) -> SessionKey {
        self.used.store(true, Ordering::Relaxed);
        let peer = peer.peer_info().map_or(0, |info| Arc::as_ptr(&info).addr());
        SessionKey { connection: self.id, peer }
    }

    /// Notes how many changes were told before a listen of this connection is acknowledged.
    pub(crate) fn listen_accepted(&self) {
        self.listen_mark.fetch_min(self.subscriptions.told(), Ordering::Relaxed);
    }

    /// The mark to hold a listen of this connection with (see [`Subscriptions::listen`]): the
    /// one noted when it was accepted, or now when none was. Of two listens accepted at once,
    /// the first held takes the earlier mark, and hears at worst a change twice.
    pub(crate) fn listen_mark(&self) -> u64 {
        let accepted = self.listen_mark.swap(u64::MAX, Ordering::Relaxed);
        accepted.min(self.subscriptions.told())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if *self.used.get_mut() {
            self.subscriptions.connection_ended(self.id);
        }
    }
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = locked(&self.state);
        f.debug_struct("Subscriptions")
            .field("sessions", &state.sessions.len())
            .field("listens", &state.listens.len())
            .field("held", &state.held)
            .finish()
    }
}

impl Subscriptions {
    /// No subscriber yet, and these bounds on what they may hold.
    pub(crate) fn new(limits: SubscriptionLimits) -> Subscriptions {
        Subscriptions { limits, ..Subscriptions::default() }
    }

    /// The bounds on what subscribers may hold.
    pub(crate) fn limits(&self) -> SubscriptionLimits {
        self.limits
    }

    /// A new connection, whose sessions' subscriptions end with it.
    pub(crate) fn connection(self: &Arc<Self>) -> Connection {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        Connection {
            id,
            subscriptions: Arc::clone(self),
            used: AtomicBool::new(false),
            listen_mark: AtomicU64::new(u64::MAX),
        }
    }

    /// How many URIs are held, every session and listen together.
    pub(crate) fn held(&self) -> usize {
        locked(&self.state).held
    }

    /// `session` (of `peer`) wants to hear about `uri`; subscribing twice is subscribing once.
    pub(crate) fn subscribe(&self, session: SessionKey, uri: &str, peer: Peer<RoleServer>) -> Result<(), Refused> {
        let mut state = locked(&self.state);
        let state = &mut *state;
        let known = state.sessions.get(&session);
        if known.is_some_and(|known| known.subscribed.contains(uri)) {
            return Ok(());
        }
        self.room(state, known.map_or(0, Session::held), 1)?;
        let uri = state.shared(uri);
        let entry = state.sessions.entry(session).or_default();
        entry.peer = Some(peer);
        entry.subscribed.insert(Arc::clone(&uri));
        state.by_uri.entry(uri).or_default().sessions.insert(session);
        state.held += 1;
        Ok(())
    }

    /// `session` no longer wants to hear about `uri` (none is no error).
    pub(crate) fn unsubscribe(&self, session: SessionKey, uri: &str) {
        let mut state = locked(&self.state);
        let Some(known) = state.sessions.get_mut(&session) else { return };
        if !known.subscribed.remove(uri) {
            return;
        }
        let empty = known.is_empty();
        state.held -= 1;
        state.forget_session_of(uri, session);
        if empty {
            state.sessions.remove(&session);
        }
    }

    /// How many changes listens were told of so far: the mark to pass to
    /// [`listen`](Self::listen), taken before the listen is acknowledged.
    pub(crate) fn told(&self) -> u64 {
        locked(&self.state).recent.told()
    }

    /// Keeps an open `subscriptions/listen` request of `session`, with the URIs it accepted;
    /// returns the number to forget it by, and the changes it accepted among those told since
    /// the mark `since` (see [`told`](Self::told)), which it has not heard of.
    pub(crate) fn listen(
        &self,
        session: SessionKey,
        sink: SubscriptionSink,
        since: u64,
    ) -> Result<(u64, Vec<Change>), Refused> {
        let mut state = locked(&self.state);
        let state = &mut *state;
        let mut seen = HashSet::new();
        let accepted = sink.accepted().resource_subscriptions.iter().flatten();
        let uris: Vec<&str> = accepted.map(String::as_str).filter(|uri| seen.insert(*uri)).collect();
        self.room(state, state.sessions.get(&session).map_or(0, Session::held), uris.len())?;
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let uris: Vec<Arc<str>> = uris.into_iter().map(|uri| state.shared(uri)).collect();
        for uri in &uris {
            state.by_uri.entry(Arc::clone(uri)).or_default().listens.insert(number);
        }
        let entry = state.sessions.entry(session).or_default();
        entry.listens.insert(number);
        entry.listening += uris.len();
        state.held += uris.len();
        let missed = state.recent.since(since, sink.accepted());
        state.listens.insert(number, Listen { session, sink, uris });
        Ok((number, missed))
    }

    /// Forgets a `subscriptions/listen` request that ended.
    pub(crate) fn stop_listening(&self, number: u64) {
        let mut state = locked(&self.state);
        state.forget_listen(number);
        state.shrink();
    }

    /// The open `subscriptions/listen` requests to tell that the listing `which` changed.
    pub(crate) fn listening_for(&self, which: ListChanged) -> Vec<SubscriptionSink> {
        let mut state = locked(&self.state);
        state.recent.record(Change::Listing(which));
        let wanted = |listen: &&Listen| which.accepted_by(listen.sink.accepted());
        state.listens.values().filter(wanted).map(|listen| listen.sink.clone()).collect()
    }

    /// The open `subscriptions/listen` requests that accepted `uri`.
    #[cfg(feature = "http")]
    #[cfg_attr(not(feature = "redis"), allow(dead_code, reason = "read by the relay of the Redis session store"))]
    pub(crate) fn listeners_of(&self, uri: &str) -> Vec<SubscriptionSink> {
        let mut state = locked(&self.state);
        let shared = state.shared(uri);
        state.recent.record(Change::Updated(shared));
        let Some(hearers) = state.by_uri.get(uri) else { return Vec::new() };
        hearers.listens.iter().filter_map(|number| Some(state.listens.get(number)?.sink.clone())).collect()
    }

    /// Sends changes to every replica through `relay` from now on (the first one set stays).
    #[cfg(feature = "http")]
    #[cfg_attr(not(feature = "redis"), allow(dead_code, reason = "read by the relay of the Redis session store"))]
    pub(crate) fn relay_updates(&self, relay: RelayUpdates) {
        let _ = self.relay.set(relay);
    }

    /// Sends `notifications/resources/updated` for `uri` to every subscriber of it, without
    /// waiting for any of them (through every replica, when they share sessions).
    pub(crate) fn updated(&self, uri: &str) {
        #[cfg(feature = "http")]
        if let Some(relay) = self.relay.get() {
            return relay(uri);
        }
        let (peers, sinks) = {
            let mut state = locked(&self.state);
            let shared = state.shared(uri);
            state.recent.record(Change::Updated(shared));
            let Some(hearers) = state.by_uri.get(uri) else { return };
            let mut peers = Vec::with_capacity(hearers.sessions.len());
            let mut gone = Vec::new();
            for key in &hearers.sessions {
                match state.sessions.get(key).and_then(|session| session.peer.as_ref()) {
                    Some(peer) if peer.is_transport_closed() => gone.push(*key),
                    Some(peer) => peers.push(peer.clone()),
                    None => {}
                }
            }
            let sinks: Vec<SubscriptionSink> =
                hearers.listens.iter().filter_map(|number| Some(state.listens.get(number)?.sink.clone())).collect();
            // A session whose client is gone, on a connection that outlives it.
            for key in gone {
                state.forget_session(key);
            }
            (peers, sinks)
        };
        if peers.is_empty() && sinks.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(uri, "a resource changed outside a Tokio runtime: its subscribers were not told");
            return;
        };
        let uri = uri.to_owned();
        runtime.spawn(async move {
            for peer in peers {
                if let Err(error) =
                    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone())).await
                {
                    tracing::debug!(uri, "resources/updated not delivered: {error}");
                }
            }
            for sink in sinks {
                if let Err(error) = sink.notify_resource_updated(uri.clone()).await {
                    tracing::debug!(uri, "resources/updated not delivered to a listener: {error}");
                }
            }
        });
    }

    /// Frees what the sessions of connection `id` hold.
    fn connection_ended(&self, id: u64) {
        let mut state = locked(&self.state);
        let first = SessionKey { connection: id, peer: 0 };
        let last = SessionKey { connection: id, peer: usize::MAX };
        let keys: Vec<SessionKey> = state.sessions.range(first..=last).map(|(key, _)| *key).collect();
        for key in keys {
            state.forget_session(key);
        }
        state.shrink();
    }

    /// Whether a session holding `held` URIs may take `asked` more.
    fn room(&self, state: &State, held: usize, asked: usize) -> Result<(), Refused> {
        let limits = &self.limits;
        if held + asked > limits.uris_per_session() {
            return Err(Refused::Session { held, asked, limit: limits.uris_per_session() });
        }
        if state.held + asked > limits.uris_in_total() {
            return Err(Refused::Server { asked, limit: limits.uris_in_total() });
        }
        Ok(())
    }
}

impl State {
    /// `uri` as held already, else a new copy: one allocation per URI however many hear of it.
    fn shared(&self, uri: &str) -> Arc<str> {
        self.by_uri.get_key_value(uri).map_or_else(|| Arc::from(uri), |(known, _)| Arc::clone(known))
    }

    /// Removes `session` from those who hear of `uri`.
    fn forget_session_of(&mut self, uri: &str, session: SessionKey) {
        if let Some(hearers) = self.by_uri.get_mut(uri) {
            hearers.sessions.remove(&session);
            if hearers.is_empty() {
                self.by_uri.remove(uri);
            }
        }
    }

    /// Forgets a session with its subscriptions and its listens.
    fn forget_session(&mut self, key: SessionKey) {
        let Some(session) = self.sessions.remove(&key) else { return };
        self.held -= session.subscribed.len();
        for uri in &session.subscribed {
            self.forget_session_of(uri, key);
        }
        for number in session.listens {
            self.forget_listen(number);
        }
    }

    /// Forgets a listen request and the URIs it held.
    fn forget_listen(&mut self, number: u64) {
        let Some(listen) = self.listens.remove(&number) else { return };
        self.held -= listen.uris.len();
        for uri in &listen.uris {
            if let Some(hearers) = self.by_uri.get_mut(uri) {
                hearers.listens.remove(&number);
                if hearers.is_empty() {
                    self.by_uri.remove(uri);
                }
            }
        }
        if let Some(session) = self.sessions.get_mut(&listen.session) {
            session.listens.remove(&number);
            session.listening -= listen.uris.len();
            if session.is_empty() {
                self.sessions.remove(&listen.session);
            }
        }
    }

    /// Gives back the room of the busiest moment once mostly empty.
    fn shrink(&mut self) {
        let shrink = |len: usize, capacity: usize| capacity > 64 && len < capacity / 8;
        if shrink(self.by_uri.len(), self.by_uri.capacity()) {
            self.by_uri.shrink_to(self.by_uri.len() * 2);
        }
        if shrink(self.listens.len(), self.listens.capacity()) {
            self.listens.shrink_to(self.listens.len() * 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::FusionServer;

    /// The server's handle on a client connected over a pipe, and the client.
    async fn connected() -> (Peer<RoleServer>, impl Sized) {
        use rmcp::ServiceExt as _;
        let server = FusionServer::builder::<()>("s", "1").build(()).unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let (serving, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
        let serving = serving.unwrap();
        (serving.peer().clone(), (serving, client.unwrap()))
    }

    #[tokio::test]
    async fn fifty_thousand_subscriptions_are_told_by_lookup_and_freed_with_their_connections() {
        let limits = SubscriptionLimits::default().per_session(1_000).total(50_000);
        let subscriptions = Arc::new(Subscriptions::new(limits));
        let (peer, _client) = connected().await;
        let started = Instant::now();
        let connections: Vec<Connection> = (0..50).map(|_| subscriptions.connection()).collect();
        for (n, connection) in connections.iter().enumerate() {
            let session = connection.session(&peer);
            for i in 0..1_000 {
                subscriptions.subscribe(session, &format!("x://{n}/{i}"), peer.clone()).unwrap();
            }
        }
        assert_eq!(subscriptions.held(), 50_000);
        assert!(matches!(
            subscriptions.subscribe(connections[0].session(&peer), "x://0/new", peer.clone()),
            Err(Refused::Session { held: 1_000, asked: 1, limit: 1_000 })
        ));
        let other = subscriptions.connection();
        assert!(matches!(
            subscriptions.subscribe(other.session(&peer), "x://new", peer.clone()),
            Err(Refused::Server { asked: 1, limit: 50_000 })
        ));
        for i in 0..50_000 {
            subscriptions.updated(&format!("x://none/{i}"));
        }
        subscriptions.updated("x://7/7");
        // Pairwise, this is some 2.5 billion comparisons; by lookup, it takes well under a second.
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{took:?}");
        subscriptions.unsubscribe(connections[3].session(&peer), "x://3/3");
        assert_eq!(subscriptions.held(), 49_999);
        drop(connections);
        assert_eq!(subscriptions.held(), 0);
        let state = locked(&subscriptions.state);
        assert!(state.by_uri.is_empty() && state.sessions.is_empty(), "{subscriptions:?}");
        assert!(state.by_uri.capacity() < 1_000, "the room of the busiest moment is given back");
    }
}
