//! Carrying a call to an upstream: its arguments, its progress back, its cancellation on,
//! and the upstream's answer sorted into a result or a [`ForwardError`].

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion::CallInfo;
use mcp_fusion::handoff::{Forward, ForwardError};
use mcp_fusion::wire::{ToolError, echo};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, ErrorCode,
    JsonObject, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};

use crate::bearer::token_error;
use crate::oversized::{Dropped, MAX_MESSAGE_BYTES};
use crate::progress::ProgressRoutes;
use crate::upstream::refuses_credentials;

/// Forwards calls over one connection to an upstream.
pub(crate) struct Forwarder {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) progress: ProgressRoutes,
    /// Tells a call its answer was dropped for its size.
    pub(crate) dropped: Dropped,
    /// Told when a call finds the connection broken, so the supervisor reconnects at once
    /// instead of waiting for its next ping.
    pub(crate) broken: Broken,
}

/// A connection a call found broken, and why.
#[derive(Clone, Default)]
pub(crate) struct Broken {
    reason: Arc<std::sync::Mutex<Option<String>>>,
    notify: Arc<tokio::sync::Notify>,
}

impl Broken {
    fn report(&self, reason: String) {
        self.reason.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get_or_insert(reason);
        self.notify.notify_one();
    }

    /// Completes when a call reports the connection broken, with the first reason given.
    pub(crate) async fn reported(&self) -> String {
        self.notify.notified().await;
        self.reason.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take().unwrap_or_default()
    }
}

impl Forward for Forwarder {
    fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        call: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>> {
        let peer = self.peer.clone();
        let progress = self.progress.clone();
        let dropped = self.dropped.clone();
        let broken = self.broken.clone();
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        Box::pin(async move {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            // From here the upstream may act on the call: a cancellation is the upstream's to
            // hear, and the outcome its answer.
            call.hand_off();
            let handle = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
                .map_err(|error| sorted(&error, &broken))?;
            // Progress the upstream reports on this request's token reaches the caller (if it
            // asked for progress), in order, and all of it before the result.
            let (_route, reported) = progress.claim(&handle.progress_token);
            let mut reported = reported.filter(|_| call.progress_token().is_some());
            // An answer too large to read never reaches the response: rmcp drops it unread.
            let (_slot, mut too_large) = dropped.claim(&handle.id);
            let mut cancel = CancelOnDrop { peer: peer.clone(), id: Some(handle.id.clone()) };
            let response = handle.await_response();
            tokio::pin!(response);
            let cancellation = call.cancellation().clone();
            let mut heard_cancel = false;
            let answer = loop {
                let next = async {
                    match reported.as_mut() {
                        Some(reported) => reported.recv().await,
                        None => std::future::pending().await,
                    }
                };
                let dropped = async {
                    match too_large.as_mut() {
                        Some(word) => word.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    answer = &mut response => break answer,
                    Ok(()) = dropped => {
                        // It answered: there is nothing left to cancel.
                        cancel.id = None;
                        return Err(ForwardError::TooLarge { limit_bytes: MAX_MESSAGE_BYTES });
                    }
                    Some(step) = next => call.progress(step.progress, step.total, step.message).await,
                    () = cancellation.cancelled(), if !heard_cancel => {
                        heard_cancel = true;
                        // A client that went away reads no answer, but its call's outcome is
                        // the upstream's to tell: it finishes, and is logged as it ended.
                        if call.client_left() {
                            continue;
                        }
                        // The client asked: the upstream hears it. No answer comes after that
                        // (MCP asks none of a cancelled request, and rmcp reads none), so
                        // whether it acted before it heard stays unknown.
                        cancel.now();
                        return Err(ForwardError::CancelledInFlight);
                    }
                }
            };
            cancel.id = None;
            // What was reported before the answer came is queued already: it goes first.
            if let Some(reported) = reported.as_mut() {
                while let Ok(step) = reported.try_recv() {
                    call.progress(step.progress, step.total, step.message).await;
                }
            }
            match answer {
                Ok(ServerResult::CallToolResult(result)) => Ok(result),
                Ok(_) => Err(ForwardError::Unavailable {
                    message: "the upstream answered tools/call with something other than a result".into(),
                    retry_after: None,
                }),
                Err(error) => Err(sorted(&error, &broken)),
            }
        })
    }
}

/// The upstream's JSON-RPC error, or the connection's failure, as a [`ForwardError`]; a
/// failure of the connection itself is reported `broken`.
fn sorted(error: &ServiceError, broken: &Broken) -> ForwardError {
    match error {
        ServiceError::McpError(data) if data.code == ErrorCode::METHOD_NOT_FOUND => {
            ForwardError::NoSuchTool(data.message.to_string())
        }
        // SDKs answer an unknown tool with -32602 too ("Tool x not found"), and MCP 2026-07-28
        // asks it: it is not about the arguments. A framework upstream's error holds its
        // envelope, whose message and recovery (the closest names) are what the model reads.
        ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => {
            match ToolError::from_protocol_error(data.code.0, &data.message, data.data.as_ref()) {
                // Only a message: its own words, with nothing this side made up.
                Some(unknown) if unknown.message == *data.message => ForwardError::NoSuchTool(unknown.message.clone()),
                Some(unknown) => ForwardError::NoSuchTool(unknown.said_in_one_line()),
                None => ForwardError::InvalidParams(data.message.to_string()),
            }
        }
        // Any other error of the tool's call is its failure, which the mount words as an
        // envelope by what it says.
        ServiceError::McpError(data) => ForwardError::Failed { code: data.code.0, message: data.message.to_string() },
        // A token that could not be had, or credentials the upstream refused: said so, and
        // the supervisor dials again (a new token first).
        ServiceError::TransportSend(transport)
            if let Some((what, why)) = credentials_failure(transport.error.as_ref()) =>
        {
            broken.report(why);
            ForwardError::Unavailable { message: what.to_owned(), retry_after: None }
        }
        // rmcp's HTTP client refuses a body over its cap, and the connection with it.
        ServiceError::TransportSend(_) if let Some(limit_bytes) = too_large_over_http(error) => {
            broken.report(format!("its answer to a call was larger than {limit_bytes} bytes"));
            ForwardError::TooLarge { limit_bytes }
        }
        ServiceError::TransportSend(_) | ServiceError::TransportClosed => {
            broken.report(said(error).to_owned());
            unavailable(error)
        }
        other => unavailable(other),
    }
}

/// What went wrong with the gateway's credentials, when that is why a request failed (no
/// token to be had, or one the upstream refused even fresh): in short for the call, whose
/// envelope keeps 50 characters of it, and in full for the mount's state.
fn credentials_failure(error: &(dyn std::error::Error + 'static)) -> Option<(&'static str, String)> {
    if let Some(token) = token_error(error) {
        return Some(("the gateway got no token for it", format!("the gateway got no token for it: {token}")));
    }
    let refused = "it refused the gateway's credentials";
    refuses_credentials(error).then(|| (refused, format!("{refused} (HTTP 401/403), a fresh token too")))
}

/// The cap an HTTP upstream's answer went over, when that is why the call failed.
fn too_large_over_http(error: &ServiceError) -> Option<usize> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let ServiceError::TransportSend(error) = error else { return None };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(current) = cause {
        if let Some(StreamableHttpError::<reqwest::Error>::ResponseBodyTooLarge { max_size }) = current.downcast_ref() {
            return Some(*max_size);
        }
        cause = current.source();
    }
    None
}

/// What went wrong with the connection, in words a model can act on; the log has the
/// transport's own error, which names types and internals.
fn said(error: &ServiceError) -> &'static str {
    match error {
        ServiceError::TransportSend(_) => "the connection to it broke while the call was sent",
        ServiceError::TransportClosed => "the connection to it closed before it answered",
        ServiceError::UnexpectedResponse => "it answered tools/call with something other than a result",
        ServiceError::Cancelled { .. } => "the call to it was cancelled",
        ServiceError::Timeout { .. } => "it did not answer in time",
        _ => "the call to it failed",
    }
}

