//! `fusion dev`: it runs `fusion-gateway dev` with the arguments as written, or says how to
//! get one.

use std::path::Path;
use std::process::{Command, Output};

const FUSION: &str = env!("CARGO_BIN_EXE_fusion");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `fusion` run as `program` with `args`, PATH `path` and FUSION_GATEWAY `gateway`.
/// Puts an executable copy of `from` at `to`, written by a child process (`install`) so that
/// the file is never open for writing in this one: another test thread forking meanwhile would
/// hand that handle to its child, and running the file would then fail with ETXTBSY ("Text file
/// busy") until the child execs.
fn install(from: &Path, to: &Path) {
    let status = Command::new("install").arg("-m").arg("755").arg(from).arg(to).status().unwrap();
    assert!(status.success(), "install {} {}", from.display(), to.display());
}

fn dev(program: &Path, args: &[&str], path: &Path, gateway: Option<&Path>) -> Output {
    let mut command = Command::new(program);
    command.args(args).env("PATH", path);
    match gateway {
        Some(gateway) => command.env("FUSION_GATEWAY", gateway),
        None => command.env_remove("FUSION_GATEWAY"),
    };
    command.output().unwrap()
}

#[cfg(unix)]
#[test]
fn the_arguments_reach_fusion_gateway_dev_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("argv");
    let fake = dir.path().join("fusion-gateway");
    let script = dir.path().join("fusion-gateway.sh");
    std::fs::write(&script, format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 7\n", seen.display())).unwrap();
    install(&script, &fake);
    let args =
        ["dev", "--watch", "src dir", "--ignore", "*.db", "--", "cargo", "run", "-p", "my-server", "--", "--flag"];
    // Named by FUSION_GATEWAY; then found on PATH by a copy of fusion with none beside it
    // (the workspace's own may sit beside the real one).
    let alone = dir.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    let copy = alone.join(Path::new(FUSION).file_name().unwrap());
    install(Path::new(FUSION), &copy);
    for (fusion, gateway) in [(Path::new(FUSION), Some(fake.as_path())), (copy.as_path(), None)] {
        let output = dev(fusion, &args, dir.path(), gateway);
        assert_eq!(output.status.code(), Some(7), "the gateway's exit code is fusion's: {}", text(&output.stderr));
        let argv = std::fs::read_to_string(&seen).unwrap();
        assert_eq!(argv.lines().collect::<Vec<_>>(), args, "{gateway:?}");
        std::fs::remove_file(&seen).unwrap();
    }
}

#[test]
fn without_a_gateway_it_says_how_to_install_one() {
    let dir = tempfile::tempdir().unwrap();
    // A copy of fusion with no fusion-gateway beside it, and none on PATH.
    let fusion = dir.path().join(Path::new(FUSION).file_name().unwrap());
    install(Path::new(FUSION), &fusion);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = dev(&fusion, &["dev", "--", "cargo", "run"], &empty, None);
    assert_eq!(output.status.code(), Some(2));
    let said = text(&output.stderr);
    assert!(said.contains("no fusion-gateway was found"), "{said}");
    assert!(said.contains("cargo install --path crates/gateway"), "{said}");
    let output = dev(&fusion, &["dev", "--", "x"], &empty, Some(&dir.path().join("no-such-gateway")));
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("cannot run"), "{}", text(&output.stderr));
}

/// Writes `script` to `at` and runs it `rounds` times (a new file each round) while another
/// thread spawns processes without pause, as the other tests of this binary do; how many runs
/// failed to start.
#[cfg(unix)]
fn runs_failed_while_others_spawn(dir: &Path, rounds: usize, put: fn(&Path, &str, &Path)) -> usize {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawning = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = Command::new("true").status();
            }
        })
    };
    let failed = (0..rounds)
        .filter(|round| {
            let program = dir.join(format!("program-{round}"));
            put(dir, "#!/bin/sh\nexit 0\n", &program);
            Command::new(&program).status().map_or(true, |status| !status.success())
        })
        .count();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spawning.join().unwrap();
    failed
}

#[cfg(unix)]
#[test]
fn an_executable_put_in_place_by_install_runs_at_once_while_other_threads_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let failed = runs_failed_while_others_spawn(dir.path(), 300, |dir, text, to| {
        let source = dir.join("source.sh");
        std::fs::write(&source, text).unwrap();
        install(&source, to);
    });
    assert_eq!(failed, 0, "{failed} of 300 runs failed to start");
}
