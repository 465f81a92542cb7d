//! What `fusion` prints. stdout whose reader went away (`fusion parse big.json | head -c 10`)
//! ends the output quietly: nothing more is written, no panic, and the command still exits
//! with the code of its outcome (0 for `parse`, 1 for a failed `call` or a drifted `check`), not
//! a signal's 141, so a pipeline under `set -o pipefail` reads the outcome and not the pipe.
//! (`println!` panics there instead, with exit code 101.)

use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

/// Set once stdout's reader has gone: later output is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout, all of it, and flushes; nothing once the reader has gone. Other
/// write failures (a full disk behind a redirection) are errors.
pub fn print(text: &str) -> anyhow::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        written => written.context("writing to stdout"),
    }
}

/// [`print()`], then a newline.
pub fn println(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}

/// Writes `text` to stderr, ignoring failures: a closed stderr has no one left to tell.
pub fn eprint(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush());
}
