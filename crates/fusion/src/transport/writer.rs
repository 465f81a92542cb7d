//! The line transport's output: every message is queued, and one task writes whatever is
//! queued in a single `write`, so that answers finishing together leave together and no
//! message waits for a lock or a thread hop.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Bytes queued beyond which senders wait for the writer: a client that stops reading holds
/// up the server's answers, not its memory.
const MAX_QUEUED: usize = 1 << 20;

/// What is waiting to be written, shared by every sender and the writer task.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    queue: Mutex<Queue>,
    /// Wakes the writer: something was queued, or the output is closing.
    queued: Notify,
    /// Wakes senders waiting for room.
    drained: Notify,
    /// Fires at the first failed write: the client no longer reads.
    pub(super) broken: CancellationToken,
    /// Fires when the writer has written all it will and shut its writer down.
    pub(super) closed: CancellationToken,
}

#[derive(Debug, Default)]
struct Queue {
    lines: Vec<u8>,
    closing: bool,
}

impl Outbox {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues whole lines for the writer. After a failed write nothing more is written, and
    /// later lines are dropped without an error each, so a server whose client left says so
    /// once.
    pub(super) fn push(&self, lines: &[u8]) {
        if self.broken.is_cancelled() {
            tracing::debug!("dropping a message: the client no longer reads");
            return;
        }
        self.queue().lines.extend_from_slice(lines);
        self.queued.notify_one();
    }

    /// Returns once the queue holds less than its bound, or the output broke or closed.
    pub(super) async fn room(&self) {
        loop {
            let drained = self.drained.notified();
            if self.queue().lines.len() < MAX_QUEUED || self.broken.is_cancelled() || self.closed.is_cancelled() {
                return;
            }
            drained.await;
        }
    }

    /// Has the writer write what is queued, shut its writer down and stop.
    pub(super) fn close(&self) {
        self.queue().closing = true;
        self.queued.notify_one();
    }
}

/// Writes what `output` queues to `writer` until the output closes or a write fails.
pub(super) async fn write_out<W: AsyncWrite + Unpin>(output: Arc<Outbox>, mut writer: W) {
    let mut batch = Vec::new();
    loop {
        let closing = {
            let mut queue = output.queue();
            std::mem::swap(&mut batch, &mut queue.lines);
            queue.closing
        };
        if batch.is_empty() {
            if closing {
                break;
            }
            output.queued.notified().await;
            continue;
        }
        output.drained.notify_waiters();
        let written = match writer.write_all(&batch).await {
            Ok(()) => writer.flush().await,
            Err(error) => Err(error),
        };
        if let Err(error) = written {
            fail(&output, &error);
            break;
        }
        // The buffer keeps its room for the next batch.
        batch.clear();
    }
    if !output.broken.is_cancelled()
        && let Err(error) = writer.shutdown().await
    {
        tracing::debug!("cannot close the transport's output: {error}");
    }
    output.closed.cancel();
    output.drained.notify_waiters();
}

fn fail(output: &Outbox, error: &io::Error) {
    tracing::warn!("cannot write to the client ({error}): taking no more requests and cancelling those in flight");
    output.broken.cancel();
    output.queue().lines = Vec::new();
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use tokio::io::AsyncReadExt as _;

    use super::*;

    /// Records the size of each write it is given.
    #[derive(Clone, Default)]
    struct Recording(Arc<Mutex<Vec<usize>>>);

    impl AsyncWrite for Recording {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buffer: &[u8]) -> Poll<io::Result<usize>> {
            self.0.lock().unwrap().push(buffer.len());
            Poll::Ready(Ok(buffer.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn lines_queued_together_leave_in_one_write() {
        let output = Arc::new(Outbox::default());
        for _ in 0..3 {
            output.push(b"{\"jsonrpc\":\"2.0\"}\n");
        }
        let writes = Recording::default();
        let writer = tokio::spawn(write_out(Arc::clone(&output), writes.clone()));
        output.close();
        writer.await.unwrap();
        assert_eq!(*writes.0.lock().unwrap(), [3 * 18]);
        assert!(output.closed.is_cancelled() && !output.broken.is_cancelled());
    }

    #[tokio::test]
    async fn a_client_that_stops_reading_holds_up_senders() {
        let (mut client, server) = tokio::io::duplex(4096);
        let output = Arc::new(Outbox::default());
        tokio::spawn(write_out(Arc::clone(&output), server));
        let line = [b'x'; 1023];
        for _ in 0..2 {
            for _ in 0..(MAX_QUEUED / 1024 + 1) {
                output.push(&line);
                output.push(b"\n");
            }
            // The writer takes the first batch, and is stuck writing it.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Nothing reads: the queue stays over its bound and a sender waits.
        assert!(tokio::time::timeout(Duration::from_millis(100), output.room()).await.is_err());
        let mut read = vec![0; 2 * (MAX_QUEUED + 1024)];
        client.read_exact(&mut read).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), output.room()).await.expect("room once the client read");
    }

    #[tokio::test]
    async fn a_failed_write_breaks_the_output_once() {
        let (client, server) = tokio::io::duplex(64);
        drop(client);
        let output = Arc::new(Outbox::default());
        let writer = tokio::spawn(write_out(Arc::clone(&output), server));
        output.push(b"lost\n");
        writer.await.unwrap();
        assert!(output.broken.is_cancelled() && output.closed.is_cancelled());
        // Later lines are dropped, and nobody waits for room.
        output.push(&vec![b'x'; 2 * MAX_QUEUED]);
        output.room().await;
    }
}
