//! `fusion dev`: the server under development behind `fusion-gateway dev`, which this command
//! runs in its place. The watcher and the supervisor live in the gateway, so this binary
//! stays a client: it serves nothing itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

/// The variable naming the `fusion-gateway` to run, before the one next to `fusion` and the one
/// on PATH.
pub const GATEWAY_VARIABLE: &str = "FUSION_GATEWAY";

/// What `fusion dev` passes on: everything after `dev`, as given.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct DevArgs {
    /// `fusion-gateway dev`'s options, then `--` and the command that builds and runs the
    /// server: `fusion dev -- cargo run -p my-server` (`fusion dev --help` shows them all).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

/// Runs `fusion-gateway dev ARGS`, as this process on unix.
pub fn run(args: DevArgs) -> anyhow::Result<ExitCode> {
    let gateway = gateway().context(
        "fusion dev runs `fusion-gateway dev`, and no fusion-gateway was found (FUSION_GATEWAY, next to fusion, \
         or on PATH); install it with `cargo install --path crates/gateway` from a checkout",
    )?;
    // clap drops a `--` it reads, which `fusion-gateway dev` needs before the command: the
    // arguments go on as they were written, everything after the subcommand.
    let given: Vec<OsString> = std::env::args_os().skip(1).skip_while(|arg| arg != "dev").skip(1).collect();
    debug_assert!(given.len() >= args.args.len());
    let mut command = std::process::Command::new(&gateway);
    command.arg("dev").args(&given);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        // Only returns when the program could not be started.
        let error = command.exec();
        Err(error).with_context(|| format!("cannot run {}", gateway.display()))
    }
    #[cfg(not(unix))]
    {
        let status = command.status().with_context(|| format!("cannot run {}", gateway.display()))?;
        Ok(ExitCode::from(status.code().and_then(|code| u8::try_from(code).ok()).unwrap_or(1)))
    }
}

/// The `fusion-gateway` to run: FUSION_GATEWAY, else the one beside this executable, else the
/// first on PATH.
fn gateway() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os(GATEWAY_VARIABLE).filter(|named| !named.is_empty()) {
        return Some(PathBuf::from(named));
    }
    let name = format!("fusion-gateway{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    if let Some(beside) = beside.filter(|path| runnable(path)) {
        return Some(beside);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(&name)).find(|candidate| runnable(candidate))
}

/// Whether `path` is a file this user may run.
fn runnable(path: &Path) -> bool {
    let Ok(metadata) = path.metadata() else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}
