//! stdio: newline-delimited JSON-RPC over any byte stream (stdin and stdout, pipes), strict
//! about frames and ids, and stopping as soon as the client is gone.
//!
//! - Every line that carries a request's id gets exactly one answer. A request the decoder
//!   cannot read is answered under its id, found by a tolerant scan: `-32700` when the text
//!   is not JSON the decoder accepts (invalid UTF-8, a lone surrogate, a number out of range,
//!   a message cut short), `-32600` when it is JSON but not a valid request. A request whose
//!   id is `null`, or neither a string nor a number, is answered `-32600` with id `null`.
//!   Text without any id (not JSON at all, a notification, a response) is logged and never
//!   answered: replying to garbage can start an error storm with a peer that echoes it.
//! - A batch (a JSON array; MCP has none since 2025-06-18) is refused with `-32600` (`-32700`
//!   if the line is not valid JSON): once per element that carries an id, or once with id
//!   `null` when none does.
//! - Two JSON values on one line (or text after the first) are refused with `-32700` for each
//!   object on the line that carries an id; none of them is run.
//! - A line longer than the limit is refused `-32600` under its id when the id comes before
//!   the cut, and otherwise discarded with a log line.
//! - An id already used by a request in flight is refused `-32600`, never run twice; an id is
//!   in flight from the request until its answer is sent, or until the client cancels it.
//! - Ids come back exactly as sent: a number rmcp's `RequestId` cannot hold (beyond 64 bits,
//!   `1.0`, `1e400`) reaches the service as the string of its digits, and its answer carries
//!   the number as written.
//! - A `subscriptions/listen` request for more URIs than one listen may hold is refused
//!   `-32602` from a scan of its line, before anything decodes it.
//! - For a server that serves skills, a `skills/get` whose URI is no `SKILL.md`'s, and a
//!   `skills/list` whose `cursor` is neither a string nor `null`, are refused `-32602` before
//!   rmcp decodes them: rmcp would echo the whole URI unescaped, and read such a cursor as none.
//! - A client that asked for MCP 2025-11-25 at `initialize` without declaring the tasks
//!   extension speaks that version's experimental tasks: its requests of that form
//!   (`tools/call` with `task`, `tools/list`, `tasks/*`) reach the server under methods of
//!   their own, and its `initialize` answer says `capabilities.tasks`.
//! - When the input ends or the output breaks (the client closed its end of the pipe), no
//!   further request is taken and every request in flight is cancelled, as if the client had
//!   sent `notifications/cancelled` for each: the handlers see their cancellation at once,
//!   and, as for any cancelled request, no answer is sent. A broken output is logged once.
//!   [`serve_stdio`] returns once those calls have ended (each stopped before its commit
//!   point, or finished what it committed, and logged), or after 30 s.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::ops::Range;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_fusion_wire::echo;
use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientNotification, ClientRequest, GetExtensions as _,
    JsonRpcMessage, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, Id, PARSE_ERROR};
use super::std_streams::{Stdin, Stdout};
use super::writer::{self, Outbox};
use crate::context::ClientPresence;
use crate::server::FusionServer;
use crate::server::skills::SkillsServed;
use crate::subscriptions::SubscriptionLimits;
use crate::task::experimental::{self, ExperimentalTasks};

/// Longest accepted line, newline excluded (64 MiB).
const MAX_LINE: usize = 64 << 20;

/// Requests in execution at once on one connection, unless
/// [`LineTransport::max_in_flight`] says otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// Serves `server` over stdio until the client closes the connection. Only MCP messages go
/// to stdout; log to stderr.
pub async fn serve_stdio(server: FusionServer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    use rmcp::service::ServerInitializeError;
    super::announce_when_unlogged(format_args!("on stdio"));
    let transport = stdio().for_server(&server);
    let calls = server.clone();
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // The client went away before initializing: nothing to serve, nothing wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(std::io::Error::other(error)),
    };
    running.waiting().await.map_err(std::io::Error::other)?;
    // The calls in flight were told of their cancellation: each stops before its commit point
    // or finishes what it committed, and logs its outcome, before the process may end.
    if tokio::time::timeout(CALLS_GRACE, calls.idle()).await.is_err() {
        tracing::warn!(
            calls = calls.in_flight(),
            "the client is gone and calls still run after {CALLS_GRACE:?}: ending without them"
        );
    }
    Ok(())
}

/// How long a server whose client went away waits for its calls in flight to end.
const CALLS_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

type Incoming = RxJsonRpcMessage<RoleServer>;

