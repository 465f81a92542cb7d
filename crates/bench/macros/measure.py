#!/usr/bin/env python3
"""The same actions written four ways, side by side: what each costs to write and to build.

The forms: MCP Fusion's builder, its `#[action]` attribute, a `#[derive(Action)]` prototype
(derive_prototype.rs, built here and not shipped), and rmcp's own `#[tool]`. Each is a binary
crate of ACTIONS actions in three kinds: a read with an input, a read without one, and a
destructive write with an input (and, on MCP Fusion, a timeout and a scope; rmcp has no
guards, so its form carries the annotation only). Bodies and types are the same in all four.

Printed: the lines and non-blank characters a user writes per action, as rustfmt lays them out
(the shared types and `main` left out); the median time of `cargo build` of the crate alone,
its dependencies built (after `cargo clean -p`, and after an edit of one handler's body), with
cargo's defaults for a dev build.

    python3 crates/bench/macros/measure.py [--actions 30] [--runs 5] [--dir SCRATCH]
"""

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]

SHARED = '''use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

#[derive(Deserialize, JsonSchema)]
pub struct InvoiceId {
    /// The invoice id, like `inv_2026_0001`.
    pub id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Invoice {
    pub id: String,
    pub amount_cents: u64,
}

#[derive(Serialize, JsonSchema)]
pub struct Ids {
    pub ids: Vec<String>,
}
'''

FUSION_MAIN = '''
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = mcp_fusion::FusionServer::builder("billing", "1").group(group()).build(()).unwrap();
    println!("{}", server.tools().len());
}
'''

GET = "Read one invoice by id."
LIST = "List the ids of every invoice."
VOID = "Void an invoice. It cannot be undone."
GET_BODY = "Ok(Json(Invoice { id: input.id, amount_cents: 1200 }))"
LIST_BODY = 'Ok(Json(Ids { ids: vec!["inv_2026_0001".into()] }))'
VOID_BODY = "Ok(Json(Invoice { id: input.id, amount_cents: 0 }))"
FUSION_USE = "use std::time::Duration;\nuse mcp_fusion::wire::ToolError;\nuse mcp_fusion::{Ctx, Group, Json};\n"


def builder(n):
    fns, actions = [], []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            fns.append(f"async fn get_invoice_{i}(_ctx: Ctx<()>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {{\n    {GET_BODY}\n}}\n")
            actions.append(f'        .action(Action::new("get_invoice_{i}", "{GET}").read_only().handler(get_invoice_{i}))')
        elif kind == 1:
            fns.append(f"async fn list_invoices_{i}(_ctx: Ctx<()>, _: NoInput) -> Result<Json<Ids>, ToolError> {{\n    {LIST_BODY}\n}}\n")
            actions.append(f'        .action(Action::new("list_invoices_{i}", "{LIST}").read_only().handler(list_invoices_{i}))')
        else:
            fns.append(f"async fn void_invoice_{i}(_ctx: Ctx<()>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {{\n    {VOID_BODY}\n}}\n")
            actions.append(
                f'        .action(\n            Action::new("void_invoice_{i}", "{VOID}")\n'
                f'                .destructive()\n                .timeout(Duration::from_secs(5))\n'
                f'                .scope("billing:write")\n                .handler(void_invoice_{i}),\n        )'
            )
    head = FUSION_USE + "use mcp_fusion::{Action, NoInput};\n"
    group = 'fn group() -> Group<()> {\n    Group::new("billing", "Invoices.")\n' + "\n".join(actions) + "\n}\n"
    return head, "\n".join(fns) + "\n" + group


def attribute(n):
    fns, actions = [], []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            fns.append(f"/// {GET}\n#[action(read_only)]\nasync fn get_invoice_{i}(_ctx: Ctx<()>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {{\n    {GET_BODY}\n}}\n")
            actions.append(f"        .action(get_invoice_{i}())")
        elif kind == 1:
            fns.append(f"/// {LIST}\n#[action(read_only)]\nasync fn list_invoices_{i}(_ctx: Ctx<()>) -> Result<Json<Ids>, ToolError> {{\n    {LIST_BODY}\n}}\n")
            actions.append(f"        .action(list_invoices_{i}())")
        else:
            fns.append(
                f'/// {VOID}\n#[action(destructive, timeout = Duration::from_secs(5), scope = "billing:write")]\n'
                f"async fn void_invoice_{i}(_ctx: Ctx<()>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {{\n    {VOID_BODY}\n}}\n"
            )
            actions.append(f"        .action(void_invoice_{i}())")
    head = FUSION_USE + "use mcp_fusion::action;\n"
    group = 'fn group() -> Group<()> {\n    Group::new("billing", "Invoices.")\n' + "\n".join(actions) + "\n}\n"
    return head, "\n".join(fns) + "\n" + group


