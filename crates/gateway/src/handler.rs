//! The gateway as a client of an upstream: what it does with the upstream's notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_fusion::CallInfo;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::Notify;

/// Relays an upstream's progress to the caller whose call it is, and wakes the supervisor
/// when the upstream's tools change.
#[derive(Clone, Default)]
pub(crate) struct UpstreamHandler {
    pub(crate) progress: ProgressRoutes,
    pub(crate) tools_changed: Arc<Notify>,
}

/// The calls in flight whose callers want progress, by the token the upstream reports with.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, Arc<CallInfo>>>>);

impl ProgressRoutes {
    /// Sends the upstream's progress on `token` to `call` until the returned guard drops.
    pub(crate) fn route(&self, token: ProgressToken, call: Arc<CallInfo>) -> RouteGuard {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(token.clone(), call);
        RouteGuard { routes: self.clone(), token }
    }

    fn caller(&self, token: &ProgressToken) -> Option<Arc<CallInfo>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(token).cloned()
    }
}

/// Ends a progress route when the call ends, however it ends.
pub(crate) struct RouteGuard {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&self.token);
    }
}

impl ClientHandler for UpstreamHandler {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        if let Some(call) = self.progress.caller(&params.progress_token) {
            call.progress(params.progress, params.total, params.message).await;
        }
    }

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
