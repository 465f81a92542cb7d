//! Who wants to hear that a resource changed: sessions that sent `resources/subscribe`
//! (protocol versions before 2026-07-28) and open `subscriptions/listen` requests (2026-07-28
//! and later). Both are told with `notifications/resources/updated`; listeners that asked for
//! list changes hear those too (see `Peers::list_changed`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

/// The subscribers of one server.
#[derive(Default)]
pub(crate) struct Subscriptions {
    /// `(uri, session)` pairs of `resources/subscribe`.
    subscribed: Mutex<Vec<(String, Peer<RoleServer>)>>,
    /// Open `subscriptions/listen` requests, each under a number of its own.
    listening: Mutex<Vec<(u64, SubscriptionSink)>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions")
            .field("subscribed", &locked(&self.subscribed).len())
            .field("listening", &locked(&self.listening).len())
            .finish()
    }
}

pub(crate) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether two handles are the same client connection: clones of one peer share the
/// handshake's information, set once at `initialize`.
pub(crate) fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

impl Subscriptions {
    /// `peer` wants to hear about `uri`; subscribing twice is subscribing once.
    pub(crate) fn subscribe(&self, uri: &str, peer: Peer<RoleServer>) {
        let mut subscribed = locked(&self.subscribed);
        subscribed.retain(|(_, known)| !known.is_transport_closed());
        if !subscribed.iter().any(|(known_uri, known)| known_uri == uri && same_session(known, &peer)) {
            subscribed.push((uri.to_owned(), peer));
        }
    }

    /// `peer` no longer wants to hear about `uri`.
    pub(crate) fn unsubscribe(&self, uri: &str, peer: &Peer<RoleServer>) {
        locked(&self.subscribed).retain(|(known_uri, known)| !(known_uri == uri && same_session(known, peer)));
    }

    /// Keeps an open `subscriptions/listen` request; returns the number to forget it by.
    pub(crate) fn listen(&self, sink: SubscriptionSink) -> u64 {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        locked(&self.listening).push((number, sink));
        number
    }

    /// Forgets a `subscriptions/listen` request that ended.
    pub(crate) fn stop_listening(&self, number: u64) {
        locked(&self.listening).retain(|(known, _)| *known != number);
    }

    /// The open `subscriptions/listen` requests whose accepted filter `wants`.
    pub(crate) fn listening_for(&self, wants: impl Fn(&SubscriptionFilter) -> bool) -> Vec<SubscriptionSink> {
        locked(&self.listening)
            .iter()
            .filter(|(_, sink)| wants(sink.accepted()))
            .map(|(_, sink)| sink.clone())
            .collect()
    }

    /// Sends `notifications/resources/updated` for `uri` to every subscriber of it, without
    /// waiting for any of them.
    pub(crate) fn updated(&self, uri: &str) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut subscribed = locked(&self.subscribed);
            subscribed.retain(|(_, peer)| !peer.is_transport_closed());
            subscribed.iter().filter(|(known, _)| known == uri).map(|(_, peer)| peer.clone()).collect()
        };
        let sinks = self.listening_for(|accepted| {
            accepted.resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|u| u == uri))
        });
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
}