def derive(n):
    # One input type per action: the type carries the action's description and handler.
    items, actions = [], []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            items.append(
                f"/// {GET}\n#[derive(Deserialize, JsonSchema, Action)]\n#[action(handler = get_invoice_{i}, read_only)]\n"
                f"struct GetInvoice{i} {{\n    /// The invoice id, like `inv_2026_0001`.\n    id: String,\n}}\n\n"
                f"async fn get_invoice_{i}(_ctx: Ctx<()>, input: GetInvoice{i}) -> Result<Json<Invoice>, ToolError> {{\n    {GET_BODY}\n}}\n"
            )
            actions.append(f"        .action(GetInvoice{i}::action())")
        elif kind == 1:
            items.append(
                f"/// {LIST}\n#[derive(Deserialize, JsonSchema, Action)]\n#[action(handler = list_invoices_{i}, read_only)]\n"
                f"struct ListInvoices{i} {{}}\n\n"
                f"async fn list_invoices_{i}(_ctx: Ctx<()>, _: ListInvoices{i}) -> Result<Json<Ids>, ToolError> {{\n    {LIST_BODY}\n}}\n"
            )
            actions.append(f"        .action(ListInvoices{i}::action())")
        else:
            items.append(
                f'/// {VOID}\n#[derive(Deserialize, JsonSchema, Action)]\n#[action(handler = void_invoice_{i}, destructive, timeout = Duration::from_secs(5), scope = "billing:write")]\n'
                f"struct VoidInvoice{i} {{\n    /// The invoice id, like `inv_2026_0001`.\n    id: String,\n}}\n\n"
                f"async fn void_invoice_{i}(_ctx: Ctx<()>, input: VoidInvoice{i}) -> Result<Json<Invoice>, ToolError> {{\n    {VOID_BODY}\n}}\n"
            )
            actions.append(f"        .action(VoidInvoice{i}::action())")
    head = FUSION_USE + "use derive_prototype::Action;\n"
    group = 'fn group() -> Group<()> {\n    Group::new("billing", "Invoices.")\n' + "\n".join(actions) + "\n}\n"
    return head, "\n".join(items) + "\n" + group


def rmcp_tool(n):
    fns = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            fns.append(
                f"    /// {GET}\n    #[tool(annotations(read_only_hint = true))]\n"
                f"    async fn get_invoice_{i}(&self, Parameters(input): Parameters<InvoiceId>) -> Result<Json<Invoice>, ErrorData> {{\n        {GET_BODY}\n    }}\n"
            )
        elif kind == 1:
            fns.append(
                f"    /// {LIST}\n    #[tool(annotations(read_only_hint = true))]\n"
                f"    async fn list_invoices_{i}(&self) -> Result<Json<Ids>, ErrorData> {{\n        {LIST_BODY}\n    }}\n"
            )
        else:
            fns.append(
                f"    /// {VOID}\n    #[tool(annotations(destructive_hint = true))]\n"
                f"    async fn void_invoice_{i}(&self, Parameters(input): Parameters<InvoiceId>) -> Result<Json<Invoice>, ErrorData> {{\n        {VOID_BODY}\n    }}\n"
            )
    head = "use rmcp::handler::server::wrapper::{Json, Parameters};\nuse rmcp::{ErrorData, tool, tool_router};\n"
    body = "#[derive(Clone)]\nstruct Billing;\n\n#[tool_router(server_handler)]\nimpl Billing {\n" + "\n".join(fns) + "}\n"
    main = '\nfn main() {\n    println!("{}", Billing::tool_router().list_all().len());\n}\n'
    return head, body, main


def source(form, n):
    """The whole main.rs of a form with `n` actions."""
    if form is rmcp_tool:
        head, body, main = rmcp_tool(n)
        return head + "\n" + SHARED + "\n" + body + main
    head, body = form(n)
    return head + "\n" + SHARED + "\n" + body + FUSION_MAIN


FORMS = {"builder": builder, "attribute": attribute, "derive": derive, "rmcp-tool": rmcp_tool}


def ceremony(source, scratch):
    """Non-blank lines and non-whitespace characters of `source` once rustfmt has laid it out."""
    path = scratch / "ceremony.rs"
    path.write_text(source)
    subprocess.run(["rustfmt", "--edition", "2024", str(path)], check=True)
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return len(lines), sum(len("".join(line.split())) for line in lines)


