//! `fusion` as a terminal user meets it: a reader of its output that goes away early, a server
//! that cannot be reached or started, a server that logs, and `--help`.

mod demo;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const FUSION: &str = env!("CARGO_BIN_EXE_fusion");

/// The demo binary, beside `fusion`.
fn billing_server() -> PathBuf {
    demo::billing_server(FUSION)
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(FUSION);
    command.args(args).env_remove("FUSION_TOKEN").env_remove("RUST_LOG");
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

fn fusion(args: &[&str]) -> Output {
    command(args).stdin(Stdio::null()).output().expect("run fusion")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `fusion ARGS` with stdout a pipe whose reader is closed before `fusion` writes
/// anything (it waits for `stdin`, which is written after).
fn with_stdout_closed(args: &[&str], stdin: &str) -> Output {
    let mut child = command(args).spawn().expect("run fusion");
    drop(child.stdout.take());
    let mut input = child.stdin.take().unwrap();
    // A command that reads no stdin may have exited already: its closed stdin is no failure.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().unwrap()
}

/// Ended quietly: no panic, nothing on stderr.
fn assert_quiet(output: &Output, code: i32, what: &str) {
    assert_eq!(output.status.code(), Some(code), "{what}: {}", stderr(output));
    assert_eq!(stderr(output), "", "{what}");
}

#[test]
fn a_reader_that_goes_away_ends_parse_quietly() {
    // 2 MB of output, far more than a pipe holds: `fusion` is still writing when the reader goes.
    let big = format!(
        "<tool_error code=\"BIG\" severity=\"error\">\n<message>{}</message>\n</tool_error>",
        "x".repeat(2 << 20)
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    std::fs::write(&file, &big).unwrap();
    for args in [&["parse", file.to_str().unwrap()][..], &["parse", "--json", file.to_str().unwrap()][..]] {
        let mut child = command(args).stdin(Stdio::null()).spawn().expect("run fusion");
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 10];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        // `fusion parse big.txt | head -c 10`: exit 1 (the outcome of parse: an error
        // envelope), not a panic's 101.
        let output = child.wait_with_output().unwrap();
        assert_quiet(&output, 1, &format!("{args:?}"));
    }
}

#[test]
fn every_command_that_prints_keeps_its_exit_code_when_its_reader_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let lockfile = dir.path().join("fusion.lock");
    let lockfile = lockfile.to_str().unwrap();
    let v1 =
        r#"{"tools": [{"name": "get", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}]}"#;
    let v2 = r#"{"tools": [{"name": "get", "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}]}"#;
    let stdin_tools = ["--tools", "/dev/stdin", "--lockfile", lockfile];

    assert_quiet(
        &with_stdout_closed(
            &["parse"],
            "<tool_error code=\"X\" severity=\"warning\"><message>m</message></tool_error>",
        ),
        0,
        "parse, a warning",
    );
    assert_quiet(&with_stdout_closed(&["parse", "--json"], "plain text"), 1, "parse --json, text read as an error");
    assert_quiet(&with_stdout_closed(&[&["lock"][..], &stdin_tools].concat(), v1), 0, "lock");
    assert!(std::fs::read_to_string(lockfile).unwrap().contains("\"get\""), "lock still wrote the lockfile");
    assert_quiet(&with_stdout_closed(&[&["check"][..], &stdin_tools].concat(), v1), 0, "check, up to date");
    // Drift is still exit 1 with no one reading the report: `set -o pipefail` sees the drift.
    assert_quiet(&with_stdout_closed(&[&["check"][..], &stdin_tools].concat(), v2), 1, "check, drifted");
    assert_quiet(&with_stdout_closed(&[&["diff"][..], &stdin_tools].concat(), v2), 0, "diff");
    assert_quiet(&with_stdout_closed(&[&["diff", "--json"][..], &stdin_tools].concat(), v2), 0, "diff --json");

    let server = billing_server();
    let stdio = format!("'{}' --db '{}'", server.display(), dir.path().join("billing.db").display());
    let found =
        with_stdout_closed(&["call", "--stdio", &stdio, "billing.get_invoice", r#"{"id": "inv_2026_0001"}"#], "");
    assert_quiet(&found, 0, "call, found");
    let missing =
        with_stdout_closed(&["call", "--stdio", &stdio, "billing.get_invoice", r#"{"id": "inv_2026_9999"}"#], "");
    assert_quiet(&missing, 1, "call, NOT_FOUND");
}

/// No Rust type names, no transport internals: a sentence.
fn assert_one_sentence(output: &Output, expected: &str) {
    let said = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert_eq!(said, expected);
    assert!(!said.contains("rmcp::") && !said.contains('<') && !said.contains("Transport ["), "{said}");
}

#[test]
fn a_server_that_cannot_be_reached_is_one_sentence() {
    let refused = fusion(&["call", "--url", "http://127.0.0.1:1/mcp", "billing.get_invoice"]);
    assert_one_sentence(
        &refused,
        "fusion: error: cannot connect to http://127.0.0.1:1/mcp: connection refused; \
         is the server running, and listening on that port?\n",
    );
    let not_a_url = fusion(&["call", "--url", "127.0.0.1:8080/mcp", "billing.get_invoice"]);
    assert_one_sentence(
        &not_a_url,
        "fusion: error: cannot connect to 127.0.0.1:8080/mcp: it is not an http:// or https:// URL; \
         give one like http://127.0.0.1:8080/mcp\n",
    );
    // The same words wherever a server is read.
    let check = fusion(&["check", "--url", "http://127.0.0.1:1/mcp", "--lockfile", "/dev/null"]);
    assert_eq!(check.status.code(), Some(2));
    let lock = fusion(&["lock", "--url", "http://127.0.0.1:1/mcp", "--lockfile", "/nonexistent/fusion.lock"]);
    assert_one_sentence(
        &lock,
        "fusion: error: cannot connect to http://127.0.0.1:1/mcp: connection refused; \
         is the server running, and listening on that port?\n",
    );
}

#[test]
fn a_server_that_cannot_be_started_is_one_sentence() {
    let absent = fusion(&["call", "--stdio", "no-such-fusion-server --db x", "billing.get_invoice"]);
    assert_one_sentence(
        &absent,
        "fusion: error: cannot start the server \"no-such-fusion-server --db x\": there is no program \
         \"no-such-fusion-server\" in PATH; check its name, or give its path\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent-server");
    let by_path = fusion(&["call", "--stdio", path.to_str().unwrap(), "billing.get_invoice"]);
    assert_one_sentence(
        &by_path,
        &format!(
            "fusion: error: cannot start the server \"{0}\": {0}: No such file or directory (os error 2); check the path\n",
            path.display()
        ),
    );
    // A server that exits at once, saying why on its stderr: hidden, and the sentence says how
    // to see it.
    let exits = "sh -c 'echo the database is locked >&2; exit 3'";
    let quiet = fusion(&["call", "--stdio", exits, "billing.get_invoice"]);
    assert_one_sentence(
        &quiet,
        &format!(
            "fusion: error: cannot start the server \"{exits}\": the server exited before answering initialize; \
             run it by hand to see why (or add --verbose to see its stderr)\n"
        ),
    );
    let verbose = fusion(&["call", "--verbose", "--stdio", exits, "billing.get_invoice"]);
    assert_one_sentence(
        &verbose,
        &format!(
            "the database is locked\nfusion: error: cannot start the server \"{exits}\": the server exited before \
             answering initialize; run it by hand to see why\n"
        ),
    );
}

#[test]
fn the_servers_stderr_shows_only_with_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let server = billing_server();
    let db = dir.path().join("billing.db");
    // The server logs at `info` (its start-up line) and the shell adds a line of its own.
    let noisy =
        format!("sh -c \"echo noise from the server >&2; exec '{}' --db '{}'\"", server.display(), db.display());
    let lockfile = dir.path().join("fusion.lock");
    let lockfile = lockfile.to_str().unwrap();
    let runs: [(&str, Vec<&str>); 4] = [
        ("call", vec!["call", "--stdio", &noisy, "billing.get_invoice", r#"{"id": "inv_2026_0001"}"#]),
        ("lock", vec!["lock", "--stdio", &noisy, "--lockfile", lockfile]),
        ("check", vec!["check", "--stdio", &noisy, "--lockfile", lockfile]),
        ("diff", vec!["diff", "--stdio", &noisy, "--lockfile", lockfile]),
    ];
    for (what, args) in &runs {
        let quiet = fusion(args);
        assert_eq!(quiet.status.code(), Some(0), "{what}: {}", stderr(&quiet));
        assert_eq!(stderr(&quiet), "", "{what}: the server's stderr is discarded");
        let verbose = fusion(&[&args[..1], &["--verbose"], &args[1..]].concat());
        assert_eq!(verbose.status.code(), Some(0), "{what} --verbose: {}", stderr(&verbose));
        let said = stderr(&verbose);
        assert!(said.contains("noise from the server\n"), "{what} --verbose: {said}");
        assert!(said.contains("billing-server serving MCP on stdio"), "{what} --verbose: {said}");
    }
    let found = fusion(&runs[0].1);
    assert!(String::from_utf8_lossy(&found.stdout).contains("\"inv_2026_0001\""), "the result is on stdout");
}

#[test]
fn help_tells_what_rust_log_and_verbose_do() {
    let help = fusion(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for sentence in [
        "RUST_LOG fusion itself logs nothing; a server started with --stdio inherits RUST_LOG, which sets what \
         that server logs to its stderr (MCP Fusion servers default to info,rmcp=warn when it is unset).",
        "That stderr is discarded unless --verbose is given.",
        "FUSION_TOKEN the bearer token for --url",
    ] {
        assert!(text.contains(sentence), "expected {sentence:?} in {text}");
    }
    for subcommand in ["call", "lock", "check", "diff"] {
        let help = fusion(&[subcommand, "--help"]);
        let text = String::from_utf8_lossy(&help.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("--verbose Let the server started with --stdio write its stderr"),
            "{subcommand} --help: {text}"
        );
    }
}
