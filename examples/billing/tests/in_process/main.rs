//! The demo's server built in process over a real SQLite file: what needs no transport, the
//! database tampered with or locked behind the server's back, and retries that do nothing twice.

#[path = "../support/mod.rs"]
mod support;

mod in_process;
mod retries;
mod skills;
mod strict;
mod value_free;
