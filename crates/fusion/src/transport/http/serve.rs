//! Serving: a bound listener, a graceful shutdown that lets calls in flight finish, and the
//! signals that start it.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware;
use axum::response::Response;
use axum::serve::ListenerExt as _;
use futures_util::StreamExt as _;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{HttpConfig, router};
use crate::in_flight::InFlight;
use crate::server::FusionServer;

/// Counts POST requests until their response body is fully sent (or dropped). A call is done
/// for the client only when its response has left, which in stateful mode is on an SSE stream
/// after the handler returned; standalone GET streams are not counted: they never end by
/// themselves.
async fn count_posts(State(in_flight): State<InFlight>, request: Request, next: middleware::Next) -> Response {
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let guard = in_flight.enter();
    let response = next.run(request).await;
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held_until_the_body_ends = &guard;
            chunk
        });
        Body::from_stream(stream)
    })
}

/// A bound HTTP server, ready to serve.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    server: FusionServer,
    config: HttpConfig,
}

impl HttpServer {
    /// Binds the configured address (port 0 picks a free one; see [`HttpServer::local_addr`]).
    pub async fn bind(server: FusionServer, config: HttpConfig) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(config.addr).await?;
        Ok(HttpServer { listener, server, config })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.config.addr)
    }

    /// Serves until `shutdown` completes, then stops accepting connections, lets the calls in
    /// flight finish (up to the grace period), closes sessions and returns.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let HttpServer { listener, server, config } = self;
        let sessions = CancellationToken::new();
        let stopping = CancellationToken::new();
        let responding = InFlight::default();
        let app = router(server.clone(), &config, sessions.clone())
            .layer(middleware::from_fn_with_state(responding.clone(), count_posts));
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

        // Nagle plus delayed ACKs cost ~40 ms a request on small JSON-RPC messages.
        let listener = listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::warn!("cannot set TCP_NODELAY: {error}");
            }
        });
        let serving = axum::serve(listener, app).with_graceful_shutdown(stopping.clone().cancelled_owned());
        let deadline = async {
            stopping.cancelled().await;
            tokio::time::sleep(grace + Duration::from_secs(2)).await;
        };
        let result = tokio::select! {
            result = serving => result,
            () = deadline => {
                tracing::warn!("connections still open after the grace period; closing them");
                Ok(())
            }
        };
        drain.abort();
        result
    }
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
