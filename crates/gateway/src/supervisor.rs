//! One mount's life: connect, serve while the upstream is up, follow its tool list, and when
//! it drops or fails, say so and try again after a backoff.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_fusion::FusionServer;
use mcp_fusion::handoff::{Forward, Mount, MountState};
use rmcp::model::{ClientRequest, PaginatedRequestParams, PingRequest, Tool};
use rmcp::service::{QuitReason, RunningService, ServiceError};
use rmcp::{Peer, RoleClient};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::backoff::{Backoff, jitter_unit};
use crate::bearer::Tokens;
use crate::build_log::BuildLog;
use crate::forward::{Broken, Forwarder, described};
use crate::handler::UpstreamHandler;
use crate::oversized::Dropped;
use crate::progress::ProgressRoutes;
use crate::rest::ApiSource;
use crate::upstream::Upstream;

/// What a call is told to wait after a failed build: the next start comes with a change to
/// the sources, which a model cannot time.
const AFTER_A_FAILED_BUILD: Duration = Duration::from_secs(5);

/// Keeps one mount connected.
pub(crate) struct Supervisor {
    pub server: FusionServer,
    pub mount: Mount,
    pub upstream: Upstream,
    /// The mount's fetched token, kept across reconnections (client credentials only).
    pub tokens: Option<Arc<Tokens>>,
    pub backoff: Backoff,
    pub connect_timeout: Duration,
    pub keepalive: Duration,
    pub stop: CancellationToken,
    /// Counts the mounts whose first attempt has ended (ready or failed).
    pub settled: Settled,
    /// Told to end the connection and connect again at once.
    pub restart: Arc<Notify>,
    /// Whether a stdio upstream builds itself before it serves: its stderr is read for the
    /// compiler's first error, and a start that fails waits for a restart, not a backoff.
    pub rebuilds: bool,
}

/// Counts, once per mount, the mounts whose first attempt to connect has ended.
#[derive(Clone)]
pub(crate) struct Settled {
    count: tokio::sync::watch::Sender<usize>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Settled {
    pub(crate) fn new(count: tokio::sync::watch::Sender<usize>) -> Settled {
        Settled { count, done: Arc::default() }
    }

    /// Counts this mount, the first time only.
    fn settle(&self) {
        if !self.done.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.count.send_modify(|count| *count += 1);
        }
    }
}

/// How a connection ended.
enum Ended {
    /// The gateway is shutting down.
    Stopped,
    /// A restart was asked for.
    Restarted,
    /// The upstream closed, crashed or failed; why.
    Lost(String),
    /// The upstream could not be started or reached, or failed its handshake; why, and what
    /// it wrote on stderr meanwhile when that was read.
    NotStarted { reason: String, build_log: Option<BuildLog> },
}

impl Supervisor {
    /// Runs until the gateway stops.
    pub(crate) async fn run(self) {
        if let Some(api) = self.upstream.api() {
            return self.serve_api(api).await;
        }
        let mut failures = 0u32;
        loop {
            let go_on = match self.attempt(&mut failures).await {
                Ended::Stopped => return,
                Ended::Restarted => {
                    failures = 0;
                    true
                }
                Ended::Lost(reason) | Ended::NotStarted { reason, build_log: None } => {
                    self.wait_after(reason, &mut failures).await
                }
                // Starting it again builds the same sources again: only a change can help.
                Ended::NotStarted { reason, build_log: Some(log) } => {
                    self.wait_for_restart(log.why(reason).await).await
                }
            };
            if !go_on {
                return;
            }
        }
    }

