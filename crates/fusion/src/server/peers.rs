//! The connected clients, told when the tools or the resources change.

use std::sync::Mutex;

use rmcp::model::SubscriptionFilter;
use rmcp::service::{ServiceError, SubscriptionSendError, SubscriptionSink};
use rmcp::{Peer, RoleServer};

use super::Subscriptions;

/// The sessions that finished `initialize`, while their transport is open.
#[derive(Default)]
pub(super) struct Peers(Mutex<Vec<Peer<RoleServer>>>);

/// A listing that changed, so the `list_changed` notification that tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListChanged {
    /// `tools/list`: `notifications/tools/list_changed`.
    Tools,
    /// `resources/list` or `resources/templates/list`: `notifications/resources/list_changed`.
    Resources,
}

impl ListChanged {
    fn method(self) -> &'static str {
        match self {
            ListChanged::Tools => "notifications/tools/list_changed",
            ListChanged::Resources => "notifications/resources/list_changed",
        }
    }

    /// Whether a `subscriptions/listen` request was accepted with this notification.
    fn accepted_by(self, filter: &SubscriptionFilter) -> bool {
        let accepted = match self {
            ListChanged::Tools => filter.tools_list_changed,
            ListChanged::Resources => filter.resources_list_changed,
        };
        accepted == Some(true)
    }

    async fn tell_session(self, peer: &Peer<RoleServer>) -> Result<(), ServiceError> {
        match self {
            ListChanged::Tools => peer.notify_tool_list_changed().await,
            ListChanged::Resources => peer.notify_resource_list_changed().await,
        }
    }

    async fn tell_listener(self, sink: &SubscriptionSink) -> Result<(), SubscriptionSendError> {
        match self {
            ListChanged::Tools => sink.notify_tool_list_changed().await,
            ListChanged::Resources => sink.notify_resource_list_changed().await,
        }
    }
}

impl Peers {
    /// Remembers a session that just initialized (and forgets those that have closed).
    pub(super) fn add(&self, peer: Peer<RoleServer>) {
        let mut peers = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        peers.retain(|known| !known.is_transport_closed());
        peers.push(peer);
    }

    /// Sends the notification of `which` to every open session and to every
    /// `subscriptions/listen` request that asked for it, without waiting for any of them.
    pub(super) fn list_changed(&self, which: ListChanged, subscriptions: &Subscriptions) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            peers.retain(|known| !known.is_transport_closed());
            peers.clone()
        };
        // Clients of 2026-07-28 never initialize: a listen request is their only way to hear.
        let listeners = subscriptions.listening_for(|accepted| which.accepted_by(accepted));
        if peers.is_empty() && listeners.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                sessions = peers.len() + listeners.len(),
                notification = which.method(),
                "a listing changed outside a Tokio runtime: clients were not told"
            );
            return;
        };
        runtime.spawn(async move {
            for peer in peers {
                if let Err(error) = which.tell_session(&peer).await {
                    tracing::debug!("{} not delivered: {error}", which.method());
                }
            }
            for sink in listeners {
                if let Err(error) = which.tell_listener(&sink).await {
                    tracing::debug!("{} not delivered to a listener: {error}", which.method());
                }
            }
        });
    }
}
