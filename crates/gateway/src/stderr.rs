//! What a stdio upstream writes on stderr: read as it comes and passed on to the gateway's log,
//! one `tracing` event per line, tagged with the mount.
//!
//! A child that shared the gateway's stderr would block on it once the pipe filled (some 64 KiB)
//! whenever the gateway's client does not read it, which MCP allows; an upstream that logs each
//! request, as the Python SDK does at INFO, then stops answering after a few hundred calls.
//! Read here, its lines go wherever the gateway's log goes, and `fusion-gateway`'s log drops
//! (and counts) the lines its stderr does not take in time instead of waiting for them.

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncRead, BufReader};

use crate::build_log::BuildLog;

/// The `tracing` target of the lines a stdio upstream writes on stderr, logged at INFO with
/// the mount's namespace as `mount` and the line as `line`: `RUST_LOG=info,upstream=off` leaves
/// them out.
pub const UPSTREAM_LOG_TARGET: &str = "upstream";

/// The most bytes of one line that are kept: the 2,048 characters a log value shows at most,
/// four bytes each at most. The rest of a longer line is read past and counted, never held.
const LONGEST_LINE: usize = 4 * mcp_fusion::observe::MAX_LOG_VALUE_CHARS;

/// Reads `stderr` to its end on a task of its own: each line logged under `mount`, and noted
/// in `build_log` when one is given, which is told when the end comes.
pub(crate) fn pass_on<R>(stderr: R, mount: Arc<str>, build_log: Option<BuildLog>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        // A failed read ends it as the end does: the child is gone, or going.
        while let Ok(Some(cut)) = read_line(&mut reader, &mut line).await {
            let text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(&line));
            // The value is escaped by the log's formatter (`EscapedFields` in `fusion-gateway`).
            if cut == 0 {
                tracing::info!(target: UPSTREAM_LOG_TARGET, mount = &*mount, line = &*text);
            } else {
                tracing::info!(target: UPSTREAM_LOG_TARGET, mount = &*mount, line = &*text, cut_bytes = cut);
            }
            if let Some(log) = &build_log {
                log.note(&text);
            }
        }
        if let Some(log) = &build_log {
            log.end();
        }
    });
}

/// Reads the next line into `line`, without its `\n` and at most [`LONGEST_LINE`] bytes of it
/// (ending on a whole character): how many bytes of it were left out, or `None` at the end.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, line: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    line.clear();
    let mut cut = 0;
    let mut read_any = false;
    loop {
        let buffered = reader.fill_buf().await?;
        if buffered.is_empty() {
            // A last line without its `\n` is a line all the same.
            return Ok(read_any.then(|| cut_off(line, cut)));
        }
        read_any = true;
        let (part, used, ended) = match buffered.iter().position(|&byte| byte == b'\n') {
            Some(at) => (&buffered[..at], at + 1, true),
            None => (buffered, buffered.len(), false),
        };
        let kept = part.len().min(LONGEST_LINE - line.len());
        line.extend_from_slice(&part[..kept]);
        cut += part.len() - kept;
        reader.consume(used);
        if ended {
            return Ok(Some(cut_off(line, cut)));
        }
    }
}

/// How many bytes of a line were left out: `cut`, and the character it split, dropped.
fn cut_off(line: &mut Vec<u8>, cut: usize) -> usize {
    if cut == 0 { 0 } else { cut + whole_characters(line) }
}

