//! Requests read one way only: shapes that proxies and this server could read differently
//! (request smuggling, Host confusion) are refused before anything runs.
//!
//! hyper reads a request with both `Content-Length` and `Transfer-Encoding` by the latter and
//! drops the former before the request reaches any middleware, so that shape is caught on the
//! connection's bytes, by [`HeadScanner`].

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use mcp_fusion_wire::echo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tower_layer::Layer;
use tower_service::Service;

use super::HttpConfig;
use super::check::{AtOnce, at_once};
use super::refusal;

/// Why a request with both body framings is refused.
pub(super) const BOTH_FRAMINGS: &str = "a request may carry Content-Length or Transfer-Encoding, not both";

/// Why `request` is refused with `400`, if it is: it carries both `Content-Length` and
/// `Transfer-Encoding`, more than one `Host`, or an absolute-form target naming a host that is
/// not one of `hosts`.
pub(super) fn ambiguity(request: &Request, hosts: &[String]) -> Option<&'static str> {
    let headers = request.headers();
    if headers.contains_key(http::header::CONTENT_LENGTH) && headers.contains_key(http::header::TRANSFER_ENCODING) {
        return Some(BOTH_FRAMINGS);
    }
    if headers.get_all(http::header::HOST).iter().nth(1).is_some() {
        return Some("a request carries one Host header");
    }
    if let Some(authority) = request.uri().authority()
        && !host_allowed(hosts, authority.host(), authority.port_u16())
    {
        return Some("the request's target names a host this server does not serve");
    }
    None
}

/// Whether the request's `Host` (or, without one, its target's authority) names one of
/// `hosts`; an empty list accepts any.
pub(super) fn names_allowed_host(headers: &http::HeaderMap, uri: &http::Uri, hosts: &[String]) -> bool {
    if hosts.is_empty() {
        return true;
    }
    let authority = match headers.get(http::header::HOST) {
        Some(host) => host.to_str().ok().and_then(|host| host.parse::<http::uri::Authority>().ok()),
        None => uri.authority().cloned(),
    };
    authority.is_some_and(|authority| host_allowed(hosts, authority.host(), authority.port_u16()))
}

