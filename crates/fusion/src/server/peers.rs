//! The connected clients, told when the tools change.

use std::sync::Mutex;

use rmcp::{Peer, RoleServer};

/// The sessions that finished `initialize`, while their transport is open.
#[derive(Default)]
pub(super) struct Peers(Mutex<Vec<Peer<RoleServer>>>);

impl Peers {
    /// Remembers a session that just initialized (and forgets those that have closed).
    pub(super) fn add(&self, peer: Peer<RoleServer>) {
        let mut peers = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        peers.retain(|known| !known.is_transport_closed());
        peers.push(peer);
    }

    /// Sends `notifications/tools/list_changed` to every open session, without waiting for
    /// any of them.
    pub(super) fn tools_changed(&self) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            peers.retain(|known| !known.is_transport_closed());
            peers.clone()
        };
        if peers.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(sessions = peers.len(), "tools changed outside a Tokio runtime: clients were not told");
            return;
        };
        runtime.spawn(async move {
            for peer in peers {
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!("tools/list_changed not delivered: {error}");
                }
            }
        });
    }
}
