//! Telling client connections apart.

use std::sync::Arc;

use rmcp::{Peer, RoleServer};

/// Whether two handles are the same client connection: clones of one peer share the
/// handshake's information, set once at `initialize`.
pub(crate) fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}
