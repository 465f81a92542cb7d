//! The server under test: a child process, its CPU time and peak memory read from `/proc`.

use std::net::{SocketAddr, TcpListener};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use super::DriveError;

/// A running server and what is known of it.
pub struct Server {
    child: Child,
    pid: u32,
    /// Where it listens, for HTTP.
    pub addr: Option<SocketAddr>,
    ticks_per_second: u64,
}

impl Server {
    /// Starts `command` with pipes on stdin and stdout, for stdio.
    pub fn stdio(command: &[String]) -> Result<Server, DriveError> {
        Server::spawn(command, None)
    }

    /// Starts `command` for HTTP, with `{port}` in its arguments replaced by a free port,
    /// and waits until that port takes connections.
    pub async fn http(command: &[String]) -> Result<Server, DriveError> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(DriveError::io("finding a free port"))?
            .port();
        let command: Vec<String> = command.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let server = Server::spawn(&command, Some(addr))?;
        for _ in 0..1500 {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Ok(server);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(DriveError::Timeout("the server did not listen within 30 s"))
    }

    fn spawn(command: &[String], addr: Option<SocketAddr>) -> Result<Server, DriveError> {
        let (program, args) = command.split_first().ok_or(DriveError::Protocol("no server command".into()))?;
        let piped = if addr.is_none() { Stdio::piped } else { Stdio::null };
        let child = Command::new(program)
            .args(args)
            .stdin(piped())
            .stdout(piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(DriveError::io("starting the server"))?;
        let pid = child.id().ok_or(DriveError::Protocol("the server exited at once".into()))?;
        Ok(Server { child, pid, addr, ticks_per_second: ticks_per_second() })
    }

    /// The child, for its pipes.
    pub(super) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// CPU time the server has used so far, user and system, every thread.
    pub fn cpu_time(&self) -> Result<Duration, DriveError> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .map_err(DriveError::io("reading the server's /proc/PID/stat"))?;
        // The command name (field 2) may hold spaces; the fields after it are plain.
        let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let field = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok());
        // utime and stime are fields 14 and 15 of the line: the 12th and 13th after the name.
        let (Some(user), Some(system)) = (field(11), field(12)) else {
            return Err(DriveError::Protocol(format!("unreadable /proc/PID/stat: {stat}")));
        };
        Ok(Duration::from_secs_f64((user + system) as f64 / self.ticks_per_second as f64))
    }

    /// The server's memory now: its peak resident set so far, and the private (anonymous)
    /// part of what is resident now, KiB. The rest of the resident set is mostly the pages of
    /// the executable the kernel mapped, shared and reclaimable.
    pub fn memory(&self) -> Result<Memory, DriveError> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .map_err(DriveError::io("reading the server's /proc/PID/status"))?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .ok_or_else(|| DriveError::Protocol(format!("no {name} in /proc/PID/status")))
        };
        Ok(Memory { peak_rss_kib: field("VmHWM:")?, private_kib: field("RssAnon:")? })
    }

    /// Kills the server and reaps it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// What [`Server::memory`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// The peak resident set (`VmHWM`).
    pub peak_rss_kib: u64,
    /// The anonymous resident memory (`RssAnon`).
    pub private_kib: u64,
}

/// The unit of utime and stime: `getconf CLK_TCK`, 100 on every Linux this runs on.
fn ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}
