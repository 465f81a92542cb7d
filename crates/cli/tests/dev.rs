//! `fusion dev`: it runs `fusion-gateway dev` with the arguments as written, or says how to
//! get one.

use std::path::Path;
use std::process::{Command, Output};

const FUSION: &str = env!("CARGO_BIN_EXE_fusion");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `fusion` run as `program` with `args`, PATH `path` and FUSION_GATEWAY `gateway`.
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
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("argv");
    let fake = dir.path().join("fusion-gateway");
    std::fs::write(&fake, format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 7\n", seen.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args =
        ["dev", "--watch", "src dir", "--ignore", "*.db", "--", "cargo", "run", "-p", "my-server", "--", "--flag"];
    // Named by FUSION_GATEWAY; then found on PATH by a copy of fusion with none beside it
    // (the workspace's own may sit beside the real one).
    let alone = dir.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    let copy = alone.join(Path::new(FUSION).file_name().unwrap());
    std::fs::copy(FUSION, &copy).unwrap();
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
    std::fs::copy(FUSION, &fusion).unwrap();
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
