//! The built `billing-server` over stdio, as an MCP host drives it: tools, resources and
//! prompts, masked internal errors, its log lines, a stderr nobody reads, its exit, and SIGKILL
//! mid-stream.

mod crash;
mod log_lines;
mod masked_channels;
mod resources_and_prompts;
mod stdio;
mod stdio_exit;
mod tasks;
mod unread_stderr;
