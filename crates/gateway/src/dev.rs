//! A server under development behind the gateway (`fusion-gateway dev`, `fusion dev`): the
//! command that builds and runs it (`cargo run -p my-server`) is a stdio upstream, the sources
//! are watched, and each change stops the server and starts the command again, so the client
//! keeps one connection across every rebuild.
//!
//! While the command builds and starts, calls answer `HANDOFF_CONNECTING` with a `retry_after`
//! (a build may take minutes: the start may take [`Dev::DEFAULT_CONNECT_TIMEOUT`]); when it
//! ends before its MCP handshake, every call answers one `HANDOFF_UPSTREAM_UNAVAILABLE` whose
//! message is the compiler's first error and its place (``error[E0425]: cannot find value `x`
//! in this scope --> src/main.rs:10:5``), and the next start waits for the next change. Each
//! time the tools come back, the client is told `notifications/tools/list_changed`. The
//! command's stderr reaches the gateway's log line by line, tagged with the mount
//! (`mount="dev"`, on [`UPSTREAM_LOG_TARGET`](crate::UPSTREAM_LOG_TARGET)).
//!
//! A change is a file created, written, renamed or removed under a watched path, outside
//! `target/`, hidden files and directories (`.git/`), what the watched directory's
//! `.gitignore` leaves out (a server's own database, say) and the patterns of [`Dev::ignore`];
//! a burst of them (an editor's save, a `git checkout`) is one change once [`Dev::debounce`]
//! passes without another.
//!
//! ```no_run
//! use mcp_fusion::FusionServer;
//! use mcp_fusion_gateway::dev::Dev;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let dev = Dev::new("cargo", ["run", "-q", "-p", "my-server"]).watch("crates/my-server");
//! let server = dev.declare(FusionServer::builder::<()>("fusion-gateway dev", "1.0")).build(())?;
//! let watching = dev.start(&server)?;
//! mcp_fusion::serve_stdio(server).await?;
//! watching.shutdown().await;
//! # Ok(()) }
//! ```

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use mcp_fusion::handoff::Mount;
use mcp_fusion::{FusionServer, ServerBuilder};
use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::{Notify, mpsc};

use crate::config::namespace_problem;
use crate::{Gateway, Running, Upstream};

/// A server command run behind the gateway, restarted when its sources change.
#[derive(Debug, Clone)]
pub struct Dev {
    namespace: String,
    command: String,
    args: Vec<String>,
    watch: Vec<PathBuf>,
    ignore: Vec<String>,
    connect_timeout: Duration,
    debounce: Duration,
}

