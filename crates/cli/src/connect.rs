//! Where the server is: a command to spawn over stdio, or a Streamable HTTP URL.

use std::path::Path;
use std::process::Stdio;

use clap::Args;
use mcp_fusion_client::{FusionClient, FusionClientError};

/// The argument group of `--stdio` and `--url`.
pub const SERVER_GROUP: &str = "server";

/// How to reach the server: the one declaration of `--stdio` and `--url`, required here and
/// made optional where another source may stand in (`--tools`).
#[derive(Debug, Args)]
#[group(id = SERVER_GROUP, required = true, multiple = false)]
pub struct Server {
    /// Spawn this command and talk MCP over its stdio (run by `sh -c`, so quote it whole). Its
    /// stderr (its log) is discarded unless --verbose is given.
    #[arg(long, value_name = "CMD")]
    pub stdio: Option<String>,
    /// Connect to this Streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
}

/// A bearer token for `--url` (or the FUSION_TOKEN environment variable).
#[derive(Debug, Args)]
pub struct Token {
    /// Send `Authorization: Bearer TOKEN` (HTTP only).
    #[arg(long, env = "FUSION_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// Whether the stderr of a server started with `--stdio` shows.
#[derive(Debug, Args)]
pub struct Verbose {
    /// Let the server started with --stdio write its stderr (its log, as its RUST_LOG sets it)
    /// to this terminal; without it, that stderr is discarded.
    #[arg(long)]
    pub verbose: bool,
}

impl Server {
    /// Connects and reads the server's tools.
    pub async fn connect(&self, token: &Token, verbose: &Verbose) -> anyhow::Result<FusionClient> {
        match (&self.stdio, &self.url) {
            (Some(command), _) => {
                let mut child = tokio::process::Command::new("sh");
                // `exec` so the server is the child itself and ends with the connection.
                child.arg("-c").arg(format!("exec {command}"));
                // Discarded, not piped: a pipe no one reads would stall a server that logs.
                let stderr = if verbose.verbose { Stdio::inherit() } else { Stdio::null() };
                FusionClient::spawn_with_stderr(child, stderr)
                    .await
                    .map_err(|error| not_started(command, error, verbose.verbose))
            }
            (None, Some(url)) => {
                FusionClient::connect_http(url, token.token.as_deref()).await.map_err(|error| match error {
                    // Already one sentence naming the URL, why, and what to try.
                    FusionClientError::Transport(_) => anyhow::Error::new(error),
                    other => anyhow::Error::new(other).context(format!("connecting to {url}")),
                })
            }
            (None, None) => anyhow::bail!("give the server with --stdio CMD or --url URL"),
        }
    }
}

/// Why `command` did not become a connected server, in one sentence.
fn not_started(command: &str, error: FusionClientError, verbose: bool) -> anyhow::Error {
    let FusionClientError::Transport(why) = error else {
        return anyhow::Error::new(error).context(format!("starting and initializing `{command}`"));
    };
    if let Some(missing) = missing_program(command, std::env::var_os("PATH").as_deref()) {
        return anyhow::anyhow!("cannot start the server \"{command}\": {missing}");
    }
    let hint = if verbose { "" } else { " (or add --verbose to see its stderr)" };
    anyhow::anyhow!("cannot start the server \"{command}\": {why}{hint}")
}

/// The command's program, when it is a plain word (no quotes, variables or redirections) that
/// names no executable file: where it was looked for, and what to do. `exec` runs only a file,
/// so a plain word that names none cannot have started.
fn missing_program(command: &str, path: Option<&std::ffi::OsStr>) -> Option<String> {
    let word = command.split_whitespace().next()?;
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || "._-+/@,%".contains(c));
    if !plain {
        return None;
    }
    if word.contains('/') {
        return match std::fs::metadata(word) {
            Err(error) => Some(format!("{word}: {error}; check the path")),
            Ok(metadata) if !is_executable(&metadata) => {
                Some(format!("{word} is not an executable file; check the path, or make it executable"))
            }
            Ok(_) => None,
        };
    }
    let found = std::env::split_paths(path?).any(|dir| {
        let dir = if dir.as_os_str().is_empty() { Path::new(".").to_path_buf() } else { dir };
        std::fs::metadata(dir.join(word)).is_ok_and(|metadata| is_executable(&metadata))
    });
    (!found).then(|| format!("there is no program \"{word}\" in PATH; check its name, or give its path"))
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    metadata.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_program_word_is_looked_up_in_path() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("server");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let path = Some(dir.path().as_os_str());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(
                missing_program("server --db x", path).as_deref(),
                Some("there is no program \"server\" in PATH; check its name, or give its path"),
                "not executable yet"
            );
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(missing_program("server --db x", path), None);
        assert!(missing_program("nosuch", path).unwrap().starts_with("there is no program \"nosuch\" in PATH"));
        // What the shell would expand or parse is left to the shell.
        assert_eq!(missing_program("\"nosuch\" x", path), None);
        assert_eq!(missing_program("FOO=1 server", path), None);
        assert_eq!(missing_program("$SERVER", path), None);
        let absent = dir.path().join("absent");
        let said = missing_program(absent.to_str().unwrap(), path).unwrap();
        assert!(said.ends_with(": No such file or directory (os error 2); check the path"), "{said}");
    }
}