/// A server transport over a reader and a writer, one JSON-RPC message per line.
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    output: Arc<Outbox>,
    /// The writer, until the first use of the transport hands it to its writer task.
    writer: Option<W>,
    requests: Arc<Mutex<OpenRequests>>,
    /// Signalled when a request leaves the in-flight set, for a reader paused at the cap.
    released: Arc<tokio::sync::Notify>,
    max_in_flight: usize,
    /// What the server lets clients subscribe to: a listen request past it is refused here.
    limits: SubscriptionLimits,
    /// The skills the server serves, if any: the skills requests rmcp would answer amiss are
    /// refused here.
    skills: Option<SkillsServed>,
    line: Vec<u8>,
    discarding: bool,
    input_ended: bool,
    stopped: bool,
    /// Messages for the service before anything more is read: the cancellations of a stop.
    queued: VecDeque<Incoming>,
    /// Whether the client speaks the experimental tasks of MCP 2025-11-25 (known at its
    /// `initialize`): its requests of that form are served under methods of their own.
    experimental_tasks: bool,
    /// The id of the `initialize` request whose answer is still to go out.
    initialize: Option<RequestId>,
    /// Told when the client goes, in every request, so a call cancelled by its going can
    /// tell that from a cancellation the client asked for.
    presence: ClientPresence,
}

