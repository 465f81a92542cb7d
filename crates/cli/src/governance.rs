//! `fusion lock`, `fusion check`, `fusion diff`: the contracts of tools, prompts and resource
//! templates locked in `fusion.lock` and compared with what a server states now.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use mcp_fusion_contract::{
    ChangeSeverity, ContractChange, ContractDiff, Lockfile, MAX_LOCKFILE_TOOLS, contracts_of, diff_lockfiles,
    prompt_contracts_of, resource_template_contracts_of,
};

use crate::connect::{Token, Verbose};
use crate::source::ToolSource;
use crate::{input, out};

/// The server and the lockfile.
#[derive(Debug, Args)]
pub struct Target {
    #[command(flatten)]
    source: ToolSource,
    #[command(flatten)]
    token: Token,
    #[command(flatten)]
    verbose: Verbose,
    /// The lockfile.
    #[arg(long, value_name = "PATH", default_value = "fusion.lock")]
    lockfile: PathBuf,
}

/// Arguments of `fusion lock`.
#[derive(Debug, Args)]
pub struct LockArgs {
    #[command(flatten)]
    target: Target,
}

/// Arguments of `fusion check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    target: Target,
    /// Fail only on changes at least this severe (default: any change is drift).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    fail_on: Option<FailOn>,
}

/// Arguments of `fusion diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    target: Target,
    /// Print the diff as JSON.
    #[arg(long)]
    json: bool,
}

/// The least severe change that fails `fusion check`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FailOn {
    /// RISKY or BREAKING.
    Risky,
    /// BREAKING only.
    Breaking,
}

impl Target {
    fn current(&self, runtime: &tokio::runtime::Runtime, max_input_bytes: u64) -> anyhow::Result<Lockfile> {
        let listing = runtime.block_on(self.source.read(&self.token, &self.verbose, max_input_bytes))?;
        // A lockfile no server would load is not written: the servers refuse one this long.
        for (count, what) in [
            (listing.tools.len(), "tools"),
            (listing.prompts.len(), "prompts"),
            (listing.resource_templates.len(), "resource templates"),
        ] {
            anyhow::ensure!(
                count <= MAX_LOCKFILE_TOOLS,
                "the server lists {count} {what}, more than a lockfile holds ({MAX_LOCKFILE_TOOLS})"
            );
        }
        Ok(Lockfile::new(contracts_of(&listing.tools))
            .with_prompts(prompt_contracts_of(&listing.prompts))
            .with_resource_templates(resource_template_contracts_of(&listing.resource_templates)))
    }

    fn locked(&self, max_input_bytes: u64) -> anyhow::Result<Lockfile> {
        if !self.lockfile.exists() {
            anyhow::bail!("no lockfile at {}: create it with `fusion lock`", self.lockfile.display());
        }
        let what = format!("the lockfile {}", self.lockfile.display());
        let text = input::read_file(&self.lockfile, &what, max_input_bytes)?;
        Lockfile::parse(&text).with_context(|| format!("reading {}", self.lockfile.display()))
    }

    fn diff(&self, max_input_bytes: u64) -> anyhow::Result<ContractDiff> {
        let locked = self.locked(max_input_bytes)?;
        let current = self.current(&runtime()?, max_input_bytes)?;
        Ok(diff_lockfiles(&locked, &current))
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("starting the async runtime")
}

/// Writes the lockfile of the server's current contracts.
pub fn lock(args: LockArgs, max_input_bytes: u64) -> anyhow::Result<ExitCode> {
    let lockfile = args.target.current(&runtime()?, max_input_bytes)?;
    lockfile.write(&args.target.lockfile).with_context(|| format!("writing {}", args.target.lockfile.display()))?;
    out::println(&format!(
        "wrote {}: {} tool(s), {} prompt(s), {} resource template(s), {}",
        args.target.lockfile.display(),
        lockfile.contracts.len(),
        lockfile.prompts.len(),
        lockfile.resource_templates.len(),
        lockfile.server_digest()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Exit 0 when the server matches the lockfile (or changed below `--fail-on`), 1 otherwise.
pub fn check(args: CheckArgs, max_input_bytes: u64) -> anyhow::Result<ExitCode> {
    let diff = args.target.diff(max_input_bytes)?;
    let Some(max) = diff.max_severity() else {
        out::println(&format!("{} is up to date", args.target.lockfile.display()))?;
        return Ok(ExitCode::SUCCESS);
    };
    out::print(&report(&diff))?;
    let threshold = match args.fail_on {
        None => ChangeSeverity::Cosmetic,
        Some(FailOn::Risky) => ChangeSeverity::Risky,
        Some(FailOn::Breaking) => ChangeSeverity::Breaking,
    };
    if max >= threshold {
        out::println(&format!(
            "drift: the contracts changed since {} was written (max severity {max})",
            args.target.lockfile.display()
        ))?;
        Ok(ExitCode::from(1))
    } else {
        out::println(&format!("changes below the --fail-on threshold (max severity {max}): passing"))?;
        Ok(ExitCode::SUCCESS)
    }
}

/// Prints the changes between the lockfile and the server.
pub fn diff(args: DiffArgs, max_input_bytes: u64) -> anyhow::Result<ExitCode> {
    let diff = args.target.diff(max_input_bytes)?;
    if args.json {
        out::println(&serde_json::to_string_pretty(&diff.to_json())?)?;
    } else if diff.is_empty() {
        out::println("no changes")?;
    } else {
        out::print(&report(&diff))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The deltas as a person reads them, tool by tool, then prompt by prompt and template by
/// template.
fn report(diff: &ContractDiff) -> String {
    let mut out = String::new();
    let tools = diff.tools.iter().map(|t| (t.tool.clone(), &t.deltas));
    let prompts = diff.prompts.iter().map(|p| (format!("prompt {}", p.prompt), &p.deltas));
    let templates =
        diff.resource_templates.iter().map(|t| (format!("resource template {}", t.uri_template), &t.deltas));
    for (heading, deltas) in tools.chain(prompts).chain(templates) {
        let _ = writeln!(out, "{heading}");
        deltas.iter().for_each(|delta| write_delta(&mut out, delta));
    }
    if let Some(max) = diff.max_severity() {
        let _ = writeln!(out, "max severity: {max}");
    }
    out
}

fn write_delta(out: &mut String, delta: &ContractChange) {
    let _ = writeln!(out, "  {:<8} {}: {}", delta.severity.as_str(), delta.field, delta.description);
    if let Some(before) = &delta.before {
        let _ = writeln!(out, "           before: {before}");
    }
    if let Some(after) = &delta.after {
        let _ = writeln!(out, "           after:  {after}");
    }
}
