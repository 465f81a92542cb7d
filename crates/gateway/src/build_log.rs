//! What a stdio upstream that builds itself (`cargo run`) writes on stderr, read for the
//! compiler's first error: when the command ends before its handshake, that error is why.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::wire::Sent;
use tokio::sync::watch;

/// How many lines are kept from the first error on: its headline, its location, a few more.
const KEPT_LINES: usize = 12;

/// The longest line kept, in characters.
const KEPT_LINE_CHARS: usize = 400;

/// How long a failed start waits for the rest of the command's stderr.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// One start's stderr, read for errors as its lines are passed on to the gateway's log.
#[derive(Clone)]
pub(crate) struct BuildLog {
    seen: Arc<Mutex<Seen>>,
    ended: watch::Sender<bool>,
}

#[derive(Default)]
struct Seen {
    /// The lines from the first that opens with `error` on, up to [`KEPT_LINES`].
    from_first_error: Vec<String>,
    /// The last line that was not blank, for a command that failed without an error line.
    last: Option<String>,
}

impl Default for BuildLog {
    fn default() -> BuildLog {
        BuildLog { seen: Arc::default(), ended: watch::Sender::new(false) }
    }
}

impl BuildLog {
    /// Notes one line of the command's stderr.
    pub(crate) fn note(&self, line: &str) {
        let line = plain(line);
        let mut seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !line.trim().is_empty() {
            seen.last = Some(line.trim().chars().take(KEPT_LINE_CHARS).collect());
        }
        let started = !seen.from_first_error.is_empty();
        if (started || line.starts_with("error")) && seen.from_first_error.len() < KEPT_LINES {
            seen.from_first_error.push(line.chars().take(KEPT_LINE_CHARS).collect());
        }
    }

    /// Notes that the command's stderr has ended: nothing more is to come.
    pub(crate) fn end(&self) {
        self.ended.send_replace(true);
    }

    /// Why the command ended before its handshake: the compiler's first error when it wrote
    /// one (after the rest of its stderr, waited for a moment), else `reason` with its last
    /// line.
    pub(crate) async fn why(&self, reason: String) -> String {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(DRAIN_WAIT, ended.wait_for(|ended| *ended)).await;
        let seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let lines: Vec<&str> = seen.from_first_error.iter().map(String::as_str).collect();
        // What the command wrote is quoted and escaped as any upstream's words are.
        match (first_error(&lines), &seen.last) {
            (Some(error), _) => format!("the build failed: {}", Sent::words(&error)),
            (None, Some(last)) => format!("{reason}; its last words: {}", Sent::words(last)),
            (None, None) => reason,
        }
    }
}

/// The first error among a compiler's lines, with where it is: rustc's
/// ``error[E0425]: cannot find value `x` in this scope`` and its `--> src/main.rs:10:5`, or a
/// plain `error: …`. Cargo's closing `error: could not compile …` counts only when nothing
/// else was said.
///
/// ```text
/// error[E0425]: cannot find value `x` in this scope --> src/main.rs:10:5
/// ```
pub(crate) fn first_error(lines: &[&str]) -> Option<String> {
    let is_summary = |line: &str| {
        let line = line.trim_start_matches("error:").trim();
        line.starts_with("could not compile") || line.starts_with("aborting due to")
    };
    let headline = |line: &&str| line.starts_with("error[") || line.starts_with("error:");
    let at = lines
        .iter()
        .position(|line| headline(line) && !is_summary(line))
        .or_else(|| lines.iter().position(headline))?;
    let error = lines[at].trim_end();
    let location = lines[at + 1..]
        .iter()
        .take(4)
        .take_while(|line| !headline(line))
        .find_map(|line| line.trim_start().strip_prefix("--> "))
        .map(str::trim);
    Some(match location {
        Some(location) => format!("{error} --> {location}"),
        None => error.to_owned(),
    })
}

/// `line` without terminal colour codes (`ESC [ … m`), which a build run with colour forced
/// leaves in.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.clone().next() == Some('[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUSTC: &str = "   Compiling my-server v0.1.0 (/src/my-server)
warning: unused variable: `y`
 --> src/lib.rs:3:9
  |
3 |     let y = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_y`

error[E0425]: cannot find value `x` in this scope
  --> src/main.rs:10:5
   |
10 |     x
   |     ^ not found in this scope

error[E0308]: mismatched types
 --> src/main.rs:12:1
error: could not compile `my-server` (bin \"my-server\") due to 2 previous errors";

    fn first(text: &str) -> Option<String> {
        first_error(&text.lines().collect::<Vec<_>>())
    }

    #[test]
    fn the_first_error_is_rustcs_headline_and_its_place() {
        assert_eq!(
            first(RUSTC).as_deref(),
            Some("error[E0425]: cannot find value `x` in this scope --> src/main.rs:10:5")
        );
        assert_eq!(
            first("error: failed to parse manifest at `/a/Cargo.toml`\n\nCaused by:\n  x").as_deref(),
            Some("error: failed to parse manifest at `/a/Cargo.toml`")
        );
        assert_eq!(
            first("error: could not compile `a` (lib) due to 1 previous error").as_deref(),
            Some("error: could not compile `a` (lib) due to 1 previous error")
        );
        assert_eq!(first("   Compiling a\nwarning: x\n --> a.rs:1:1"), None);
        assert_eq!(first(""), None);
        assert_eq!(first("error: a\n --> a.rs:1:1\n").as_deref(), Some("error: a --> a.rs:1:1"));
        // The next error's place is not this one's.
        assert_eq!(first("error: a\nerror: b\n --> b.rs:2:2").as_deref(), Some("error: a"));
    }

    #[test]
    fn colour_codes_are_left_out() {
        assert_eq!(plain("\u{1b}[0m\u{1b}[1m\u{1b}[38;5;9merror[E0425]\u{1b}[0m: x"), "error[E0425]: x");
        assert_eq!(plain("a\u{1b}b"), "ab");
        assert_eq!(plain("\u{1b}[31"), "");
    }

    /// A log of `stderr`, read to its end.
    fn read(stderr: &'static [u8]) -> BuildLog {
        let log = BuildLog::default();
        crate::stderr::pass_on(stderr, "dev".into(), Some(log.clone()));
        log
    }

    #[tokio::test]
    async fn a_failed_build_says_its_first_error_and_garbage_its_last_line() {
        let log = read(RUSTC.as_bytes());
        assert_eq!(
            log.why("it closed the connection".into()).await,
            "the build failed: 'error[E0425]: cannot find value `x` in this scope --> src/main.rs:10:5'"
        );
        let log = read(b"\xff\xfe not utf-8\nerror: bad \xff byte\n");
        assert_eq!(log.why("it closed the connection".into()).await, "the build failed: 'error: bad \u{fffd} byte'");
        let log = read(b"starting\npanicked at src/main.rs:3:5: no database\n\n");
        assert_eq!(
            log.why("it closed the connection".into()).await,
            "it closed the connection; its last words: 'panicked at src/main.rs:3:5: no database'"
        );
    }
}
