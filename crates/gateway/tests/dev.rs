//! `fusion-gateway dev`, the binary, with one client connection across every restart: a
//! "build" script (a failed build prints what rustc and cargo print) that runs billing-server.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_fusion::wire::ErrorCode;
use rmcp::ServiceExt as _;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use support::*;

/// What a failed `cargo run` prints: a warning, two errors, cargo's summary.
const FAILED_BUILD: &str = r#"   Compiling my-server v0.1.0
warning: unused variable: `y`
 --> src/lib.rs:3:9
error[E0425]: cannot find value `x` in this scope
  --> src/main.rs:10:5
   |
10 |     x
   |     ^ not found in this scope
error[E0308]: mismatched types
 --> src/main.rs:12:1
error: could not compile `my-server` (bin "my-server") due to 2 previous errors"#;

/// A project whose "build" fails while `src/lib.txt` holds BROKEN, lasts until `target/go`
/// exists while it holds SLOW, and otherwise runs billing-server; each start appends its pid to
/// `starts` (which `--ignore` leaves out).
fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.txt"), "fine\n").unwrap();
    std::fs::write(dir.join("failed-build.txt"), FAILED_BUILD).unwrap();
    let script = format!(
        "echo $$ >> '{dir}/starts'\n\
         if grep -q BROKEN '{dir}/src/lib.txt'; then cat '{dir}/failed-build.txt' >&2; exit 101; fi\n\
         if grep -q SLOW '{dir}/src/lib.txt'; then while [ ! -f '{dir}/target/go' ]; do sleep 0.05; done; fi\n\
         exec '{billing}' --db '{dir}/billing.db'\n",
        dir = dir.display(),
        billing = billing_server().display()
    );
    std::fs::write(dir.join("build.sh"), script).unwrap();
    // The server writes its database next to the sources: no change, as .gitignore says.
    std::fs::write(dir.join(".gitignore"), "*.db*\n").unwrap();
}

/// The result of listing invoices, when the server answered it (not the gateway's warning
/// that it is still connecting).
async fn served(client: &Client) -> Option<rmcp::model::CallToolResult> {
    let result = call(client, "dev.billing", json!({"action": "list_invoices"})).await;
    (result.is_error == Some(false) && !text(&result).starts_with("<tool_error")).then_some(result)
}

fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts")).map_or(0, |text| text.lines().count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_restarts_the_server_and_a_failed_build_is_its_first_error_on_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    project(&dir);
    let mut gateway = tokio::process::Command::new(GATEWAY);
    let watched = dir.display().to_string();
    let script = dir.join("build.sh").display().to_string();
    gateway.args(["dev", "--watch", &watched, "--ignore", "starts", "--", "sh", &script]).env("RUST_LOG", "warn");
    let seen = Seen::default();
    let client = seen.clone().serve(TokioChildProcess::new(gateway).unwrap()).await.unwrap();
    eventually("dev.billing to answer", Duration::from_secs(60), || served(&client)).await;
    assert_eq!(tool_names(&client).await, ["dev.billing"]);
    assert_eq!(starts(&dir), 1);

    // A build's output and a hidden file are no change; a source is, and restarts it once.
    std::fs::create_dir_all(dir.join("target/debug")).unwrap();
    std::fs::write(dir.join("target/debug/out.txt"), "built").unwrap();
    std::fs::write(dir.join(".notes.swp"), "x").unwrap();
    std::fs::write(dir.join("src/lib.txt"), "fine, edited\n").unwrap();
    eventually("a restart", Duration::from_secs(60), || async { (starts(&dir) == 2).then_some(()) }).await;
    eventually("dev.billing to answer again", Duration::from_secs(60), || served(&client)).await;

    // While it builds, a call is told to come back: a warning with a wait.
    std::fs::write(dir.join("src/lib.txt"), "SLOW\n").unwrap();
    eventually("the slow build to start", Duration::from_secs(60), || async { (starts(&dir) == 3).then_some(()) })
        .await;
    let building = call(&client, "dev.billing", json!({"action": "list_invoices"})).await;
    let warning = envelope(&building).error;
    assert_eq!((building.is_error, &warning.code), (Some(false), &ErrorCode::HandoffConnecting), "{}", text(&building));
    assert!(warning.retry_after.is_some_and(|seconds| seconds > 0), "{warning:?}");
    std::fs::write(dir.join("target/go"), "").unwrap();
    eventually("dev.billing after the slow build", Duration::from_secs(60), || served(&client)).await;
    assert_eq!(starts(&dir), 3, "what the build writes under target/ restarts nothing");

    // A failed build: every call is one envelope with the compiler's first error. (A call that
    // reaches the old server as it is stopped is also unavailable, with another cause.)
    std::fs::write(dir.join("src/lib.txt"), "BROKEN\n").unwrap();
    let failed = eventually("the failed build's envelope", Duration::from_secs(60), || async {
        let result = call(&client, "dev.billing", json!({"action": "list_invoices"})).await;
        let error = envelope(&result).error;
        let built = error.code == ErrorCode::HandoffUpstreamUnavailable && error.message.contains("the build failed");
        built.then_some((result, error))
    })
    .await;
    let (result, error) = failed;
    assert_eq!(result.is_error, Some(true));
    assert!(
        error
            .message
            .contains("the build failed: 'error[E0425]: cannot find value `x` in this scope --> src/main.rs:10:5'"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("could not compile"), "{}", error.message);
    assert!(!error.message.contains("E0308"), "only the first error: {}", error.message);
    assert!(error.retry_after.is_some_and(|seconds| seconds > 0));
    let starts_after_failure = starts(&dir);

    // Fixed: the tools come back on the same connection, and the client is told.
    let told = seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst);
    std::fs::write(dir.join("src/lib.txt"), "fine again\n").unwrap();
    eventually("dev.billing after the fix", Duration::from_secs(60), || served(&client)).await;
    assert_eq!(starts(&dir), starts_after_failure + 1, "a failed build waits for a change, not a backoff");
    assert!(seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst) > told);

    client.cancel().await.unwrap();
}

