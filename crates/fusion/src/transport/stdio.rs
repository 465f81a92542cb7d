//! stdio: newline-delimited JSON-RPC over any byte stream (stdin and stdout, pipes),
//! answering frames the SDK would drop in silence.
//!
//! rmcp ignores lines it cannot parse. For text that is not JSON that is deliberate (replying
//! to garbage can start an error storm with a peer that echoes it), and this transport does
//! the same. But a request that is valid JSON and merely too deeply nested for the decoder
//! would leave its caller waiting forever; here it gets a JSON-RPC error carrying its id.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::server::FusionServer;

/// Longest accepted line; longer ones are discarded with a log line (64 MiB).
const MAX_LINE: usize = 64 << 20;

/// Serves `server` over stdio until the client closes the connection. Only MCP messages go
/// to stdout; log to stderr.
pub async fn serve_stdio(server: FusionServer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    use rmcp::service::ServerInitializeError;
    let running = match server.serve(stdio()).await {
        Ok(running) => running,
        // The client went away before initializing: nothing to serve, nothing wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(std::io::Error::other(error)),
    };
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// A server transport over a reader and a writer, one JSON-RPC message per line.
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    line: Vec<u8>,
    discarding: bool,
    eof: bool,
}

/// The transport on this process's stdin and stdout.
pub fn stdio() -> LineTransport<tokio::io::Stdin, tokio::io::Stdout> {
    LineTransport::new(tokio::io::stdin(), tokio::io::stdout())
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
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::new(),
            discarding: false,
            eof: false,
        }
    }

    async fn write_line(writer: &Mutex<W>, mut bytes: Vec<u8>) -> std::io::Result<()> {
        bytes.push(b'\n');
        let mut writer = writer.lock().await;
        writer.write_all(&bytes).await?;
        writer.flush().await
    }

    /// What to do with a line that did not decode as a message.
    fn reply_for(line: &[u8], error: &serde_json::Error) -> Option<Vec<u8>> {
        let too_deep = error.to_string().contains("recursion limit exceeded");
        let (code, message) = match error.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof if !too_deep => {
                tracing::warn!("ignoring a line that is not JSON: {error}");
                return None;
            }
            _ if too_deep => {
                (-32600, "Invalid request: the message nests deeper than 128 levels; send flatter arguments".to_owned())
            }
            _ => (-32600, format!("Invalid request: {error}")),
        };
        let id = top_level_id(line)?;
        tracing::warn!(%id, "answering an undecodable request: {message}");
        let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        Some(reply.to_string().into_bytes())
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
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let bytes = serde_json::to_vec(&item);
        async move { Self::write_line(&writer, bytes.map_err(std::io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        use tokio::io::AsyncReadExt as _;
        loop {
            if self.eof {
                return None;
            }
            // `read_until` keeps what it read in `self.line` if this future is dropped (the
            // service polls it inside a `select!`), so a cancelled read resumes the same line.
            let budget = (MAX_LINE + 1).saturating_sub(self.line.len()) as u64;
            let read = (&mut self.reader).take(budget).read_until(b'\n', &mut self.line).await;
            if let Err(error) = read {
                tracing::error!("cannot read the transport: {error}");
                return None;
            }
            let complete = self.line.last() == Some(&b'\n');
            if !complete && self.line.len() > MAX_LINE {
                // Over the limit and still no newline: drop it, and the rest of the line.
                tracing::error!(max = MAX_LINE, "discarding a message longer than the line limit");
                self.line.clear();
                self.discarding = true;
                continue;
            }
            // Not complete and within the limit: the input ended; this is the last line.
            self.eof = !complete;
            let line = std::mem::take(&mut self.line);
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
                Ok(message) => return Some(message),
                Err(error) => {
                    if let Some(reply) = Self::reply_for(text, &error)
                        && let Err(error) = Self::write_line(&self.writer, reply).await
                    {
                        tracing::error!("cannot write the transport: {error}");
                        return None;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.shutdown().await
    }
}

/// The `id` of a JSON object's top level, found without building the (possibly too deep)
/// value: a scan that tracks strings and nesting.
fn top_level_id(line: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i)?;
                if depth == 1 && &line[i..=end] == b"\"id\"" {
                    let rest = &line[end + 1..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    if rest[colon] != b':' {
                        return None;
                    }
                    let mut stream = serde_json::Deserializer::from_slice(&rest[colon + 1..]).into_iter::<Value>();
                    return match stream.next()? {
                        Ok(id @ (Value::Number(_) | Value::String(_))) => Some(id),
                        _ => None,
                    };
                }
                i = end;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(line: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_top_level_id_only() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","params":{{"id":"inner","a":{}1{}}},"id": 7}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(top_level_id(deep.as_bytes()), Some(Value::from(7)));
        assert_eq!(top_level_id(br#"{"id":"a\"b","x":1}"#), Some(Value::from("a\"b")));
        assert_eq!(top_level_id(br#"{"method":"x"}"#), None);
        assert_eq!(top_level_id(br#"{"id":null}"#), None);
        assert_eq!(top_level_id(br#"{"id""#), None);
        assert_eq!(top_level_id(b"\"unterminated"), None);
    }
}
