//! Streamable HTTP: one keep-alive connection per request in flight, each sending its next
//! request as soon as the last is answered.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::{Answer, DriveError, INITIALIZE, INITIALIZED, Plan, Server, Transport, Usage, Window, usage_over};

/// One client connection, and the session it speaks in, if any.
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    session: Option<String>,
}

impl Connection {
    async fn open(addr: SocketAddr, session: Option<String>) -> Result<Connection, DriveError> {
        let tcp = tokio::net::TcpStream::connect(addr).await.map_err(DriveError::io("connecting"))?;
        tcp.set_nodelay(true).map_err(DriveError::io("setting TCP_NODELAY"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(connection);
        Ok(Connection { sender, addr, session })
    }

    async fn post(&mut self, body: Bytes) -> Result<(Response<()>, Bytes), DriveError> {
        let mut request = Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let request = request.body(Full::new(body)).map_err(|e| DriveError::Protocol(e.to_string()))?;
        self.sender.ready().await?;
        let (parts, body) = self.sender.send_request(request).await?.into_parts();
        let body = body.collect().await?.to_bytes();
        if !parts.status.is_success() {
            return Err(DriveError::Protocol(format!("HTTP {}: {}", parts.status, String::from_utf8_lossy(&body))));
        }
        Ok((Response::from_parts(parts, ()), body))
    }
}

/// The JSON-RPC messages of a body: the body itself, or the `data` of each event.
fn messages(response: &Response<()>, body: &Bytes) -> Vec<Bytes> {
    let event_stream =
        response.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !event_stream {
        return vec![body.clone()];
    }
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(|data| data.trim_ascii())
        .filter(|data| !data.is_empty())
        .map(|data| body.slice_ref(data))
        .collect()
}

/// Drives the server with `plan.concurrency` connections until the window closes.
pub(super) async fn drive(plan: &Plan, server: &mut Server) -> Result<(Window, Usage), DriveError> {
    let addr = server.addr.ok_or(DriveError::Protocol("an HTTP server without an address".into()))?;
    let mut first = Connection::open(addr, None).await?;
    let (response, _) = first.post(Bytes::from_static(INITIALIZE.as_bytes())).await?;
    let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    if plan.transport == Transport::HttpStateful && session.is_none() {
        return Err(DriveError::Protocol("a stateful server gave no mcp-session-id".into()));
    }
    first.session = session.clone();
    first.post(Bytes::from_static(INITIALIZED.as_bytes())).await?;

    let window = Window::new(plan);
    let (opens, closes) = (window.opens, window.closes);
    let mut workers = Vec::with_capacity(plan.concurrency);
    let mut connections = vec![first];
    for _ in 1..plan.concurrency {
        connections.push(Connection::open(addr, session.clone()).await?);
    }
    for (n, connection) in connections.into_iter().enumerate() {
        let plan = plan.clone();
        let window = Window { opens, closes, latencies: window.latencies.clone() };
        workers.push(tokio::spawn(work(plan, connection, window, n as u64)));
    }
    let cpu = usage_over(opens, closes, &*server).await?;
    let mut total = window;
    for worker in workers {
        let done = worker.await.map_err(|e| DriveError::Protocol(format!("a worker failed: {e}")))??;
        total.merge(&done);
    }
    Ok((total, cpu))
}

/// One connection's loop: ids `n`, `n + c`, `n + 2c`, … so that no two connections share one.
async fn work(plan: Plan, mut connection: Connection, mut window: Window, n: u64) -> Result<Window, DriveError> {
    let step = plan.concurrency as u64;
    let mut id = n + 1;
    loop {
        let sent = Instant::now();
        let (response, body) = connection.post(Bytes::from(plan.request(id))).await?;
        let mut answered = false;
        for message in messages(&response, &body) {
            answered |= Answer::read(&message, plan.call)? == Some(id);
        }
        if !answered {
            return Err(DriveError::Protocol(format!("no answer to {id} in {}", String::from_utf8_lossy(&body))));
        }
        if !window.record(sent) {
            return Ok(window);
        }
        id += step;
    }
}