    /// Connects the upstream and serves the mount over it until the connection ends.
    async fn attempt(&self, failures: &mut u32) -> Ended {
        self.set(MountState::Connecting);
        let handler = UpstreamHandler::default();
        let routes = ProgressRoutes::default();
        let dropped = Dropped::default();
        let build_log = self.rebuilds.then(BuildLog::default);
        let connect = tokio::time::timeout(
            self.connect_timeout,
            self.upstream.connect(
                self.tokens.as_ref(),
                handler.clone(),
                routes.clone(),
                dropped.clone(),
                self.mount.namespace(),
                build_log.as_ref(),
            ),
        );
        let connected = tokio::select! {
            biased;
            () = self.stop.cancelled() => return Ended::Stopped,
            // A start in progress (a build) is dropped, and its process group with it.
            () = self.restart.notified() => return Ended::Restarted,
            connected = connect => connected,
        };
        let reason = match connected {
            Ok(Ok((service, _group))) => return self.serve(service, handler, routes, dropped, failures).await,
            Ok(Err(reason)) => reason,
            Err(_) => format!(
                "{} did not complete its handshake within {} ms",
                self.upstream.describe(),
                self.connect_timeout.as_millis()
            ),
        };
        Ended::NotStarted { reason, build_log }
    }

    /// Marks the mount unavailable for `reason` until a restart is asked for; `false` when the
    /// gateway stopped meanwhile.
    async fn wait_for_restart(&self, reason: String) -> bool {
        tracing::warn!(mount = self.mount.namespace(), upstream = %self.upstream.describe(), "upstream unavailable: {reason}; waiting for a change to restart it");
        self.set(MountState::Unavailable { retry_at: Instant::now() + AFTER_A_FAILED_BUILD, reason });
        self.settled.settle();
        tokio::select! {
            biased;
            () = self.stop.cancelled() => false,
            () = self.restart.notified() => true,
        }
    }

    /// Serves the mount of an HTTP API: reads its document (again after a backoff while it
    /// cannot be read), then serves its operations until the gateway stops. Each call is a
    /// request of its own, so there is no connection to keep.
    async fn serve_api(&self, api: ApiSource<'_>) {
        let mut failures = 0u32;
        loop {
            self.set(MountState::Connecting);
            let load = tokio::time::timeout(self.connect_timeout, api.load(self.mount.tool_limit()));
            let loaded = tokio::select! {
                biased;
                () = self.stop.cancelled() => return,
                () = self.restart.notified() => continue,
                loaded = load => loaded,
            };
            let reason = match loaded {
                Ok(Ok((tools, forward))) => {
                    tracing::info!(mount = self.mount.namespace(), tools = tools.len(), "API ready");
                    self.set(MountState::Ready { tools, forward: Arc::new(forward) });
                    self.settled.settle();
                    tokio::select! {
                        biased;
                        () = self.stop.cancelled() => return,
                        () = self.restart.notified() => {
                            failures = 0;
                            continue;
                        }
                    }
                }
                Ok(Err(reason)) => reason,
                Err(_) => format!(
                    "the OpenAPI document {} was not read within {} ms",
                    api.document,
                    self.connect_timeout.as_millis()
                ),
            };
            if !self.wait_after(reason, &mut failures).await {
                return;
            }
        }
    }

    /// Marks the mount unavailable for `reason` and waits out the backoff of the attempt that
    /// failed; `false` when the gateway stopped meanwhile.
    async fn wait_after(&self, reason: String, failures: &mut u32) -> bool {
        let wait = self.backoff.delay(*failures, jitter_unit());
        *failures = failures.saturating_add(1);
        tracing::warn!(mount = self.mount.namespace(), upstream = %self.upstream.describe(), "upstream unavailable: {reason}; next attempt in {} ms", wait.as_millis());
        self.set(MountState::Unavailable { retry_at: Instant::now() + wait, reason });
        self.settled.settle();
        tokio::select! {
            biased;
            () = self.stop.cancelled() => false,
            () = tokio::time::sleep(wait) => true,
        }
    }

