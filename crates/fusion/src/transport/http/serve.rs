//! Serving: a bound listener, a graceful shutdown that lets calls in flight finish, and the
//! signals that start it.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::ConnectInfo;
use futures_util::future::Either;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use super::deadlines::CoarseTimer;
use super::probes::Probes;
use super::strict::{BOTH_FRAMINGS, HeadScanner};
use super::{CheckedEndpoint, HttpConfig, ListenAddress, ResponsesInFlight, endpoint, refusal};
use crate::server::FusionServer;

/// A bound HTTP server, ready to serve.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    server: FusionServer,
    config: HttpConfig,
    /// The address bound, as asked (port 0 included).
    bound: SocketAddr,
}

impl HttpServer {
    /// Binds the configured address (port 0 picks a free one; see [`HttpServer::local_addr`]):
    /// the first of its addresses that binds, since a name may resolve to an address the
    /// machine cannot bind (IPv6 where it has none) before one it can. The error names the
    /// last address tried, or says why the configured text is no address
    /// ([`InvalidInput`](std::io::ErrorKind::InvalidInput)).
    pub async fn bind(server: FusionServer, config: HttpConfig) -> std::io::Result<HttpServer> {
        let address: &ListenAddress = config
            .address()
            .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidInput, error.to_string()))?;
        let mut failure = None;
        for &addr in address.addrs() {
            match TcpListener::bind(addr).await {
                Ok(listener) => return Ok(HttpServer { listener, server, config, bound: addr }),
                Err(error) => failure = Some(std::io::Error::new(error.kind(), format!("binding {addr}: {error}"))),
            }
        }
        Err(failure.unwrap_or_else(|| std::io::Error::other(format!("{address} resolves to no address"))))
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.bound)
    }

    /// Serves until `shutdown` completes, then stops accepting connections, lets the calls in
    /// flight finish (up to the grace period), closes sessions and returns.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let HttpServer { listener, server, config, .. } = self;
        let addr = listener.local_addr()?;
        crate::transport::announce_when_unlogged(format_args!("on http://{addr}{}", config.path));
        let sessions = CancellationToken::new();
        let stopping = CancellationToken::new();
        let responding = ResponsesInFlight::default();
        // POST requests are counted until their response has been sent: a call is done for the
        // client only when its response has left, which in stateful mode is on an SSE stream
        // after the handler returned; standalone GET streams never end by themselves.
        let app = endpoint::checked(server.clone(), &config, sessions.clone(), Some(responding.clone()));
        let probes = Probes {
            server: server.clone(),
            metrics: config.metrics.clone(),
            hosts: config.hosts().into(),
            origins: config.origins().into(),
            protected_resource: config.protected_resource.clone(),
        };
        let grace = config.shutdown_grace;

        let drain = {
            let (sessions, stopping) = (sessions.clone(), stopping.clone());
            tokio::spawn(async move {
                shutdown.await;
                tracing::info!(
                    in_flight = server.in_flight(),
                    "shutting down: no new connections, finishing calls in flight"
                );
                stopping.cancel();
                if tokio::time::timeout(grace, responding.idle()).await.is_err() {
                    tracing::warn!(in_flight = server.in_flight(), "grace period over with calls still running");
                }
                // Ends open SSE streams and sessions, so their connections can close.
                sessions.cancel();
            })
        };

        let connections = Connections::new(&config);
        let open = connections.accept_until(listener, (app, config.path.clone()), probes, &stopping).await;
        tokio::select! {
            () = open.shutdown() => {}
            () = tokio::time::sleep(grace + Duration::from_secs(2)) => {
                tracing::warn!("connections still open after the grace period; closing them");
            }
        }
        drain.abort();
        Ok(())
    }
}

/// Accepted connections: at most `max_connections` at once, each read by hyper with a
/// deadline for every request's headers (which also ends idle keep-alive connections).
struct Connections {
    slots: Arc<Semaphore>,
    max: usize,
    http1: hyper::server::conn::http1::Builder,
}

impl Connections {
    fn new(config: &HttpConfig) -> Connections {
        let mut http1 = hyper::server::conn::http1::Builder::new();
        // A tick of an eighth of the timeout: a slow client is cut within 12% of it.
        let tick = (config.limits.header_timeout / 8).clamp(Duration::from_millis(5), Duration::from_millis(250));
        http1.timer(CoarseTimer::start(tick)).header_read_timeout(config.limits.header_timeout);
        // A client that half-closes (shuts its writing side after the request, as HTTP/1.1
        // allows) still waits for its answer: the request is served, not dropped.
        http1.half_close(true);
        // Not `pipeline_flush`: it holds an answer back while more bytes wait to be read, and
        // an answer refusing a request whose body was not read (both framings) was then lost
        // when the connection closed.
        let max = config.limits.max_connections;
        Connections { slots: Arc::new(Semaphore::new(max)), max, http1 }
    }

    /// Serves each connection `listener` accepts until `stopping` fires, the endpoint at
    /// `path`, the `probes` beside it and `404` elsewhere; returns the connections still open,
    /// to be shut down gracefully.
    ///
    /// The endpoint is called directly rather than through an axum `Router`: nesting it at
    /// its path rewrites every request's URI (an allocation and a parse per request), and
    /// the one path needs no routing table.
    async fn accept_until(
        &self,
        listener: TcpListener,
        (app, path): (CheckedEndpoint, String),
        probes: Probes,
        stopping: &CancellationToken,
    ) -> GracefulShutdown {
        let path: Arc<str> = path.into();
        let open = GracefulShutdown::new();
        let mut full = false;
        loop {
            let (tcp, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of descriptors or memory: give the open connections a moment
                        // to end rather than spinning on the same error.
                        tracing::warn!("cannot accept a connection: {error}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = stopping.cancelled() => return open,
            };
            let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() else {
                if !std::mem::replace(&mut full, true) {
                    tracing::warn!(max = self.max, "closing new connections: {} are open", self.max);
                }
                drop(tcp);
                continue;
            };
            full = false;
            // Nagle plus delayed ACKs cost ~40 ms a request on small JSON-RPC messages.
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::warn!("cannot set TCP_NODELAY: {error}");
            }
            let (tcp, framed_twice) = HeadScanner::new(tcp);
            let (app, path, probes) = (app.clone(), Arc::clone(&path), probes.clone());
            let service = hyper::service::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
                if framed_twice.load(Ordering::Acquire) {
                    tracing::warn!(%peer, "refused an HTTP request: {BOTH_FRAMINGS}");
                    return Either::Left(std::future::ready(Ok(refusal::bad_request(BOTH_FRAMINGS))));
                }
                if !at_endpoint(request.uri().path(), &path) {
                    return Either::Left(std::future::ready(Ok(probes.answer(&request))));
                }
                request.extensions_mut().insert(ConnectInfo(peer));
                Either::Right(app.clone().call(request.map(Body::new)))
            });
            let connection = open.watch(self.http1.serve_connection(TokioIo::new(tcp), service));
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%peer, "connection ended: {error}");
                }
                drop(slot);
            });
        }
    }
}

/// Whether a request's path is the endpoint's, or below it (as the router nests it).
fn at_endpoint(requested: &str, path: &str) -> bool {
    requested.strip_prefix(path).is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || path.ends_with('/'))
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
