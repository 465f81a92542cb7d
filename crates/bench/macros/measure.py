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
from dataclasses import dataclass
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

FUSION_USE = "use std::time::Duration;\nuse mcp_fusion::wire::ToolError;\nuse mcp_fusion::{Ctx, Group, Json};\n"


@dataclass
class Kind:
    """One kind of action, and what each form writes for it."""

    name: str
    description: str
    input: bool
    output: str
    body: str
    builder: str
    attribute: str
    rmcp: str

    def fusion_fn(self, i, input_type, doc=""):
        """The handler: `input: T` for a kind with input, `_: T` for one without, no second
        argument when `input_type` is None."""
        name = "input" if self.input else "_"
        input = f", {name}: {input_type}" if input_type else ""
        return f"{doc}async fn {self.name}_{i}(_ctx: Ctx<()>{input}) -> Result<Json<{self.output}>, ToolError> {{\n    {self.body}\n}}\n"


KINDS = [
    Kind("get_invoice", "Read one invoice by id.", True, "Invoice", "Ok(Json(Invoice { id: input.id, amount_cents: 1200 }))",
         ".read_only()", "read_only", "read_only_hint = true"),
    Kind("list_invoices", "List the ids of every invoice.", False, "Ids", 'Ok(Json(Ids { ids: vec!["inv_2026_0001".into()] }))',
         ".read_only()", "read_only", "read_only_hint = true"),
    Kind("void_invoice", "Void an invoice. It cannot be undone.", True, "Invoice", "Ok(Json(Invoice { id: input.id, amount_cents: 0 }))",
         '.destructive().timeout(Duration::from_secs(5)).scope("billing:write")',
         'destructive, timeout = Duration::from_secs(5), scope = "billing:write"', "destructive_hint = true"),
]


def fusion_form(n, uses, write):
    """A form on MCP Fusion: `write(kind, i)` gives an action's items and its entry in the group."""
    items, actions = zip(*(write(KINDS[i % 3], i) for i in range(n)))
    group = 'fn group() -> Group<()> {\n    Group::new("billing", "Invoices.")\n' + "\n".join(actions) + "\n}\n"
    return FUSION_USE + uses, "\n".join(items) + "\n" + group


def builder(n):
    def write(kind, i):
        entry = f'        .action(Action::new("{kind.name}_{i}", "{kind.description}"){kind.builder}.handler({kind.name}_{i}))'
        return kind.fusion_fn(i, "InvoiceId" if kind.input else "NoInput"), entry

    return fusion_form(n, "use mcp_fusion::{Action, NoInput};\n", write)


def attribute(n):
    def write(kind, i):
        doc = f"/// {kind.description}\n#[action({kind.attribute})]\n"
        return kind.fusion_fn(i, "InvoiceId" if kind.input else None, doc), f"        .action({kind.name}_{i}())"

    return fusion_form(n, "use mcp_fusion::action;\n", write)


def derive(n):
    # One input type per action: the type carries the action's description and handler.
    def write(kind, i):
        input_type = "".join(part.title() for part in kind.name.split("_")) + str(i)
        fields = "{\n    /// The invoice id, like `inv_2026_0001`.\n    id: String,\n}" if kind.input else "{}"
        item = (
            f"/// {kind.description}\n#[derive(Deserialize, JsonSchema, Action)]\n"
            f"#[action(handler = {kind.name}_{i}, {kind.attribute})]\nstruct {input_type} {fields}\n\n"
            + kind.fusion_fn(i, input_type)
        )
        return item, f"        .action({input_type}::action())"

    return fusion_form(n, "use derive_prototype::Action;\n", write)


def rmcp_tool(n):
    fns = []
    for i in range(n):
        kind = KINDS[i % 3]
        input = ", Parameters(input): Parameters<InvoiceId>" if kind.input else ""
        fns.append(
            f"    /// {kind.description}\n    #[tool(annotations({kind.rmcp}))]\n"
            f"    async fn {kind.name}_{i}(&self{input}) -> Result<Json<{kind.output}>, ErrorData> {{\n        {kind.body}\n    }}\n"
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
