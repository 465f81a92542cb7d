//! This process's stdin and stdout as async streams, read and written without a thread hop
//! per message where they are pipes, and never holding up the runtime's shutdown.
//!
//! An MCP client starts its server with pipes on stdin and stdout. A pipe is read and written
//! in non-blocking mode on the runtime's own threads, through its I/O driver, as a socket is;
//! its blocking mode is put back when the stream is dropped, for whatever the process writes
//! after serving. Anything else (a terminal, a file) is read on a thread of its own and
//! written through tokio's stdout, which hands each write to the blocking pool.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// This process's stdin.
pub(crate) enum Stdin {
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Receiver>),
    Thread(StdinThread),
}

/// This process's stdout.
pub(crate) enum Stdout {
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Sender>),
    Tokio(tokio::io::Stdout),
}

impl Stdin {
    /// Stdin as a pipe when it is one and a runtime is running, else read on a thread.
    pub(crate) fn open() -> Stdin {
        #[cfg(unix)]
        if let Some(pipe) = unix::receiver() {
            return Stdin::Pipe(Some(pipe));
        }
        Stdin::Thread(StdinThread::spawn())
    }
}

impl Stdout {
    /// Stdout as a pipe when it is one (and not also stderr's) and a runtime is running, else
    /// tokio's.
    pub(crate) fn open() -> Stdout {
        #[cfg(unix)]
        if let Some(pipe) = unix::sender() {
            return Stdout::Pipe(Some(pipe));
        }
        Stdout::Tokio(tokio::io::stdout())
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::MetadataExt as _;

    use tokio::net::unix::pipe;

    /// The pipe on stdin, when it is one: a copy of the descriptor, switched to non-blocking.
    pub(super) fn receiver() -> Option<pipe::Receiver> {
        tokio::runtime::Handle::try_current().ok()?;
        pipe::Receiver::from_owned_fd(std::io::stdin().as_fd().try_clone_to_owned().ok()?).ok()
    }

    /// The pipe on stdout, when it is one and stderr is not the same pipe: log lines written
    /// to a non-blocking stderr could fail where the pipe is full.
    pub(super) fn sender() -> Option<pipe::Sender> {
        tokio::runtime::Handle::try_current().ok()?;
        let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        let stderr = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
        if same_file(&stdout, stderr).unwrap_or(true) {
            return None;
        }
        pipe::Sender::from_owned_fd(stdout).ok()
    }

    fn same_file(a: &OwnedFd, b: OwnedFd) -> std::io::Result<bool> {
        let a = File::from(a.try_clone()?).metadata()?;
        let b = File::from(b).metadata()?;
        Ok((a.dev(), a.ino()) == (b.dev(), b.ino()))
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdin::Pipe(pipe) => match pipe {
                Some(pipe) => Pin::new(pipe).poll_read(context, buffer),
                None => Poll::Ready(Ok(())),
            },
            Stdin::Thread(thread) => Pin::new(thread).poll_read(context, buffer),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(pipe) => match pipe {
                Some(pipe) => Pin::new(pipe).poll_write(context, buffer),
                None => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            },
            Stdout::Tokio(stdout) => Pin::new(stdout).poll_write(context, buffer),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(_) => Poll::Ready(Ok(())),
            Stdout::Tokio(stdout) => Pin::new(stdout).poll_flush(context),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(_) => Poll::Ready(Ok(())),
            Stdout::Tokio(stdout) => Pin::new(stdout).poll_shutdown(context),
        }
    }
}

#[cfg(unix)]
impl Drop for Stdin {
    fn drop(&mut self) {
        if let Stdin::Pipe(pipe) = self
            && let Some(pipe) = pipe.take()
        {
            // Blocking again for whatever reads stdin after the transport.
            let _ = pipe.into_blocking_fd();
        }
    }
}

#[cfg(unix)]
impl Drop for Stdout {
    fn drop(&mut self) {
        if let Stdout::Pipe(pipe) = self
            && let Some(pipe) = pipe.take()
        {
            // Blocking again for whatever prints after the transport.
            let _ = pipe.into_blocking_fd();
        }
    }
}

/// This process's stdin, read on a thread of its own. A read of stdin cannot be cancelled:
/// on the runtime's blocking pool (as `tokio::io::stdin` reads) it would hold the runtime's
/// shutdown until the client wrote again or closed stdin, so a server whose client stopped
/// reading could not exit. A plain thread is left behind when the process exits.
pub(crate) struct StdinThread {
    chunks: tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl StdinThread {
    /// Starts the thread reading stdin.
    fn spawn() -> StdinThread {
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
        StdinThread { chunks, chunk: Vec::new(), at: 0 }
    }
}

impl AsyncRead for StdinThread {
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
