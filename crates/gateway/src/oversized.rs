//! Answers too large to read. rmcp drops a line from a stdio upstream longer than its frame
//! cap without a word to the request it answered, which would then wait forever. So the
//! child's stdout is read through a [`Measured`] reader that sees every line go by: when one
//! passes the cap, the call it answers is told ([`Dropped`]) and answers at once.
//!
//! Which call a dropped line answered is read from its ends, the only parts kept: a JSON-RPC
//! answer that names its `id` first (`{"jsonrpc":"2.0","id":7,"result":…`, as rmcp and the
//! Python SDK write it) or last (`…,"jsonrpc":"2.0","id":7}`, as the TypeScript SDK does).
//! A line that starts as a request or a notification of the upstream is nobody's answer; one
//! whose id is found at neither end may have answered any call in flight, so each of them is
//! told.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{NumberOrString, RequestId};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::oneshot;

/// The most bytes one message from an upstream may take: rmcp's cap, over stdio and HTTP.
pub(crate) const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How many bytes of each end of a line are kept to find its id.
const ENDS: usize = 64;

/// The `tools/call`s in flight on one connection, each told when its answer was dropped for
/// its size.
#[derive(Clone, Default)]
pub(crate) struct Dropped(Arc<Mutex<HashMap<RequestId, Slot>>>);

/// One call's word that its answer was dropped: opened when its request is sent, read by the
/// forwarder that claims it.
struct Slot {
    sender: Option<oneshot::Sender<()>>,
    receiver: Option<oneshot::Receiver<()>>,
}

impl Slot {
    fn new() -> Slot {
        let (sender, receiver) = oneshot::channel();
        Slot { sender: Some(sender), receiver: Some(receiver) }
    }
}

impl Dropped {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Slot>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens the slot of a call about to be sent, before its answer can come.
    pub(crate) fn open(&self, id: RequestId) {
        self.lock().entry(id).or_insert_with(Slot::new);
    }

    /// The word that the answer of the call `id` was dropped, until the guard drops.
    pub(crate) fn claim(&self, id: &RequestId) -> (SlotGuard, Option<oneshot::Receiver<()>>) {
        let receiver = self.lock().entry(id.clone()).or_insert_with(Slot::new).receiver.take();
        (SlotGuard { dropped: self.clone(), id: id.clone() }, receiver)
    }

    /// Tells the call `id` that its answer was dropped, or every call in flight when which
    /// one it answered is unknown.
    fn report(&self, id: Option<&RequestId>) {
        let mut slots = self.lock();
        let told: Vec<&mut Slot> = match id {
            Some(id) => slots.get_mut(id).into_iter().collect(),
            None => slots.values_mut().collect(),
        };
        for slot in told {
            if let Some(sender) = slot.sender.take() {
                let _ = sender.send(());
            }
        }
    }
}

/// Closes a call's slot when the call ends, however it ends.
pub(crate) struct SlotGuard {
    dropped: Dropped,
    id: RequestId,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.dropped.lock().remove(&self.id);
    }
}

/// A reader that measures each line going through it and reports those over `max` bytes
/// (their newline counted, as rmcp counts) to `dropped`.
pub(crate) struct Measured<R> {
    inner: R,
    max: usize,
    dropped: Dropped,
    line: Line,
}

/// What is kept of the line being read.
#[derive(Default)]
struct Line {
    len: usize,
    head: Vec<u8>,
    /// The last bytes read, at most `2 * ENDS` (cut back to `ENDS` when full).
    tail: Vec<u8>,
    /// Whether the line was already reported (its head named its id).
    reported: bool,
}

impl<R> Measured<R> {
    pub(crate) fn new(inner: R, max: usize, dropped: Dropped) -> Measured<R> {
        Measured { inner, max, dropped, line: Line::default() }
    }

