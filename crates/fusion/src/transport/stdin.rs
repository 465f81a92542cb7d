//! This process's stdin as an `AsyncRead` that never holds up the runtime's shutdown.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// This process's stdin, read on a thread of its own. A read of stdin cannot be cancelled:
/// on the runtime's blocking pool (as `tokio::io::stdin` reads) it would hold the runtime's
/// shutdown until the client wrote again or closed stdin, so a server whose client stopped
/// reading could not exit. A plain thread is left behind when the process exits.
pub(crate) struct Stdin {
    chunks: tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Stdin {
    /// Starts the thread reading stdin.
    pub(crate) fn spawn() -> Stdin {
        let (sender, chunks) = tokio::sync::mpsc::channel(1);
        let reader = sender.clone();
        let spawned = std::thread::Builder::new().name("stdin".into()).spawn(move || {
            use std::io::Read as _;
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut chunk = vec![0; 64 << 10];
                let chunk = match stdin.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(read) => {
                        chunk.truncate(read);
                        Ok(chunk)
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    Err(error) => Err(error),
                };
                let failed = chunk.is_err();
                if reader.blocking_send(chunk).is_err() || failed {
                    return;
                }
            }
        });
        if let Err(error) = spawned {
            // Read as the transport's read error: the server stops, saying why.
            let _ = sender.try_send(Err(io::Error::new(error.kind(), format!("cannot start reading stdin: {error}"))));
        }
        Stdin { chunks, chunk: Vec::new(), at: 0 }
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.at == this.chunk.len() {
            match ready!(this.chunks.poll_recv(context)) {
                Some(Ok(chunk)) => (this.chunk, this.at) = (chunk, 0),
                Some(Err(error)) => return Poll::Ready(Err(error)),
                // The thread is done: the end of the input.
                None => return Poll::Ready(Ok(())),
            }
        }
        let count = buffer.remaining().min(this.chunk.len() - this.at);
        buffer.put_slice(&this.chunk[this.at..this.at + count]);
        this.at += count;
        Poll::Ready(Ok(()))
    }
}