    /// Serves the mount over a connected upstream until it ends.
    async fn serve(
        &self,
        service: RunningService<RoleClient, UpstreamHandler>,
        handler: UpstreamHandler,
        progress: ProgressRoutes,
        dropped: Dropped,
        failures: &mut u32,
    ) -> Ended {
        let peer = service.peer().clone();
        let broken = Broken::default();
        let forwarder = Forwarder { peer: peer.clone(), progress, dropped, broken: broken.clone() };
        let forward: Arc<dyn Forward> = Arc::new(forwarder);
        let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + self.keepalive, self.keepalive);
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let connection = service.cancellation_token();
        let mut closed = tokio::spawn(service.waiting());
        let mut refresh = true;
        loop {
            if std::mem::take(&mut refresh) {
                match self.tools(&peer).await {
                    Ok(tools) => {
                        tracing::info!(mount = self.mount.namespace(), tools = tools.len(), "upstream ready");
                        self.set(MountState::Ready { tools, forward: Arc::clone(&forward) });
                        self.settled.settle();
                        *failures = 0;
                    }
                    Err(reason) => {
                        connection.cancel();
                        let _ = closed.await;
                        return Ended::Lost(reason);
                    }
                }
            }
            tokio::select! {
                biased;
                () = self.stop.cancelled() => {
                    connection.cancel();
                    let _ = closed.await;
                    return Ended::Stopped;
                }
                quit = &mut closed => return Ended::Lost(lost(quit)),
                () = self.restart.notified() => {
                    connection.cancel();
                    let _ = closed.await;
                    return Ended::Restarted;
                }
                () = handler.tools_changed.notified() => refresh = true,
                reason = broken.reported() => {
                    connection.cancel();
                    let _ = closed.await;
                    return Ended::Lost(reason);
                }
                _ = keepalive.tick() => {
                    // An HTTP upstream that went away says nothing until it is asked.
                    if let Err(reason) = self.ping(&peer).await {
                        connection.cancel();
                        let _ = closed.await;
                        return Ended::Lost(reason);
                    }
                }
            }
        }
    }

    /// The upstream's tools, page by page within the connect timeout; refused, reading no
    /// further, once there are more than the mount takes.
    async fn tools(&self, peer: &Peer<RoleClient>) -> Result<Vec<Tool>, String> {
        let max = self.mount.tool_limit();
        match tokio::time::timeout(self.connect_timeout, list_tools(peer, max)).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(Listing::TooMany { listed, more })) => Err(format!(
                "it lists {}{listed} tools, more than the {max} its mount takes (max_tools), so none are served",
                if more { "more than " } else { "" }
            )),
            Ok(Err(Listing::Failed(error))) => Err(format!("tools/list failed: {}", described(&error))),
            Err(_) => Err(format!("tools/list did not answer within {} ms", self.connect_timeout.as_millis())),
        }
    }

    /// Whether the upstream still answers, within the connect timeout.
    async fn ping(&self, peer: &Peer<RoleClient>) -> Result<(), String> {
        let ping = peer.send_request(ClientRequest::PingRequest(PingRequest::default()));
        match tokio::time::timeout(self.connect_timeout, ping).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(format!("it did not answer a ping: {}", described(&error))),
            Err(_) => Err(format!("it did not answer a ping within {} ms", self.connect_timeout.as_millis())),
        }
    }

    fn set(&self, state: MountState) {
        if let Err(error) = self.server.set_mount(&self.mount, state) {
            tracing::error!(mount = self.mount.namespace(), "the mount's tools cannot be served: {error}");
        }
    }
}

/// Why an upstream's tools could not be had.
enum Listing {
    /// It lists more than the mount takes: `listed` so far, and whether more pages follow.
    TooMany { listed: usize, more: bool },
    /// A page could not be had.
    Failed(ServiceError),
}

/// Every page of the upstream's tools, stopping once there are more than `max`.
async fn list_tools(peer: &Peer<RoleClient>, max: usize) -> Result<Vec<Tool>, Listing> {
    let mut tools = Vec::new();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer.list_tools(Some(params)).await.map_err(Listing::Failed)?;
        tools.extend(page.tools);
        if tools.len() > max {
            return Err(Listing::TooMany { listed: tools.len(), more: page.next_cursor.is_some() });
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
}

/// Why a connection ended, in words.
fn lost(quit: Result<Result<QuitReason, tokio::task::JoinError>, tokio::task::JoinError>) -> String {
    match quit.and_then(|quit| quit) {
        Ok(QuitReason::Closed) => "the upstream closed the connection".into(),
        Ok(QuitReason::Cancelled) => "the connection was cancelled".into(),
        Ok(other) => format!("the connection ended: {other:?}"),
        Err(error) => format!("the connection task failed: {error}"),
    }
}