/// Why a [`Dev`] cannot start. Each message says what was found and what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevError {
    /// The command is empty.
    #[error("no command to run; expected one after `--`, like `-- cargo run -p my-server`")]
    NoCommand,
    /// The namespace cannot be one.
    #[error("--namespace {namespace:?}: {problem}")]
    Namespace {
        /// The namespace given.
        namespace: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A path to watch cannot be watched.
    #[error("--watch {}: {error}; expected a file or directory that exists", path.display())]
    Watch {
        /// The path.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// An ignore pattern, or a `.gitignore`, cannot be read.
    #[error("{at}: {error}")]
    Ignore {
        /// The pattern, or the file.
        at: String,
        /// Why.
        error: ignore::Error,
    },
    /// The platform's file watcher refused.
    #[error("cannot watch {}: {error}", path.display())]
    Watcher {
        /// What was to be watched.
        path: PathBuf,
        /// The watcher's error.
        error: notify::Error,
    },
}

impl Dev {
    /// The namespace the command's tools are listed under unless [`Dev::namespace`] says.
    pub const DEFAULT_NAMESPACE: &'static str = "dev";

    /// How long a start (the build included) may take before it counts as failed.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(600);

    /// How long the sources must stay still before a change restarts the command.
    pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(300);

    /// Runs `command` with `args`, its tools listed under [`Dev::DEFAULT_NAMESPACE`], watching
    /// the current directory unless [`Dev::watch`] names paths.
    pub fn new<I, S>(command: impl Into<String>, args: I) -> Dev
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Dev {
            namespace: Dev::DEFAULT_NAMESPACE.to_owned(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            watch: Vec::new(),
            ignore: Vec::new(),
            connect_timeout: Dev::DEFAULT_CONNECT_TIMEOUT,
            debounce: Dev::DEFAULT_DEBOUNCE,
        }
    }

    /// Lists the command's tools as `{namespace}.{tool}`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Dev {
        self.namespace = namespace.into();
        self
    }

    /// Watches `path` (a directory, with what is under it, or a file); repeatable.
    pub fn watch(mut self, path: impl Into<PathBuf>) -> Dev {
        self.watch.push(path.into());
        self
    }

    /// Leaves out what `pattern` matches, written as a line of a `.gitignore` (`*.db`,
    /// `logs/`); repeatable.
    pub fn ignore(mut self, pattern: impl Into<String>) -> Dev {
        self.ignore.push(pattern.into());
        self
    }

    /// How long a start, the build included, may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Dev {
        self.connect_timeout = timeout;
        self
    }

    /// How long the sources must stay still before a change restarts the command.
    pub fn debounce(mut self, quiet: Duration) -> Dev {
        self.debounce = quiet;
        self
    }

    /// Declares the command's mount on `builder`, so the built server answers
    /// `HANDOFF_CONNECTING` for it from the first call.
    pub fn declare<S: Send + Sync + 'static>(&self, builder: ServerBuilder<S>) -> ServerBuilder<S> {
        builder.mount(Mount::new(&self.namespace))
    }

    /// Starts the command and the watcher on the current Tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn start(self, server: &FusionServer) -> Result<Watching, DevError> {
        if self.command.trim().is_empty() {
            return Err(DevError::NoCommand);
        }
        if let Some(problem) = namespace_problem(&self.namespace) {
            return Err(DevError::Namespace { namespace: self.namespace, problem });
        }
        let paths = if self.watch.is_empty() { vec![PathBuf::from(".")] } else { self.watch.clone() };
        let mut roots = Vec::with_capacity(paths.len());
        for path in paths {
            let root = path.canonicalize().map_err(|error| DevError::Watch { path, error })?;
            roots.push(Root::new(root, &self.ignore)?);
        }
        let (events, changes) = mpsc::unbounded_channel();
        // A symlink under a watched path is not followed: what it points to may be anywhere
        // (a home directory, a whole disk), and a change there is no change of this project.
        let mut watcher = RecommendedWatcher::new(
            move |event| {
                // The receiver is gone only once the gateway stops.
                let _ = events.send(event);
            },
            notify::Config::default().with_follow_symlinks(false),
        )
        .map_err(|error| DevError::Watcher { path: roots[0].path.clone(), error })?;
        for root in &roots {
            watch_root(&mut watcher, root)?;
        }
        let gateway = Gateway::new()
            .connect_timeout(self.connect_timeout)
            .mount(Mount::new(&self.namespace), Upstream::stdio(&self.command, &self.args))
            .rebuilding();
        let running = gateway.start(server);
        let restart = running.restarter(&self.namespace).expect("the mount was just added");
        let forwarding = tokio::spawn(restart_on_change(changes, roots, self.debounce, restart));
        Ok(Watching { running, _watcher: watcher, forwarding })
    }
}

/// A started [`Dev`]: the command's supervisor and the watcher.
pub struct Watching {
    running: Running,
    _watcher: RecommendedWatcher,
    forwarding: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching").field("running", &self.running).finish_non_exhaustive()
    }
}

impl Watching {
    /// Completes when the first start has ended: the server ready, or its start failed.
    pub async fn settled(&self) {
        self.running.settled().await;
    }

    /// Stops the watcher, then the command (stdin closed, `SIGTERM`, then killed, with the
    /// processes it started).
    pub async fn shutdown(self) {
        self.forwarding.abort();
        self.running.shutdown().await;
    }
}

