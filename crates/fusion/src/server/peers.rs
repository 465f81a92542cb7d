//! The connected clients, told when the tools or the resources change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::service::ServiceError;
use rmcp::{Peer, RoleServer};

use super::Subscriptions;
use crate::session::same_session;
pub(crate) use crate::subscriptions::ListChanged;

/// The sessions that finished `initialize`, while their transport is open, and those of them
/// a transport issued an id for, by that id.
#[derive(Default)]
pub(super) struct Peers(Mutex<Open>);

#[derive(Default)]
struct Open {
    all: Vec<Peer<RoleServer>>,
    issued: HashMap<Arc<str>, Peer<RoleServer>>,
}

impl Open {
    fn forget_closed(&mut self) {
        self.all.retain(|known| !known.is_transport_closed());
        self.issued.retain(|_, known| !known.is_transport_closed());
    }
}

impl ListChanged {
    async fn tell_session(self, peer: &Peer<RoleServer>) -> Result<(), ServiceError> {
        match self {
            ListChanged::Tools => peer.notify_tool_list_changed().await,
            ListChanged::Resources => peer.notify_resource_list_changed().await,
        }
    }
}

impl Peers {
    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Remembers a session that just initialized, under the id its transport issued if any
    /// (and forgets those that have closed).
    /// A session told twice that it is initialized (a shared session hears it from its own
    /// replica and from its client) is remembered once.
    pub(super) fn add(&self, peer: Peer<RoleServer>, issued: Option<Arc<str>>) {
        let mut open = self.open();
        open.forget_closed();
        if let Some(id) = issued {
            if open.issued.get(&id).is_some_and(|known| same_session(known, &peer)) {
                return;
            }
            open.issued.insert(id, peer.clone());
        }
        open.all.push(peer);
    }

    /// The id the transport issued for the session of `peer`.
    #[cfg(feature = "http")]
    pub(super) fn session_of(&self, peer: &Peer<RoleServer>) -> Option<Arc<str>> {
        let open = self.open();
        open.issued.iter().find(|(_, known)| same_session(known, peer)).map(|(id, _)| Arc::clone(id))
    }

    /// The open session the transport issued `id` for.
    #[cfg(feature = "http")]
    pub(super) fn issued(&self, id: &str) -> Option<Peer<RoleServer>> {
        self.open().issued.get(id).filter(|peer| !peer.is_transport_closed()).cloned()
    }

    /// Sends the notification of `which` to every open session and to every
    /// `subscriptions/listen` request that asked for it, without waiting for any of them.
    pub(super) fn list_changed(&self, which: ListChanged, subscriptions: &Subscriptions) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut open = self.open();
            open.forget_closed();
            open.all.clone()
        };
        // Clients of 2026-07-28 never initialize: a listen request is their only way to hear.
        let listeners = subscriptions.listening_for(which);
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
