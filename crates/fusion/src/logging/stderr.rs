//! A log on stderr that never blocks serving.
//!
//! MCP lets a stdio client ignore a server's stderr. A pipe nobody reads fills after some 64 KiB,
//! and a log written straight to it would then stop whichever thread logs next — a runtime
//! worker in the middle of a call. Here a line goes into a bounded queue that a thread of its
//! own writes out; when the queue is full the line is dropped, counted, and the count is said on
//! stderr as soon as stderr takes lines again.
//!
//! Written here rather than taken from `tracing-appender`: its guard prints to stdout when the
//! queue is full at exit, and stdout is a stdio server's transport.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

use crate::observe::LOG_LINES_DROPPED_TOTAL;

/// How many lines wait for stderr before new ones are dropped: a few MiB at most.
const QUEUED_LINES: usize = 16 * 1024;

/// How long dropping the [`LogGuard`] waits for the queued lines to reach stderr.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

/// Writes log lines to stderr without ever waiting for it: give it to
/// `tracing_subscriber::fmt::layer().with_writer(…)`. Made by [`stderr()`].
#[derive(Debug, Clone)]
pub struct NonBlockingStderr {
    queue: SyncSender<Message>,
    dropped: Arc<AtomicU64>,
}

/// Keeps the queued lines: dropping it (at the end of `main`) waits up to a second for them to
/// reach stderr. Lines logged after it is dropped are still written while the process lives.
#[must_use = "dropping the guard at once would not wait for the last lines at exit; keep it until main returns"]
#[derive(Debug)]
pub struct LogGuard {
    queue: SyncSender<Message>,
}

enum Message {
    Line(Vec<u8>),
    /// Answered once every line queued before it is written.
    Flush(std::sync::mpsc::Sender<()>),
}

/// A writer for a `tracing` log on stderr that drops lines rather than wait for a full pipe,
/// and the guard that flushes it at exit.
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
///
/// let (stderr, _guard) = mcp_fusion::logging::stderr();
/// let subscriber = tracing_subscriber::registry().with(tracing_subscriber::fmt::layer().with_writer(stderr.clone()));
/// # let _ = subscriber;
/// assert_eq!(stderr.dropped_lines(), 0);
/// ```
pub fn stderr() -> (NonBlockingStderr, LogGuard) {
    let (queue, lines) = std::sync::mpsc::sync_channel(QUEUED_LINES);
    let dropped = Arc::new(AtomicU64::new(0));
    let told = Arc::clone(&dropped);
    // A thread rather than a task: writing blocks, and a log must work outside a runtime too.
    let spawned = std::thread::Builder::new()
        .name("mcp-fusion-log".into())
        .spawn(move || write_out(&lines, &told, &mut std::io::stderr()));
    if let Err(error) = spawned {
        // Without the thread every line is dropped, and counted; say so the one way left.
        let _ = writeln!(std::io::stderr(), "mcp-fusion: no thread for the log ({error}): log lines are dropped");
    }
    (NonBlockingStderr { queue: queue.clone(), dropped }, LogGuard { queue })
}

impl NonBlockingStderr {
    /// How many lines were dropped because stderr did not take them fast enough.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn send(&self, line: &[u8]) {
        match self.queue.try_send(Message::Line(line.to_vec())) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(LOG_LINES_DROPPED_TOTAL).increment(1);
            }
        }
    }
}

/// Writes the queue out until every sender is gone, saying after a line how many were dropped
/// since the last time it said so.
fn write_out(lines: &Receiver<Message>, dropped: &AtomicU64, out: &mut impl Write) {
    let mut said = 0;
    for message in lines {
        match message {
            Message::Line(line) => {
                // A closed stderr fails every write; the lines are gone either way.
                let _ = out.write_all(&line);
                let now = dropped.load(Ordering::Relaxed);
                if now > said {
                    let _ = writeln!(
                        out,
                        "mcp-fusion: {} log line(s) dropped: stderr was not read as fast as they came",
                        now - said
                    );
                    said = now;
                }
            }
            Message::Flush(done) => {
                let _ = out.flush();
                let _ = done.send(());
            }
        }
    }
}

impl Write for NonBlockingStderr {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        self.send(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for NonBlockingStderr {
    type Writer = NonBlockingStderr;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        let deadline = Instant::now() + FLUSH_WAIT;
        let (done, flushed) = std::sync::mpsc::channel();
        let mut flush = Message::Flush(done);
        loop {
            match self.queue.try_send(flush) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => return,
                Err(TrySendError::Full(again)) if Instant::now() < deadline => {
                    flush = again;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TrySendError::Full(_)) => return,
            }
        }
        let _ = flushed.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes nothing until it is opened, like a pipe nobody reads.
    struct Stuck {
        open: Receiver<()>,
        taken: Arc<std::sync::Mutex<Vec<u8>>>,
    }

    impl Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.open.recv();
            self.taken.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_queue_drops_lines_counts_them_and_says_so_once_the_writer_moves() {
        let (queue, lines) = std::sync::mpsc::sync_channel(4);
        let dropped = Arc::new(AtomicU64::new(0));
        let writer = NonBlockingStderr { queue, dropped: Arc::clone(&dropped) };
        let (open, opened) = std::sync::mpsc::channel();
        let taken = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut stuck = Stuck { open: opened, taken: Arc::clone(&taken) };
        let told = Arc::clone(&dropped);
        // Every line is sent before the writer starts: 4 fit, 6 are dropped, none waits.
        for n in 0..10 {
            writer.send(format!("line {n}\n").as_bytes());
        }
        assert_eq!(writer.dropped_lines(), 6);
        for _ in 0..64 {
            open.send(()).unwrap();
        }
        drop(writer);
        write_out(&lines, &told, &mut stuck);
        let text = String::from_utf8(taken.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "line 0\nmcp-fusion: 6 log line(s) dropped: stderr was not read as fast as they came\nline 1\nline 2\nline 3\n"
        );
    }

    #[test]
    fn the_guard_waits_for_the_queued_lines_and_not_for_a_writer_that_never_moves() {
        let (_writer, guard) = stderr();
        drop(guard);
        // A queue nobody empties: the guard gives up at its deadline instead of hanging.
        let (queue, _lines) = std::sync::mpsc::sync_channel(0);
        let started = Instant::now();
        drop(LogGuard { queue });
        assert!(started.elapsed() < FLUSH_WAIT * 30, "the guard waited {:?}", started.elapsed());
    }
}
