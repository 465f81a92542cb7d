//! What the two servers share: their flags, and the deliberate slowdown the guard is tried with.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

/// How a benchmark server is reached.
#[derive(Debug, Parser)]
pub struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// HTTP with sessions (answers as event streams); without, every request stands alone and
    /// is answered with JSON.
    #[arg(long, requires = "http")]
    pub stateful: bool,
    /// The tokio runtime the server runs on.
    #[arg(long, value_enum, default_value_t = Runtime::MultiThread)]
    pub runtime: Runtime,
    /// On stdio, rmcp's blocking `stdio()` handles instead of `stdio_pipes()` (raw rmcp only: how
    /// the comparison was made before rmcp had a non-blocking stdio).
    #[arg(long, conflicts_with = "http")]
    pub blocking_stdio: bool,
    /// Spends this many microseconds of CPU in every call before answering: a regression made
    /// on purpose, to see `compare.py --guard` name the row it slows.
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 0)]
    pub extra_cpu_us: u64,
}

/// The CPU every call spends on purpose, set once from `--extra-cpu-us`.
static EXTRA_CPU: OnceLock<Duration> = OnceLock::new();

/// Spins for the `--extra-cpu-us` of [`ServeArgs::install_slowdown`], if any.
pub fn spend_extra_cpu() {
    let Some(&extra) = EXTRA_CPU.get() else { return };
    let started = Instant::now();
    while started.elapsed() < extra {
        std::hint::spin_loop();
    }
}

/// A tokio runtime flavour.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Runtime {
    /// One thread for every task (`#[tokio::main(flavor = "current_thread")]`).
    CurrentThread,
    /// A worker per core (`#[tokio::main]`).
    MultiThread,
}

impl ServeArgs {
    /// Makes [`spend_extra_cpu`] spin for `--extra-cpu-us` in every call (nothing when it is 0).
    pub fn install_slowdown(&self) {
        if self.extra_cpu_us > 0 {
            let _ = EXTRA_CPU.set(Duration::from_micros(self.extra_cpu_us));
        }
    }

    /// Builds the runtime the flags ask for.
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        match self.runtime {
            Runtime::CurrentThread => tokio::runtime::Builder::new_current_thread().enable_all().build(),
            Runtime::MultiThread => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
        }
    }
}