/// What an upstream answered instead of a result, for a reason or a log line: its JSON-RPC
/// error with its words quoted and cut, or what went wrong with the connection.
pub(crate) fn described(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!("JSON-RPC error {}: {}", data.code.0, echo(&data.message)),
        ServiceError::TransportSend(transport)
            if let Some((_, why)) = credentials_failure(transport.error.as_ref()) =>
        {
            why
        }
        other => said(other).to_owned(),
    }
}

fn unavailable(error: &ServiceError) -> ForwardError {
    // A transport's error may carry what the upstream sent (an HTTP error body).
    tracing::warn!("a call to the upstream failed: {}", echo(&error.to_string()));
    ForwardError::Unavailable { message: said(error).to_owned(), retry_after: None }
}

/// Tells the upstream a call was cancelled when the client asks, or when the caller's call is
/// dropped before the answer came (a timeout fired).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl CancelOnDrop {
    /// Tells the upstream now, once.
    fn now(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let param = CancelledNotificationParam::new(Some(id), Some("the caller cancelled the call".into()));
                if let Err(error) = peer.notify_cancelled(param).await {
                    tracing::debug!("cancellation not delivered to the upstream: {error}");
                }
            });
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.now();
    }
}

#[cfg(test)]
mod tests {
    use mcp_fusion::wire::ErrorCode as Code;
    use rmcp::ErrorData;

    use super::*;

    fn sorted_error(error: ErrorData) -> ForwardError {
        sorted(&ServiceError::McpError(error), &Broken::default())
    }

    #[test]
    fn an_upstreams_unknown_tool_keeps_its_healing_words() {
        let unknown = ToolError::new(Code::UnknownAction, "Unknown tool 'serch'.")
            .suggest("Did you mean \"search\"? Call one of the available tools.")
            .actions(["search"]);
        let rpc = unknown.to_invalid_params(8_000);
        assert_eq!(
            sorted_error(ErrorData::invalid_params(rpc.message, Some(rpc.data))),
            ForwardError::NoSuchTool(
                "Unknown tool 'serch'. Did you mean \"search\"? Call one of the available tools.".into()
            )
        );
        let another = sorted_error(ErrorData::invalid_params("Tool serch not found", None));
        assert_eq!(another, ForwardError::NoSuchTool("Tool serch not found".into()));
        let arguments = sorted_error(ErrorData::invalid_params("Invalid arguments: query", None));
        assert_eq!(arguments, ForwardError::InvalidParams("Invalid arguments: query".into()));
    }
}