    fn observe(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, ended) = match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => (&bytes[..at], Some(at + 1)),
                None => (bytes, None),
            };
            self.extend(part);
            match ended {
                Some(next) => {
                    self.end_line();
                    bytes = &bytes[next..];
                }
                None => bytes = &[],
            }
        }
    }

    fn extend(&mut self, part: &[u8]) {
        let line = &mut self.line;
        let room = ENDS.saturating_sub(line.head.len());
        line.head.extend_from_slice(&part[..part.len().min(room)]);
        line.tail.extend_from_slice(&part[part.len().saturating_sub(ENDS)..]);
        if line.tail.len() > 2 * ENDS {
            line.tail.drain(..line.tail.len() - ENDS);
        }
        line.len += part.len();
        // With its newline it takes one byte more: at `max` it is dropped, whatever follows.
        if line.len >= self.max
            && !line.reported
            && let Head::Answer(id) = head_of(&line.head)
        {
            line.reported = true;
            self.dropped.report(Some(&id));
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.len < self.max || line.reported {
            return;
        }
        match head_of(&line.head) {
            Head::NotAnAnswer => {}
            Head::Answer(id) => self.dropped.report(Some(&id)),
            Head::Unknown => self.dropped.report(id_at_end(&line.tail).as_ref()),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Measured<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            this.observe(&buf.filled()[before..]);
        }
        polled
    }
}

/// What the start of a line says it is.
#[derive(Debug, PartialEq)]
enum Head {
    /// An answer to the request `id`.
    Answer(RequestId),
    /// A request or a notification of the upstream.
    NotAnAnswer,
    /// Nothing certain.
    Unknown,
}

/// Reads the first keys of a JSON-RPC message: `id` first or after `"jsonrpc":"2.0"`, and
/// the key after it.
fn head_of(head: &[u8]) -> Head {
    let mut at = Cursor(head);
    if at.byte(b'{').is_none() {
        return Head::Unknown;
    }
    for _ in 0..2 {
        let Some(key) = at.key() else { return Head::Unknown };
        match key {
            b"id" => {
                let Some(id) = at.number() else { return Head::Unknown };
                return match at.byte(b',').and_then(|()| at.key()) {
                    Some(b"result" | b"error") => Head::Answer(id),
                    Some(b"method") => Head::NotAnAnswer,
                    _ => Head::Unknown,
                };
            }
            b"method" => return Head::NotAnAnswer,
            b"jsonrpc" if at.string() == Some(b"2.0") && at.byte(b',').is_some() => {}
            _ => return Head::Unknown,
        }
    }
    Head::Unknown
}

/// The id a message ends with (`…,"id":7}`): the key of the object the last brace closes,
/// which is the message itself.
fn id_at_end(tail: &[u8]) -> Option<RequestId> {
    let mut end = tail.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    let digits = end.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (rest, number) = end.split_at(end.len() - digits);
    let (rest, negative) = match rest.strip_suffix(b"-") {
        Some(rest) => (rest, true),
        None => (rest, false),
    };
    let id: i64 = std::str::from_utf8(number).ok()?.parse().ok()?;
    end = rest.trim_ascii_end().strip_suffix(b":")?.trim_ascii_end().strip_suffix(b"\"id\"")?.trim_ascii_end();
    matches!(end.last(), Some(b',' | b'{')).then(|| NumberOrString::Number(if negative { -id } else { id }))
}

