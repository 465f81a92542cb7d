//! The gateway as a client of an upstream: who it says it is, and what it does when the
//! upstream's tools change.

use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::Notify;

/// Wakes the supervisor when the upstream's tools change. (Progress is routed by the
/// transport, in order: see `progress.rs`.)
#[derive(Clone, Default)]
pub(crate) struct UpstreamHandler {
    pub(crate) tools_changed: Arc<Notify>,
}

impl ClientHandler for UpstreamHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("fusion-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}