def per_action(generate, scratch):
    """What one action adds: the layout of 6 actions less that of 3, over 3 (the shared part
    cancels out)."""
    six, three = (ceremony(generate(n), scratch) for n in (6, 3))
    return (six[0] - three[0]) / 3, (six[1] - three[1]) / 3


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=pathlib.Path, help="scratch directory (default: a new temporary one)")
    args = parser.parse_args()
    if args.actions < 3 or args.runs < 1:
        sys.exit("--actions needs at least 3 (one of each kind) and --runs at least 1")
    scratch = args.dir or pathlib.Path(tempfile.mkdtemp(prefix="action-forms-"))
    scratch.mkdir(parents=True, exist_ok=True)
    fusion = REPO / "crates" / "fusion"
    common = '[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n'
    base = 'serde = { version = "1", features = ["derive"] }\nschemars = "1.2"\ntokio = { version = "1", features = ["macros", "rt"] }\n'
    fusion_dep = f'mcp-fusion = {{ path = "{fusion}" }}\n'
    forms = {name: (lambda n, form=form: source(form, n)) for name, form in FORMS.items()}

    members = []
    for name, generate in forms.items():
        crate = f"form-{name}"
        members.append(crate)
        deps = base + (fusion_dep if name != "rmcp-tool" else 'rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }\n')
        if name == "derive":
            deps += 'derive-prototype = { path = "../derive-prototype" }\n'
        write(scratch / crate / "Cargo.toml", common.format(name=crate) + deps)
        write(scratch / crate / "src" / "main.rs", generate(args.actions))
    members.append("derive-prototype")
    write(
        scratch / "derive-prototype" / "Cargo.toml",
        common.format(name="derive-prototype").replace("[dependencies]", "[lib]\nproc-macro = true\n\n[dependencies]")
        + 'syn = { version = "2", features = ["full"] }\nquote = "1"\nproc-macro2 = "1"\n',
    )
    (scratch / "derive-prototype" / "src").mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "derive_prototype.rs", scratch / "derive-prototype" / "src" / "lib.rs")
    write(scratch / "Cargo.toml", "[workspace]\nresolver = \"3\"\nmembers = [" + ", ".join(f'"{m}"' for m in members) + "]\n")
    # The repository's versions of what both share, so the forms build what the framework is tested with.
    if not (scratch / "Cargo.lock").exists():
        shutil.copy(REPO / "Cargo.lock", scratch / "Cargo.lock")

    print(f"{args.actions} actions per form, {args.runs} runs, scratch {scratch}", file=sys.stderr)
    # Cargo's defaults for a dev build (incremental, full debug info), whatever the caller set.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO_INCREMENTAL", "CARGO_PROFILE_", "RUSTFLAGS"))}

    rows = []
    for name, generate in forms.items():
        crate = f"form-{name}"
        # Built once first: `-p` resolves the features of this crate alone, so its
        # dependencies may differ from the other forms' (rmcp with and without `macros`).
        subprocess.run(["cargo", "build", "--quiet", "-p", crate], cwd=scratch, check=True, env=env)
        main_rs = scratch / crate / "src" / "main.rs"
        clean, edit = [], []
        for run in range(args.runs):
            subprocess.run(["cargo", "clean", "--quiet", "-p", crate], cwd=scratch, check=True, env=env)
            clean.append(build(scratch, crate, env))
            # An edit of one handler's body, as between two builds while writing a server.
            main_rs.write_text(main_rs.read_text().replace("amount_cents: 1200", f"amount_cents: {1201 + run}", 1))
            edit.append(build(scratch, crate, env))
        main_rs.write_text(generate(args.actions))
        lines, chars = per_action(generate, scratch)
        rows.append((name, lines, chars, clean, edit))

    base_clean, base_edit = statistics.median(rows[0][3]), statistics.median(rows[0][4])
    print("| form | lines per action | characters per action | clean build of the crate | vs builder | rebuild after an edit | vs builder |")
    print("|---|---|---|---|---|---|---|")
    for name, lines, chars, clean, edit in rows:
        c, e = statistics.median(clean), statistics.median(edit)
        print(
            f"| {name} | {lines:.1f} | {chars:.0f} | {c:.2f} s ({min(clean):.2f}–{max(clean):.2f}) | {c / base_clean:.2f}× "
            f"| {e:.2f} s ({min(edit):.2f}–{max(edit):.2f}) | {e / base_edit:.2f}× |"
        )


def build(scratch, crate, env):
    """Seconds `cargo build -p crate` takes."""
    start = time.perf_counter()
    subprocess.run(["cargo", "build", "--quiet", "-p", crate], cwd=scratch, check=True, env=env)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