fn dev_fails(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(GATEWAY).arg("dev").args(args).stdin(Stdio::null()).output().unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn garbage_flags_are_refused_in_a_line_that_says_what() {
    let (code, said) = dev_fails(&[]);
    assert_eq!(code, Some(2));
    assert!(said.contains("required arguments were not provided") && said.contains("<COMMAND>"), "{said}");
    let (code, said) = dev_fails(&["sh", "x"]);
    assert_eq!(code, Some(2), "{said}");
    let (code, said) = dev_fails(&["--watch", "/no/such/dir", "--", "sh"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("--watch /no/such/dir: No such file or directory"), "{said}");
    let (code, said) = dev_fails(&["--namespace", "a.b", "--", "sh"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("a.b"), "{said}");
    let (code, said) = dev_fails(&["--connect-timeout-secs", "0", "--", "sh"]);
    assert_eq!(code, Some(2));
    assert!(said.contains("--connect-timeout-secs"), "{said}");
    let output = Command::new(GATEWAY).args(["--config", "x.toml", "dev", "--", "sh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// The watches the inotify instances of process `pid` hold.
fn inotify_watches(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    fds.flatten()
        .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == "anon_inode:inotify"))
        .map(|fd| {
            let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy()));
            info.map_or(0, |info| info.lines().filter(|line| line.starts_with("inotify wd:")).count())
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_out_of_the_project_is_not_followed_neither_watched_nor_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let project_dir = dir.join("project");
    project(&project_dir);
    // Outside the project: a tree of 600 directories, linked from inside it.
    let outside = dir.join("outside");
    for n in 0..600 {
        std::fs::create_dir_all(outside.join(format!("d{n}"))).unwrap();
    }
    std::os::unix::fs::symlink(&outside, project_dir.join("src/vendor")).unwrap();
    std::os::unix::fs::symlink(&outside, project_dir.join("linked")).unwrap();
    let log = dir.join("gateway.log");
    let mut gateway = tokio::process::Command::new(GATEWAY);
    let script = project_dir.join("build.sh").display().to_string();
    gateway
        .args(["dev", "--watch", &project_dir.display().to_string(), "--ignore", "starts", "--", "sh", &script])
        .env("RUST_LOG", "info");
    let (transport, _) =
        TokioChildProcess::builder(gateway).stderr(Stdio::from(std::fs::File::create(&log).unwrap())).spawn().unwrap();
    let pid = transport.id().unwrap();
    let client = Seen::default().serve(transport).await.unwrap();
    eventually("dev.billing to answer", Duration::from_secs(60), || served(&client)).await;
    let watches = inotify_watches(pid);
    assert!(watches < 20, "{watches} inotify watches: the symlinked tree is watched");

    // A write out there, then one here: the restart is for this one, and the only one.
    std::fs::write(outside.join("d7/x.rs"), "outside").unwrap();
    std::fs::write(project_dir.join("src/lib.txt"), "fine, edited\n").unwrap();
    eventually("a restart", Duration::from_secs(60), || async { (starts(&project_dir) == 2).then_some(()) }).await;
    eventually("dev.billing to answer again", Duration::from_secs(60), || served(&client)).await;
    client.cancel().await.unwrap();
    let log = std::fs::read_to_string(&log).unwrap();
    let restarts: Vec<&str> = log.lines().filter(|line| line.contains("changed: restarting")).collect();
    assert_eq!(restarts.len(), 1, "{log}");
    assert!(restarts[0].contains("src/lib.txt changed"), "{log}");
    assert!(!log.contains("outside"), "{log}");
}