/// A watched path, and what under it is no source.
#[derive(Debug, Clone)]
struct Root {
    path: PathBuf,
    ignore: Gitignore,
}

impl Root {
    /// `path` (canonical), leaving out what its `.gitignore` and `patterns` match.
    fn new(path: PathBuf, patterns: &[String]) -> Result<Root, DevError> {
        let mut builder = GitignoreBuilder::new(&path);
        let gitignore = path.join(".gitignore");
        if path.is_dir()
            && gitignore.is_file()
            && let Some(error) = builder.add(&gitignore)
        {
            return Err(DevError::Ignore { at: gitignore.display().to_string(), error });
        }
        for pattern in patterns {
            builder
                .add_line(None, pattern)
                .map_err(|error| DevError::Ignore { at: format!("--ignore {pattern:?}"), error })?;
        }
        let ignore = builder.build().map_err(|error| DevError::Ignore { at: path.display().to_string(), error })?;
        Ok(Root { path, ignore })
    }

    /// Whether `path` is under this root and no source: under `target/`, hidden, or ignored.
    fn leaves_out(&self, path: &Path, is_dir: bool) -> Option<bool> {
        let relative = path.strip_prefix(&self.path).ok()?;
        let hidden = relative.components().any(|component| match component {
            Component::Normal(name) => name == "target" || name.to_string_lossy().starts_with('.'),
            _ => false,
        });
        let ignored =
            !relative.as_os_str().is_empty() && self.ignore.matched_path_or_any_parents(relative, is_dir).is_ignore();
        Some(hidden || ignored)
    }
}

/// Watches `root`: a file itself; a directory's own entries, and each of its directories but
/// the ignored ones with all under it (a build's `target/` is never watched, however large).
fn watch_root(watcher: &mut RecommendedWatcher, root: &Root) -> Result<(), DevError> {
    let refused = |path: &Path, error| DevError::Watcher { path: path.to_owned(), error };
    let path = &root.path;
    watcher.watch(path, RecursiveMode::NonRecursive).map_err(|error| refused(path, error))?;
    if !path.is_dir() {
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|error| DevError::Watch { path: path.clone(), error })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) && root.leaves_out(&path, true) == Some(false) {
            watcher.watch(&path, RecursiveMode::Recursive).map_err(|error| refused(&path, error))?;
        }
    }
    Ok(())
}

/// Whether `event` changes a source under one of `roots`: a file created, written, renamed or
/// removed (a build reading the sources opens them, which is no change).
fn changes_a_source(event: &notify::Event, roots: &[Root]) -> Option<PathBuf> {
    let changes = match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        _ => false,
    };
    if !changes {
        return None;
    }
    event.paths.iter().find(|path| roots.iter().any(|root| root.leaves_out(path, false) == Some(false))).cloned()
}