/// A cursor over the start of a line.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        self.0 = self.0.trim_ascii_start();
    }

    fn byte(&mut self, expected: u8) -> Option<()> {
        self.skip_space();
        let (first, rest) = self.0.split_first()?;
        (*first == expected).then(|| self.0 = rest)
    }

    /// A string without escapes.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let end = self.0.iter().position(|b| *b == b'"' || *b == b'\\')?;
        let (text, rest) = self.0.split_at(end);
        self.0 = rest.strip_prefix(b"\"")?;
        Some(text)
    }

    fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.string()?;
        self.byte(b':')?;
        Some(key)
    }

    fn number(&mut self) -> Option<RequestId> {
        self.skip_space();
        let sign = usize::from(self.0.first() == Some(&b'-'));
        let digits = self.0[sign..].iter().take_while(|b| b.is_ascii_digit()).count();
        let (number, rest) = self.0.split_at(sign + digits);
        // A number cut by the end of what was kept is not the whole id.
        if digits == 0 || rest.is_empty() {
            return None;
        }
        self.0 = rest;
        Some(NumberOrString::Number(std::str::from_utf8(number).ok()?.parse().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        NumberOrString::Number(n)
    }

    #[test]
    fn the_head_says_whose_answer_a_line_is() {
        assert_eq!(head_of(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"#), Head::Answer(id(7)));
        assert_eq!(head_of(br#"{"jsonrpc": "2.0", "id": 12, "error": {"#), Head::Answer(id(12)));
        assert_eq!(head_of(br#"{"id":3,"result":{}"#), Head::Answer(id(3)));
        assert_eq!(head_of(br#"{"jsonrpc":"2.0","method":"notifications/message","#), Head::NotAnAnswer);
        assert_eq!(head_of(br#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage""#), Head::NotAnAnswer);
        assert_eq!(head_of(br#"{"result":{"id":9,"content":"#), Head::Unknown);
        assert_eq!(head_of(br#"{"jsonrpc":"2.0","id":"a","result""#), Head::Unknown);
        assert_eq!(head_of(br#"{"jsonrpc":"2.0","id":12"#), Head::Unknown, "cut inside the id");
        assert_eq!(head_of(b"zzzz"), Head::Unknown);
    }

    #[test]
    fn the_end_says_whose_answer_a_line_is() {
        assert_eq!(id_at_end(br#"zzz"}]},"jsonrpc":"2.0","id":7}"#), Some(id(7)));
        assert_eq!(id_at_end(b"zz\"}, \"id\" : 15 }\r"), Some(id(15)));
        // An `id` inside the result is closed by a brace the message's own end follows.
        assert_eq!(id_at_end(br#"{"id":7}}"#), None);
        assert_eq!(id_at_end(br#""text":"id":7}"#), None);
        assert_eq!(id_at_end(b"zzzz"), None);
    }

    /// A reader of `bytes` measured against `max`, read to its end.
    async fn read(bytes: &[u8], max: usize, dropped: &Dropped) {
        use tokio::io::AsyncReadExt as _;
        let mut reader = Measured::new(bytes, max, dropped.clone());
        let mut sink = Vec::new();
        reader.read_to_end(&mut sink).await.unwrap();
        assert_eq!(sink, bytes, "what is read passes through unchanged");
    }

    #[tokio::test]
    async fn a_line_over_the_cap_tells_the_call_it_answered() {
        let dropped = Dropped::default();
        for n in 1..=4 {
            dropped.open(id(n));
        }
        let claims: Vec<_> = (1..=4).map(|n| dropped.claim(&id(n))).collect();
        let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"{}\"}}\n", "z".repeat(100));
        let tail = format!("{{\"result\":\"{}\",\"jsonrpc\":\"2.0\",\"id\":2}}\n", "z".repeat(100));
        let short = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n";
        let notification = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"{}\"}}\n", "z".repeat(100));
        read(format!("{head}{short}{tail}{notification}").as_bytes(), 80, &dropped).await;
        let told: Vec<bool> =
            claims.into_iter().map(|(_guard, mut word)| word.take().unwrap().try_recv().is_ok()).collect();
        assert_eq!(told, [true, true, false, false]);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_that_names_no_call_tells_every_call() {
        let dropped = Dropped::default();
        dropped.open(id(1));
        dropped.open(id(2));
        let (_one, one) = dropped.claim(&id(1));
        let (_two, two) = dropped.claim(&id(2));
        read(format!("{{\"result\":\"{}\"}}\n", "z".repeat(100)).as_bytes(), 80, &dropped).await;
        assert!(one.unwrap().try_recv().is_ok() && two.unwrap().try_recv().is_ok());
        // A closed call's slot is gone with its guard.
        drop(_one);
        assert_eq!(dropped.lock().len(), 1);
    }
}
