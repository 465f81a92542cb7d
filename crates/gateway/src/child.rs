//! A stdio upstream's transport: the child process, spoken to over its stdin and stdout as
//! rmcp's own child transport does, its stdout read through a [`Measured`] reader so an
//! answer over the frame cap is noticed, its stderr passed on to the gateway's log, and ended
//! the way MCP asks: stdin closed, then `SIGTERM`, then killed.

use std::process::Stdio;
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{ChildStdin, ChildStdout};

use crate::build_log::BuildLog;
use crate::oversized::{Dropped, MAX_MESSAGE_BYTES, Measured};

/// How long the child is given to exit after each step of its shutdown.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A child process serving MCP on its stdout.
pub(crate) struct ChildTransport {
    /// Killed on drop unless it has exited.
    process: Option<Box<dyn ChildWrapper>>,
    transport: AsyncRwTransport<RoleClient, Measured<ChildStdout>, ChildStdin>,
}

impl ChildTransport {
    /// Starts `command`, its stdout measured into `dropped`, its stderr logged under `mount`
    /// (and read through `build_log` on the way when one is given).
    pub(crate) fn spawn(
        mut command: CommandWrap,
        dropped: Dropped,
        mount: &str,
        build_log: Option<&BuildLog>,
    ) -> std::io::Result<ChildTransport> {
        command.command_mut().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = command.spawn()?;
        if let Some(stderr) = process.stderr().take() {
            crate::stderr::pass_on(stderr, mount.into(), build_log.cloned());
        }
        let stdin = process.stdin().take().ok_or_else(|| std::io::Error::other("the child has no stdin"))?;
        let stdout = process.stdout().take().ok_or_else(|| std::io::Error::other("the child has no stdout"))?;
        let reader = Measured::new(stdout, MAX_MESSAGE_BYTES, dropped);
        let transport = AsyncRwTransport::new_client(reader, stdin).with_max_line_length(MAX_MESSAGE_BYTES);
        Ok(ChildTransport { process: Some(process), transport })
    }

    /// The child's process id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.process.as_ref()?.id()
    }

    /// Closes the child's stdin and waits for it to exit; then `SIGTERM`; then kills it. The
    /// child stays held until it is gone, so a cancelled shutdown still kills it on drop.
    async fn shut_down(&mut self) -> std::io::Result<()> {
        let Some(process) = self.process.as_mut() else { return Ok(()) };
        self.transport.close().await?;
        if exited(process).await {
            self.process = None;
            return Ok(());
        }
        #[cfg(unix)]
        if process.signal(nix::sys::signal::Signal::SIGTERM as i32).is_ok() && exited(process).await {
            self.process = None;
            return Ok(());
        }
        Box::into_pin(process.kill()).await?;
        self.process = None;
        Ok(())
    }
}

/// Whether the child exits within [`EXIT_WAIT`].
async fn exited(process: &mut Box<dyn ChildWrapper>) -> bool {
    matches!(tokio::time::timeout(EXIT_WAIT, process.wait()).await, Ok(Ok(_)))
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        let Some(mut process) = self.process.take() else { return };
        // `kill` waits for the child too, so it leaves no zombie.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = Box::into_pin(process.kill()).await {
                    tracing::warn!("the upstream's process could not be killed: {error}");
                }
            });
        } else {
            let _ = process.start_kill();
        }
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}