/// Whether `host` (with `port`) is one of `hosts` (`name` or `name:port`); an empty list
/// accepts any.
fn host_allowed(hosts: &[String], host: &str, port: Option<u16>) -> bool {
    if hosts.is_empty() {
        return true;
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    hosts.iter().any(|allowed| {
        let allowed = allowed.as_str();
        let bare = allowed.trim_start_matches('[').trim_end_matches(']');
        if bare.eq_ignore_ascii_case(host) {
            return true;
        }
        match (allowed.rsplit_once(':'), port) {
            (Some((name, allowed_port)), Some(port)) if !name.is_empty() && !name.ends_with(':') => {
                let name = name.trim_start_matches('[').trim_end_matches(']');
                name.eq_ignore_ascii_case(host) && allowed_port.parse() == Ok(port)
            }
            _ => false,
        }
    })
}

/// A connection whose request heads are read line by line as hyper reads them, to flag a head
/// that frames its body twice. The flag is set before hyper hands the request on, since the
/// head's end is in the bytes hyper read to parse it; hyper closes such a connection after
/// the request, so what follows needs no tracking.
pub(super) struct HeadScanner<IO> {
    io: IO,
    line: [u8; 20],
    len: usize,
    content_length: bool,
    transfer_encoding: bool,
    both: Arc<AtomicBool>,
}

impl<IO> HeadScanner<IO> {
    /// Scans `io`; the flag reads true once a head held both framings.
    pub(super) fn new(io: IO) -> (HeadScanner<IO>, Arc<AtomicBool>) {
        let both = Arc::new(AtomicBool::new(false));
        let scanner = HeadScanner {
            io,
            line: [0; 20],
            len: 0,
            content_length: false,
            transfer_encoding: false,
            both: Arc::clone(&both),
        };
        (scanner, both)
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte != b'\n' {
                if self.len < self.line.len() {
                    self.line[self.len] = byte.to_ascii_lowercase();
                }
                self.len += 1;
                continue;
            }
            let line = &self.line[..self.len.min(self.line.len())];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() && self.len <= 1 {
                // The end of a head (or a blank line in a body): judge what it held.
                if self.content_length && self.transfer_encoding {
                    self.both.store(true, Ordering::Release);
                }
                self.content_length = false;
                self.transfer_encoding = false;
            } else if line.starts_with(b"content-length:") {
                self.content_length = true;
            } else if line.starts_with(b"transfer-encoding:") {
                self.transfer_encoding = true;
            }
            self.len = 0;
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for HeadScanner<IO> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.scan(&buf.filled()[before..]);
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for HeadScanner<IO> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Refuses with `400` (and the connection closed) a request that proxies and this server
/// could read differently: both body framings, two `Host` headers, an absolute-form target
/// naming a host not served.
///
/// ```
/// use axum::{Router, routing::post};
/// use mcp_fusion::http::{HttpConfig, StrictRequestLayer};
///
/// let config = HttpConfig::new("127.0.0.1:8080");
/// let app: Router = Router::new().route("/hook", post(|| async { "ok" })).layer(StrictRequestLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct StrictRequestLayer {
    hosts: Arc<[String]>,
}

impl StrictRequestLayer {
    /// Checks absolute-form targets against the configured hosts.
    pub fn new(config: &HttpConfig) -> StrictRequestLayer {
        StrictRequestLayer { hosts: config.hosts().into() }
    }
}

impl<S> Layer<S> for StrictRequestLayer {
    type Service = StrictRequest<S>;

    fn layer(&self, inner: S) -> StrictRequest<S> {
        StrictRequest { inner, hosts: Arc::clone(&self.hosts) }
    }
}

/// The service of [`StrictRequestLayer`].
#[derive(Debug, Clone)]
pub struct StrictRequest<S> {
    inner: S,
    hosts: Arc<[String]>,
}

impl<S: Service<Request, Response = Response>> Service<Request> for StrictRequest<S> {
    type Response = Response;
    type Error = S::Error;
    type Future = AtOnce<S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let Some(reason) = ambiguity(&request, &self.hosts) {
            tracing::warn!(
                method = %echo(request.method().as_str()),
                uri = %echo(&request.uri().to_string()),
                "refused an HTTP request: {reason}"
            );
            return at_once(refusal::bad_request(reason));
        }
        Either::Right(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::testing::*;
    use axum::body::Body;

    #[test]
    fn a_head_with_both_framings_is_flagged_across_reads() {
        let (mut scanner, both) = HeadScanner::new(());
        scanner.scan(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-En");
        assert!(!both.load(Ordering::Acquire));
        scanner.scan(b"coding: chunked\r\n\r\n4\r\n{}{}\r\n0\r\n\r\n");
        assert!(both.load(Ordering::Acquire));
        let (mut scanner, both) = HeadScanner::new(());
        scanner.scan(b"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
        scanner.scan(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        assert!(!both.load(Ordering::Acquire));
    }

    #[test]
    fn hosts_match_with_and_without_ports() {
        let hosts = ["localhost", "127.0.0.1", "::1", "api.example.com:8443"].map(String::from);
        assert!(host_allowed(&hosts, "localhost", Some(8080)));
        assert!(host_allowed(&hosts, "[::1]", None));
        assert!(host_allowed(&hosts, "api.example.com", Some(8443)));
        assert!(!host_allowed(&hosts, "api.example.com", Some(80)));
        assert!(!host_allowed(&hosts, "evil.com", None));
        assert!(host_allowed(&[], "evil.com", None));
    }

    #[tokio::test]
    async fn the_strict_layer_refuses_two_hosts_and_passes_one() {
        let strict = StrictRequestLayer::new(&config());
        let twice = get("/mcp").header(http::header::HOST, "127.0.0.1").body(Body::empty()).unwrap();
        let (status, body, headers) = answer(app(strict.clone()), twice).await;
        assert_eq!((status, body.as_str()), (400, "Bad Request: a request carries one Host header"));
        assert_eq!(headers[http::header::CONNECTION], "close");
        let foreign = Request::get("http://evil.example/mcp").body(Body::empty()).unwrap();
        assert_eq!(answer(app(strict.clone()), foreign).await.0, 400);
        let once = get("/mcp").body(Body::empty()).unwrap();
        assert_eq!(answer(app(strict), once).await.0, 200);
    }
}
