//! Replicas of one server behind a load balancer: what one of them must tell clients whose
//! sessions may live on another goes through a [`Relay`], and what the relay brings from any
//! replica (this one included) is told here to the sessions and listeners this process holds.
//!
//! A session of a replicated server may be held by several replicas at once (each restores it
//! when a request naming it first arrives there), and its client listens on one of them: a
//! notification sent through every holder reaches the client once, from the replica whose
//! stream it reads; the others have no stream to send it on and drop it.

#![cfg_attr(
    not(feature = "redis"),
    allow(
        dead_code,
        reason = "only the Redis session store relays; without it the server asks for a relay and finds none"
    )
)]
#![allow(deprecated, reason = "a session's logging level (deprecated by SEP-2577) is shared with the other replicas")]

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{LoggingLevel, ResourceUpdatedNotificationParam, ServerNotification};

use super::FusionServer;
pub(super) use super::peers::ListChanged;

/// Carries what one replica tells to every replica, and keeps what a session set in a store
/// they share. Implemented by the transport that shares sessions (the HTTP transport with a
/// Redis session store).
pub(crate) trait Relay: Send + Sync + 'static {
    /// Tells every replica that `uri` changed, with the sessions subscribed to it.
    fn resource_updated(&self, uri: &str);
    /// Tells every replica that a listing changed.
    fn list_changed(&self, which: ListChanged);
    /// Tells every replica holding `session` to send it `notification`.
    fn to_session(&self, session: &str, notification: &ServerNotification);
    /// Keeps that `session` subscribed to `uri`; `Err` with the number it holds when that
    /// would be more than `limit`.
    fn subscribe(&self, session: &str, uri: &str, limit: usize) -> BoxFuture<'static, Result<(), usize>>;
    /// Forgets that `session` subscribed to `uri`.
    fn unsubscribe(&self, session: &str, uri: &str) -> BoxFuture<'static, ()>;
    /// Keeps the logging level `session` set, and tells the replicas holding it.
    fn set_level(&self, session: &str, level: LoggingLevel) -> BoxFuture<'static, ()>;
    /// The logging level `session` set, through whichever replica.
    fn level_of(&self, session: &str) -> BoxFuture<'static, Option<LoggingLevel>>;
}

/// What the relay brings from a replica.
#[derive(Debug, Clone)]
pub(crate) enum Relayed {
    /// `uri` changed; `sessions` are subscribed to it.
    Updated { uri: String, sessions: Vec<String> },
    /// A listing changed.
    ListChanged(ListChanged),
    /// A notification for one session.
    ToSession { session: String, notification: Box<ServerNotification> },
    /// A session set its logging level.
    Level { session: String, level: LoggingLevel },
}

impl FusionServer {
    /// Sends what this server tells clients of other replicas through `relay` from now on.
    /// The first relay set stays.
    pub(crate) fn relay_through(&self, relay: Arc<dyn Relay>) {
        let updates = Arc::clone(&relay);
        if self.inner.relay.set(relay).is_err() {
            tracing::warn!("this server already relays through another store: the first one stays");
            return;
        }
        self.inner.settings.subscriptions.relay_updates(Box::new(move |uri| updates.resource_updated(uri)));
    }

    pub(super) fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.inner.relay.get()
    }

    /// Tells the sessions and listeners this process holds what `relayed` says.
    pub(crate) fn told(&self, relayed: Relayed) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        match relayed {
            Relayed::ListChanged(which) => self.inner.peers.list_changed(which, &self.inner.settings.subscriptions),
            Relayed::Level { session, level } => {
                if let Some(peer) = self.inner.peers.issued(&session) {
                    self.inner.settings.log_levels.set(peer, level);
                }
            }
            Relayed::ToSession { session, notification } => {
                let Some(peer) = self.inner.peers.issued(&session) else { return };
                runtime.spawn(async move {
                    if let Err(error) = peer.send_notification(*notification).await {
                        tracing::debug!(session, "a relayed notification was not delivered: {error}");
                    }
                });
            }
            Relayed::Updated { uri, sessions } => {
                let peers: Vec<_> = sessions.iter().filter_map(|session| self.inner.peers.issued(session)).collect();
                let listeners = self.inner.settings.subscriptions.listeners_of(&uri);
                if peers.is_empty() && listeners.is_empty() {
                    return;
                }
                runtime.spawn(async move {
                    for peer in peers {
                        let updated = ResourceUpdatedNotificationParam::new(uri.clone());
                        if let Err(error) = peer.notify_resource_updated(updated).await {
                            tracing::debug!(uri, "resources/updated not delivered: {error}");
                        }
                    }
                    for sink in listeners {
                        if let Err(error) = sink.notify_resource_updated(uri.clone()).await {
                            tracing::debug!(uri, "resources/updated not delivered to a listener: {error}");
                        }
                    }
                });
            }
        }
    }
}
