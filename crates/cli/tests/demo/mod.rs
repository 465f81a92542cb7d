//! The demo server the tests drive `fusion` against.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The demo binary, beside `fusion` in the target directory. Built with the workspace's other
/// executables as `cargo test --workspace` builds them (every member; `--examples` brings in the
/// dev-dependencies' features), so that a test run of the workspace finds it built instead of
/// building the shared crates again with the features `-p billing-server` alone would pick.
pub fn billing_server(fusion: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = Command::new(env!("CARGO")).args(["build", "-q", "--workspace", "--bins", "--examples"]).status();
        assert!(built.unwrap().success(), "cargo build --workspace --bins --examples");
    });
    Path::new(fusion).with_file_name("billing-server")
}