/// Restarts the command once the sources have been still for `quiet` after a change (what is
/// no change, such as a read of them, does not count as stirring them).
async fn restart_on_change(
    mut events: mpsc::UnboundedReceiver<notify::Result<notify::Event>>,
    roots: Vec<Root>,
    quiet: Duration,
    restart: Arc<Notify>,
) {
    let mut changed: Option<(PathBuf, tokio::time::Instant)> = None;
    loop {
        let still = async {
            match &changed {
                Some((_, last)) => tokio::time::sleep_until(*last + quiet).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = still => {
                if let Some((path, _)) = changed.take() {
                    tracing::info!("{} changed: restarting the server", path.display());
                    restart.notify_one();
                }
            }
            next = events.recv() => match next {
                None => return,
                Some(Ok(event)) => {
                    if let Some(path) = changes_a_source(&event, &roots) {
                        let first = changed.take().map_or(path, |(first, _)| first);
                        changed = Some((first, tokio::time::Instant::now()));
                    }
                }
                Some(Err(error)) => tracing::warn!("watching the sources: {error}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{AccessKind, CreateKind, DataChange, MetadataKind};

    use super::*;

    fn event(kind: EventKind, path: &str) -> notify::Event {
        notify::Event::new(kind).add_path(PathBuf::from(path))
    }

    fn root(path: &str, patterns: &[&str]) -> Root {
        let patterns: Vec<String> = patterns.iter().map(|pattern| (*pattern).to_owned()).collect();
        Root::new(PathBuf::from(path), &patterns).unwrap()
    }

    #[test]
    fn a_change_is_a_write_outside_target_and_hidden_paths() {
        let roots = [root("/w/app", &[])];
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        assert_eq!(changes_a_source(&event(write, "/w/app/src/main.rs"), &roots), Some("/w/app/src/main.rs".into()));
        let created = EventKind::Create(CreateKind::File);
        assert!(changes_a_source(&event(created, "/w/app/Cargo.toml"), &roots).is_some());
        for path in ["/w/app/target/debug/app", "/w/app/.git/index", "/w/app/src/.main.rs.swp", "/w/other/x.rs"] {
            assert_eq!(changes_a_source(&event(write, path), &roots), None, "{path}");
        }
        let opened = EventKind::Access(AccessKind::Any);
        assert_eq!(changes_a_source(&event(opened, "/w/app/src/main.rs"), &roots), None);
        let touched = EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime));
        assert_eq!(changes_a_source(&event(touched, "/w/app/src/main.rs"), &roots), None);
    }

    #[test]
    fn what_gitignore_and_the_ignore_patterns_match_is_no_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.db*\n/logs/\n").unwrap();
        let root = Root::new(dir.path().canonicalize().unwrap(), &["starts".to_owned()]).unwrap();
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let at = |relative: &str| event(write, &root.path.join(relative).display().to_string());
        let roots = [root.clone()];
        for left_out in ["notes.db", "data/notes.db-wal", "logs/today.txt", "starts", "sub/starts"] {
            assert_eq!(changes_a_source(&at(left_out), &roots), None, "{left_out}");
        }
        for source in ["src/main.rs", "Cargo.toml", "sub/logs/x.rs", "starts.rs"] {
            assert!(changes_a_source(&at(source), &roots).is_some(), "{source}");
        }
        let error = Root::new(root.path.clone(), &["src/{a,b".to_owned()]).unwrap_err();
        assert!(error.to_string().starts_with("--ignore \"src/{a,b\""), "{error}");
    }

    #[test]
    fn garbage_is_refused_before_anything_starts() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let server = FusionServer::builder::<()>("t", "1").build(()).unwrap();
            let error = Dev::new(" ", Vec::<String>::new()).start(&server).unwrap_err();
            assert!(error.to_string().starts_with("no command to run"), "{error}");
            let error = Dev::new("sh", ["x"]).namespace("a.b").start(&server).unwrap_err();
            assert!(error.to_string().contains("a dot would make"), "{error}");
            let error = Dev::new("sh", ["x"]).watch("/no/such/dir").start(&server).unwrap_err();
            assert!(error.to_string().starts_with("--watch /no/such/dir: No such file"), "{error}");
        });
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_changes_is_one_restart_once_the_sources_are_still() {
        let (events, changes) = mpsc::unbounded_channel();
        let restart = Arc::new(Notify::new());
        let roots = vec![root("/w", &[])];
        tokio::spawn(restart_on_change(changes, roots, Duration::from_millis(300), Arc::clone(&restart)));
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        for _ in 0..5 {
            events.send(Ok(event(write, "/w/src/a.rs"))).unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let started = tokio::time::Instant::now();
        // Reads of the sources go on meanwhile: they do not put the restart off.
        let reads = events.clone();
        tokio::spawn(async move {
            for _ in 0..100 {
                let _ = reads.send(Ok(event(EventKind::Access(AccessKind::Any), "/w/src/a.rs")));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        restart.notified().await;
        // Told 300 ms after the last of the burst, once.
        assert_eq!(started.elapsed(), Duration::from_millis(200));
        let again = tokio::time::timeout(Duration::from_secs(5), restart.notified()).await;
        assert!(again.is_err(), "an open is no change");
    }
}