/// The transport on this process's stdin and stdout. Where they are pipes (as an MCP client
/// starts its server), they are read and written in non-blocking mode through the runtime's
/// I/O driver: call this inside a runtime with I/O enabled (`#[tokio::main]` is).
pub fn stdio() -> LineTransport<impl AsyncRead + Unpin + Send + 'static, impl AsyncWrite + Unpin + Send + 'static> {
    LineTransport::new(Stdin::open(), Stdout::open())
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Reads requests from `reader`, writes responses to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader: BufReader::new(reader),
            output: Arc::default(),
            writer: Some(writer),
            requests: Arc::default(),
            released: Arc::default(),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            limits: SubscriptionLimits::default(),
            skills: None,
            line: Vec::new(),
            discarding: false,
            input_ended: false,
            stopped: false,
            queued: VecDeque::new(),
            experimental_tasks: false,
            initialize: None,
            presence: ClientPresence::default(),
        }
    }

    /// Hands the writer to a task of its own; called where the transport is first used,
    /// inside the runtime.
    fn start_writer(&mut self) {
        if let Some(writer) = self.writer.take() {
            tokio::spawn(writer::write_out(Arc::clone(&self.output), writer));
        }
    }

    /// Executes at most `max` requests of this connection at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT`], at least 1): past it the transport stops reading until an
    /// answer goes out, so a client that pipelines thousands of requests waits in its own
    /// pipe instead of in the server's memory.
    pub fn max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self
    }

    /// The bounds of the server it serves (default [`SubscriptionLimits::default`]): a
    /// `subscriptions/listen` request for more URIs than one listen may hold is refused from a
    /// scan of its line, before rmcp decodes it and matches its URIs pairwise. Give the
    /// server's own ([`FusionServer::subscription_limits`]), or all of the server's checks with
    /// [`for_server`](Self::for_server), as [`serve_stdio`] does.
    pub fn subscription_limits(mut self, limits: SubscriptionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Refuses from a scan of each line what `server` would refuse, before rmcp decodes it: a
    /// `subscriptions/listen` past its [`subscription_limits`](Self::subscription_limits), and,
    /// when it serves skills, a `skills/get` whose URI is no `SKILL.md`'s (which rmcp would
    /// echo whole, unescaped) and a `skills/list` whose `cursor` is neither a string nor `null`
    /// (which rmcp would read as none). [`serve_stdio`] does this.
    pub fn for_server(mut self, server: &FusionServer) -> Self {
        self.skills = server.served_skills();
        self.subscription_limits(server.subscription_limits())
    }

    fn open_requests(&self) -> MutexGuard<'_, OpenRequests> {
        lock(&self.requests)
    }

    /// Returns once fewer than `max_in_flight` requests execute, or the output broke. It
    /// borrows no part of `self` across its waits, so `receive` stays `Send`.
    fn room(&self, broken: CancellationToken) -> impl Future<Output = ()> + Send + 'static {
        let (requests, released, max) = (Arc::clone(&self.requests), Arc::clone(&self.released), self.max_in_flight);
        async move {
            loop {
                // Registered before the check, so a release in between is not missed.
                let notified = released.notified();
                if lock(&requests).0.len() < max || broken.is_cancelled() {
                    return;
                }
                tokio::select! {
                    () = notified => {}
                    () = broken.cancelled() => return,
                }
            }
        }
    }

    /// The next line's text, without its line ending or a byte order mark; `None` when there
    /// is nothing to take from what was read (a blank line, a line too long, the input's end).
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        use tokio::io::AsyncReadExt as _;
        // `read_until` keeps what it read in `self.line` if this future is dropped (the
        // service polls it inside a `select!`), so a cancelled read resumes the same line.
        let budget = (MAX_LINE + 1).saturating_sub(self.line.len()) as u64;
        let read = (&mut self.reader).take(budget).read_until(b'\n', &mut self.line).await;
        if let Err(error) = read {
            tracing::error!("cannot read the transport: {error}");
            self.input_ended = true;
            return None;
        }
        let complete = self.line.last() == Some(&b'\n');
        if !complete && self.line.len() > MAX_LINE {
            // Over the limit and still no newline: refuse it once, and drop the rest of it.
            if !std::mem::replace(&mut self.discarding, true) {
                let head = std::mem::take(&mut self.line);
                self.refuse_too_long(&head);
            }
            self.line.clear();
            return None;
        }
        // Not complete and within the limit: the input ended; this is the last line.
        self.input_ended = !complete;
        let mut line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.discarding) {
            return None;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.starts_with("\u{feff}".as_bytes()) {
            line.drain(..3);
        }
        (!jsonrpc::is_blank(&line)).then_some(line)
    }

    /// One line: a message for the service, or answers owed to the client (queued), or nothing.
    fn take_line(&mut self, line: &[u8]) -> Option<Incoming> {
        let start = line.len() - line.trim_ascii_start().len();
        // A line of other ASCII whitespace (a form feed) got past the blank-line check, which
        // goes by JSON's whitespace: it has no first character.
        match line.get(start) {
            Some(b'{') => {}
            Some(b'[') => {
                self.refuse_batch(line, start);
                return None;
            }
            _ => {
                tracing::warn!("ignoring a line that is not a JSON-RPC message");
                return None;
            }
        }
        let mut values = jsonrpc::values(line);
        if let Some(first) = values.next()
            && !jsonrpc::is_blank(&line[first.end..])
        {
            let message = "Parse error: the line holds more than one JSON value; send one message per line";
            for value in std::iter::once(first).chain(values) {
                self.refuse(&line[value], PARSE_ERROR, message);
            }
            return None;
        }
        self.take_message(&line[start..])
    }

    /// One JSON-RPC object, perhaps cut short or undecodable.
    fn take_message(&mut self, object: &[u8]) -> Option<Incoming> {
        let head = jsonrpc::head(object);
        if !head.is_response() && matches!(head.id, Id::Null | Id::Invalid) {
            self.refuse(object, INVALID_REQUEST, bad_id_message(&head.id));
            return None;
        }
        if let Some(found) = jsonrpc::listen_uris(object, &head).filter(|&n| n > self.limits.uris_per_listen())
            && let Some(id) = head.id.echo()
        {
            let id = &object[id];
            tracing::warn!(id = %String::from_utf8_lossy(id), found, "refusing a listen request for too many URIs");
            self.reply(Some(id), INVALID_PARAMS, &self.limits.too_many_for_one_listen(found));
            return None;
        }
        if let Some(skills) = self.skills
            && let Some(id) = head.id.echo()
            && let Some(message) = jsonrpc::skills_refusal(object, &head, skills)
        {
            let id = &object[id];
            tracing::warn!(id = %echo(&String::from_utf8_lossy(id)), "refusing a skills request: {message}");
            self.reply(Some(id), INVALID_PARAMS, &message);
            return None;
        }
        let renamed = if self.experimental_tasks { jsonrpc::served_experimental(object, &head) } else { None };
        let (object, head) = match &renamed {
            Some(renamed) => (renamed.as_slice(), jsonrpc::head(renamed)),
            None => (object, head),
        };
        let (text, aliased) = alias_numbers(object, &head);
        match serde_json::from_slice::<Incoming>(&text) {
            Ok(JsonRpcMessage::Request(mut request)) => {
                let id = head.id.echo().map_or_else(
                    || serde_json::to_vec(&request.id).unwrap_or_default(),
                    |range| object[range].to_vec(),
                );
                if !self.open_requests().admit(&request.id, aliased.then(|| id.as_slice().into())) {
                    let id = String::from_utf8_lossy(&id);
                    let message =
                        format!("Invalid request: id {id} is already in use by a request in flight; use a new id");
                    tracing::warn!(id = %echo(&id), "refusing a request: its id is in flight");
                    self.reply(Some(id.as_bytes()), INVALID_REQUEST, &message);
                    return None;
                }
                if let ClientRequest::InitializeRequest(initialize) = &request.request
                    && self.initialize.is_none()
                {
                    self.experimental_tasks = experimental::spoken_by(&initialize.params);
                    self.initialize = Some(request.id.clone());
                }
                if self.experimental_tasks {
                    request.request.extensions_mut().insert(ExperimentalTasks);
                }
                request.request.extensions_mut().insert(self.presence.clone());
                Some(JsonRpcMessage::Request(request))
            }
            Ok(JsonRpcMessage::Notification(notification)) => {
                // The service answers nothing for a cancelled request: its id is free again.
                if let ClientNotification::CancelledNotification(cancelled) = &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.open_requests().release(id);
                    self.released.notify_one();
                }
                Some(JsonRpcMessage::Notification(notification))
            }
            Ok(message) => Some(message),
            Err(error) => {
                self.refuse_undecodable(object, &head, &error);
                None
            }
        }
    }

    fn refuse_undecodable(&mut self, object: &[u8], head: &jsonrpc::Head, error: &serde_json::Error) {
        let Some(id) = head.id.echo().filter(|_| !head.is_response()) else {
            tracing::warn!("ignoring an undecodable message that carries no request id: {}", echo(&error.to_string()));
            return;
        };
        let (code, message) = jsonrpc::refusal(error);
        let id = &object[id];
        tracing::warn!(id = %echo(&String::from_utf8_lossy(id)), "answering an undecodable request: {}", echo(&message));
        self.reply(Some(id), code, &message);
    }

    /// Refuses a batch: per element that carries an id, or once with id `null`.
    fn refuse_batch(&mut self, line: &[u8], start: usize) {
        let array = &line[start..];
        let (code, message) = if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
            (
                INVALID_REQUEST,
                "Invalid request: batches (JSON arrays) are not supported; send each message on its own line",
            )
        } else {
            (PARSE_ERROR, "Parse error: the line is not valid JSON, and batches (JSON arrays) are not supported")
        };
        let mut answered = false;
        for element in jsonrpc::elements(array) {
            answered |= self.refuse(&array[element], code, message);
        }
        if !answered {
            tracing::warn!("refusing a batch that carries no request id");
            self.reply(None, code, message);
        }
    }

    fn refuse_too_long(&mut self, head: &[u8]) {
        let start = head.strip_prefix("\u{feff}".as_bytes()).map_or(0, |_| 3);
        let head = head[start..].trim_ascii_start();
        let message = format!("Invalid request: the message is longer than {} bytes", MAX_LINE);
        if !self.refuse(head, INVALID_REQUEST, &message) {
            tracing::error!(max = MAX_LINE, "discarding a message longer than the line limit");
        }
    }

    /// Answers the request in `object` with an error, if it carries an id (`null` included);
    /// whether it did.
    fn refuse(&mut self, object: &[u8], code: i64, message: &str) -> bool {
        if object.first() != Some(&b'{') {
            return false;
        }
        let head = jsonrpc::head(object);
        if head.is_response() {
            return false;
        }
        let id = match &head.id {
            Id::Absent => return false,
            Id::Null | Id::Invalid => None,
            Id::Number(range) | Id::String(range) => Some(&object[range.clone()]),
        };
        tracing::warn!(id = %echo(&id.map_or(Cow::Borrowed("null"), String::from_utf8_lossy)), "refusing a request: {message}");
        self.reply(id, code, message);
        true
    }

    fn reply(&mut self, id: Option<&[u8]>, code: i64, message: &str) {
        let mut reply = jsonrpc::error_reply(id, code, message);
        reply.push(b'\n');
        self.output.push(&reply);
    }

    /// Takes no more requests, and has the service cancel those in flight.
    fn stop(&mut self) {
        self.stopped = true;
        self.presence.leave();
        let ids = self.open_requests().drain();
        if !ids.is_empty() {
            tracing::info!(requests = ids.len(), "the client is gone: cancelling the requests in flight");
        }
        for id in ids {
            let param = CancelledNotificationParam::new(Some(id), Some("the client closed the connection".into()));
            let cancelled = ClientNotification::from(CancelledNotification::new(param));
            self.queued.push_back(JsonRpcMessage::notification(cancelled));
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "mcp-fusion line transport".into()
    }

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.start_writer();
        if let JsonRpcMessage::Response(response) = &mut item
            && self.experimental_tasks
            && self.initialize.as_ref() == Some(&response.id)
            && let ServerResult::InitializeResult(result) = &response.result
        {
            response.result = experimental::initialize_result(result);
        }
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        // Released before the write: the client may reuse the id once it reads the answer.
        let original = answered.and_then(|id| self.open_requests().release(id));
        if answered.is_some() {
            self.released.notify_one();
        }
        let line = serde_json::to_vec(&item).map(|mut line| {
            if let Some(original) = original {
                restore_id(&mut line, &original);
            }
            line.push(b'\n');
            line
        });
        let output = Arc::clone(&self.output);
        async move {
            let line = line.map_err(io::Error::other)?;
            output.room().await;
            output.push(&line);
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<Incoming> {
        self.start_writer();
        loop {
            // The transport's own answers wait in the output too: a client that sends
            // garbage and reads nothing is not read further.
            self.output.room().await;
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            if self.stopped {
                return None;
            }
            let broken = self.output.broken.clone();
            if self.input_ended || broken.is_cancelled() {
                self.stop();
                continue;
            }
            self.room(broken.clone()).await;
            let line = tokio::select! {
                biased;
                () = broken.cancelled() => continue,
                line = self.next_line() => line,
            };
            if let Some(line) = line
                && let Some(message) = self.take_line(&line)
            {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.start_writer();
        self.output.close();
        self.output.closed.cancelled().await;
        Ok(())
    }
}

impl<R, W> Drop for LineTransport<R, W> {
    fn drop(&mut self) {
        // The writer task writes what is queued, then ends.
        self.output.close();
    }
}

/// The client's requests passed on to the service and not answered yet, by the id the
/// service knows; for a number it could not hold, the number as the client wrote it.
#[derive(Debug, Default)]
struct OpenRequests(HashMap<RequestId, Option<Box<[u8]>>>);

impl OpenRequests {
    /// Takes `id` in; false if a request in flight already has it.
    fn admit(&mut self, id: &RequestId, original: Option<Box<[u8]>>) -> bool {
        if self.0.contains_key(id) {
            return false;
        }
        self.0.insert(id.clone(), original);
        true
    }

    /// Lets `id` go; the number it stood for, if any.
    fn release(&mut self, id: &RequestId) -> Option<Box<[u8]>> {
        self.0.remove(id).flatten()
    }

    fn drain(&mut self) -> Vec<RequestId> {
        self.0.drain().map(|(id, _)| id).collect()
    }
}

fn lock(requests: &Mutex<OpenRequests>) -> MutexGuard<'_, OpenRequests> {
    requests.lock().unwrap_or_else(PoisonError::into_inner)
}

fn bad_id_message(id: &Id) -> &'static str {
    if *id == Id::Null {
        "Invalid request: the id is null; a request's id is a string or a number, and a notification has none"
    } else {
        "Invalid request: the id must be a string or a number"
    }
}

/// `object` with each number id rmcp's `RequestId` cannot hold (the request's own, and the
/// one a `notifications/cancelled` names) turned into the string of its digits; and whether
/// the request's own id was.
fn alias_numbers<'a>(object: &'a [u8], head: &jsonrpc::Head) -> (Cow<'a, [u8]>, bool) {
    let needs_alias =
        |range: &Range<usize>| object[range.start] != b'"' && !jsonrpc::is_plain_i64(&object[range.clone()]);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let own = head.id.echo().filter(needs_alias);
    ranges.extend(own.clone());
    if let (Some(method), Some(params)) = (&head.method, &head.params)
        && &object[method.clone()] == br#""notifications/cancelled""#
        && let Some(named) = jsonrpc::member(&object[params.clone()], "requestId")
    {
        let named = params.start + named.start..params.start + named.end;
        ranges.extend(Some(named).filter(needs_alias));
    }
    if ranges.is_empty() {
        return (Cow::Borrowed(object), false);
    }
    ranges.sort_by_key(|range| range.start);
    let mut text = Vec::with_capacity(object.len() + 2 * ranges.len());
    let mut at = 0;
    for range in ranges {
        text.extend_from_slice(&object[at..range.start]);
        text.push(b'"');
        text.extend_from_slice(&object[range.clone()]);
        text.push(b'"');
        at = range.end;
    }
    text.extend_from_slice(&object[at..]);
    (Cow::Owned(text), own.is_some())
}

/// Puts the number the client wrote back in place of the string id it travelled as.
fn restore_id(line: &mut Vec<u8>, original: &[u8]) {
    if let Id::String(range) = jsonrpc::request_id(line) {
        line.splice(range, original.iter().copied());
    }
}
