//! An upstream's progress notifications, relayed to the caller of the call they report on,
//! in order and before its result.
//!
//! rmcp hands each notification to the handler in a task of its own but a response straight
//! to the request: a handler would see the last progress after the result it precedes. So the
//! connection's transport is wrapped ([`InOrder`]) and routes each progress notification as it
//! is read, before rmcp reads the next message; the forwarder drains its route before it
//! returns the result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta as _, JsonRpcMessage, ProgressNotificationParam, ProgressToken,
    ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::oversized::Dropped;

/// The progress of each `tools/call` in flight on one connection, by its progress token.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, Route>>>);

/// Where one call's progress goes: queued from the moment its request is sent, read by the
/// forwarder that claims it.
struct Route {
    sender: UnboundedSender<ProgressNotificationParam>,
    receiver: Option<UnboundedReceiver<ProgressNotificationParam>>,
}

impl Route {
    fn new() -> Route {
        let (sender, receiver) = unbounded_channel();
        Route { sender, receiver: Some(receiver) }
    }
}

impl ProgressRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Route>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens the route of a call about to be sent, so nothing it reports is missed (unless
    /// its forwarder, which may run first, has opened it already).
    fn open(&self, token: ProgressToken) {
        self.lock().entry(token).or_insert_with(Route::new);
    }

    /// Queues `progress` on its call's route; dropped when the call is not (or no longer) in
    /// flight.
    fn deliver(&self, progress: &ProgressNotificationParam) {
        if let Some(route) = self.lock().get(&progress.progress_token) {
            let _ = route.sender.send(progress.clone());
        }
    }

    /// The progress of the call sent with `token`, until the guard drops.
    pub(crate) fn claim(
        &self,
        token: &ProgressToken,
    ) -> (RouteGuard, Option<UnboundedReceiver<ProgressNotificationParam>>) {
        let receiver = self.lock().entry(token.clone()).or_insert_with(Route::new).receiver.take();
        (RouteGuard { routes: self.clone(), token: token.clone() }, receiver)
    }
}

/// Closes a call's route when the call ends, however it ends.
pub(crate) struct RouteGuard {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

/// A transport that opens a route for each `tools/call` it sends and routes each progress
/// notification as it reads it. It opens the call's [`Dropped`] slot too, so an answer too
/// large to read that comes before the forwarder claims it still finds it.
pub(crate) struct InOrder<T> {
    pub(crate) inner: T,
    pub(crate) routes: ProgressRoutes,
    pub(crate) dropped: Dropped,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    /// Short: rmcp puts the transport's name in its errors, and the default is the whole type.
    fn name() -> std::borrow::Cow<'static, str> {
        "upstream".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::CallToolRequest(_))
        {
            self.dropped.open(request.id.clone());
            if let Some(token) = request.request.get_meta().get_progress_token() {
                self.routes.open(token);
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
        {
            self.routes.deliver(&progress.params);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