/// Drops from the end of `line` a character cut in the middle, so its lossy reading shows no
/// replacement character the upstream never wrote; how many bytes were dropped.
fn whole_characters(line: &mut Vec<u8>) -> usize {
    // The last character starts in the last three bytes, unless it is whole at four.
    let start = line.len().saturating_sub(3);
    let Some(lead) = (start..line.len()).rev().find(|&at| line[at] & 0xc0 != 0x80) else { return 0 };
    let length = match line[lead] {
        byte if byte & 0xe0 == 0xc0 => 2,
        byte if byte & 0xf0 == 0xe0 => 3,
        byte if byte & 0xf8 == 0xf0 => 4,
        _ => return 0,
    };
    if line.len() - lead >= length {
        return 0;
    }
    let dropped = line.len() - lead;
    line.truncate(lead);
    dropped
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// Every line of `bytes` as read, with how much of it was left out.
    async fn lines(bytes: &[u8]) -> Vec<(String, usize)> {
        let mut reader = BufReader::with_capacity(64, bytes);
        let mut line = Vec::new();
        let mut read = Vec::new();
        while let Some(cut) = read_line(&mut reader, &mut line).await.unwrap() {
            read.push((String::from_utf8_lossy(&line).into_owned(), cut));
        }
        read
    }

    #[tokio::test]
    async fn a_line_is_cut_at_the_limit_on_a_whole_character_and_the_rest_counted() {
        let long = "x".repeat(LONGEST_LINE + 10);
        let split = "y".repeat(LONGEST_LINE - 1) + "é and more";
        let text = format!("one\r\n\n{long}\n{split}\nlast without end");
        let read = lines(text.as_bytes()).await;
        let expected = [
            ("one\r".to_owned(), 0),
            (String::new(), 0),
            ("x".repeat(LONGEST_LINE), 10),
            // `é` is two bytes, of which one would fit.
            ("y".repeat(LONGEST_LINE - 1), "é and more".len()),
            ("last without end".to_owned(), 0),
        ];
        assert_eq!(read, expected);
        assert_eq!(lines(b"").await, []);
        assert_eq!(lines(b"\xff\xfe\n").await, [("\u{fffd}\u{fffd}".to_owned(), 0)]);
    }

    #[test]
    fn only_a_character_cut_in_its_middle_is_dropped() {
        for (bytes, kept) in [
            (&b"ab"[..], &b"ab"[..]),
            (b"a\xc3", b"a"),
            (b"a\xe2\x80", b"a"),
            (b"a\xf0\x9f\x98", b"a"),
            (b"a\xf0\x9f\x98\x80", b"a\xf0\x9f\x98\x80"),
            (b"a\xc3\xa9", b"a\xc3\xa9"),
            // Bytes that are no UTF-8 to begin with are the upstream's, and read lossily.
            (b"a\xff", b"a\xff"),
            (b"\x80\x80\x80", b"\x80\x80\x80"),
        ] {
            let mut line = bytes.to_vec();
            assert_eq!(whole_characters(&mut line), bytes.len() - kept.len(), "{bytes:?}");
            assert_eq!(line, kept, "{bytes:?}");
        }
    }

    /// What a `fmt` layer formatting as `fusion-gateway` does writes.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Written {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn each_line_is_one_event_of_the_mount_escaped_by_the_log() {
        let written = Written::default();
        let out = written.clone();
        let log = tracing_subscriber::fmt::layer()
            .with_writer(move || out.clone())
            .with_ansi(false)
            .without_time()
            .fmt_fields(mcp_fusion::observe::EscapedFields::new());
        let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(log));
        let build_log = BuildLog::default();
        pass_on(
            &b"Processing request\nbell\x07 esc\x1b[2J \xe2\x80\xae rtl\rover\n"[..],
            "crm".into(),
            Some(build_log.clone()),
        );
        // The build log is told when the reading ends: every line is logged by then.
        let why = build_log.why("it closed the connection".into()).await;
        assert_eq!(why, "it closed the connection; its last words: 'bell\\u{7} esc \\u{202e} rtl\\rover'");
        let text = String::from_utf8(written.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            concat!(
                " INFO upstream: mount=\"crm\" line=\"Processing request\"\n",
                " INFO upstream: mount=\"crm\" line=\"bell\\u{7} esc\\u{1b}[2J \\u{202e} rtl\\rover\"\n",
            )
        );
    }
}
