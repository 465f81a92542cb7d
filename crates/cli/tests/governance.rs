//! Governance end to end: lock a server's contracts, change its schema, and see `fusion check`
//! fail on the BREAKING change while the changed server tells the model what changed, in the
//! validation error of that action only.

mod demo;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::ResourceTemplate;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use mcp_fusion_contract::Lockfile;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const FUSION: &str = env!("CARGO_BIN_EXE_fusion");

fn fusion(args: &[&str]) -> Output {
    Command::new(FUSION).args(args).env_remove("FUSION_TOKEN").output().expect("run fusion")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct GetInvoiceV1 {
    /// The invoice id.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct GetInvoiceV2 {
    /// The invoice id.
    id: String,
    /// The customer the invoice belongs to.
    customer_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ListInvoices {
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

async fn get_v1(_ctx: Ctx<()>, input: GetInvoiceV1) -> Result<String, ToolError> {
    Ok(input.id)
}

async fn get_v2(_ctx: Ctx<()>, input: GetInvoiceV2) -> Result<String, ToolError> {
    Ok(input.id)
}

async fn list(_ctx: Ctx<()>, _input: ListInvoices) -> Result<String, ToolError> {
    Ok("[]".into())
}

/// Version 1, version 2 (get_invoice now requires customer_id), or version 1 with a reworded
/// description (a cosmetic change).
fn server(version: u8, lockfile: Option<Lockfile>) -> FusionServer {
    let get = match version {
        2 => Action::new("get_invoice", "Read one invoice.").read_only().handler(get_v2),
        3 => Action::new("get_invoice", "Read one invoice by its id.").read_only().handler(get_v1),
        _ => Action::new("get_invoice", "Read one invoice.").read_only().handler(get_v1),
    };
    let mut builder = FusionServer::builder("billing-server", "1.0.0").group(
        Group::new("billing", "Invoices.")
            .action(get)
            .action(Action::new("list_invoices", "List.").read_only().handler(list)),
    );
    if let Some(lockfile) = lockfile {
        builder = builder.contract_lockfile(lockfile);
    }
    builder.build(()).unwrap()
}

fn save_tools(dir: &Path, version: u8) -> PathBuf {
    let path = dir.join(format!("tools-v{version}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&json!({"tools": server(version, None).tools()})).unwrap())
        .unwrap();
    path
}

#[tokio::test]
async fn a_breaking_change_fails_check_and_heals_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, v3) = (save_tools(dir.path(), 1), save_tools(dir.path(), 2), save_tools(dir.path(), 3));
    let lock = dir.path().join("fusion.lock");
    let (v1, v2, v3, lock_arg) =
        (v1.to_str().unwrap(), v2.to_str().unwrap(), v3.to_str().unwrap(), lock.to_str().unwrap());

    let locked = fusion(&["lock", "--tools", v1, "--lockfile", lock_arg]);
    assert!(locked.status.success(), "{}", String::from_utf8_lossy(&locked.stderr));
    assert!(
        stdout(&locked)
            .starts_with(&format!("wrote {lock_arg}: 1 tool(s), 0 prompt(s), 0 resource template(s), sha256:"))
    );

    let same = fusion(&["check", "--tools", v1, "--lockfile", lock_arg]);
    assert_eq!((same.status.code(), stdout(&same)), (Some(0), format!("{lock_arg} is up to date\n")));

    let drift = fusion(&["check", "--tools", v2, "--lockfile", lock_arg]);
    assert_eq!(drift.status.code(), Some(1));
    assert_eq!(
        stdout(&drift),
        format!(
            "billing\n  BREAKING actions.get_invoice.required: Action \"get_invoice\" now requires new fields: [customer_id]\n\
             \x20          before: [\"id\"]\n           after:  [\"customer_id\",\"id\"]\n\
             max severity: BREAKING\n\
             drift: the contracts changed since {lock_arg} was written (max severity BREAKING)\n"
        )
    );
    assert_eq!(
        fusion(&["check", "--tools", v2, "--lockfile", lock_arg, "--fail-on", "breaking"]).status.code(),
        Some(1)
    );
    // A reworded description is drift, but below --fail-on risky.
    assert_eq!(fusion(&["check", "--tools", v3, "--lockfile", lock_arg]).status.code(), Some(1));
    assert_eq!(fusion(&["check", "--tools", v3, "--lockfile", lock_arg, "--fail-on", "risky"]).status.code(), Some(0));

    let diff = fusion(&["diff", "--tools", v2, "--lockfile", lock_arg, "--json"]);
    assert!(diff.status.success());
    let printed: Value = serde_json::from_str(&stdout(&diff)).unwrap();
    assert_eq!(
        printed,
        json!({"max_severity": "BREAKING", "tools": [{"tool": "billing", "deltas": [{
            "severity": "BREAKING", "field": "actions.get_invoice.required",
            "description": "Action \"get_invoice\" now requires new fields: [customer_id]",
            "before": "[\"id\"]", "after": "[\"customer_id\",\"id\"]",
        }]}], "prompts": [], "resource_templates": []})
    );

    // The changed server, given the known-good lockfile, tells the model what changed —
    // in the validation errors of get_invoice only.
    let healing = server(2, Some(Lockfile::read(&lock).unwrap()));
    let call = |arguments: Value| healing.call("billing", arguments.as_object().cloned(), RequestInfo::default());
    let old_arguments = call(json!({"action": "get_invoice", "id": "inv_1"})).await;
    assert_eq!(old_arguments.is_error, Some(true));
    assert_eq!(
        old_arguments.content[0].as_text().unwrap().text,
        "<validation_error action=\"billing.get_invoice\">\n\
         <field name=\"customer_id\">Missing required field. You sent: (missing). Expected a string: the customer the invoice belongs to.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         <contract_awareness>\n\
         \x20 <system_note>IMPORTANT: The behavioral contract for tool \"billing\" has changed since your last calibration.</system_note>\n\
         \x20 <action>billing.get_invoice</action>\n\
         \x20 <change_count>1</change_count>\n\
         \x20 <max_severity>BREAKING</max_severity>\n\
         \x20 <instructions>Review the contract changes below and adjust your next invocation accordingly. These changes may explain why your previous arguments were rejected.</instructions>\n\
         \x20 <contract_changes>\n\
         \x20   <change severity=\"BREAKING\" field=\"actions.get_invoice.required\">\n\
         \x20     <description>Action \"get_invoice\" now requires new fields: [customer_id]</description>\n\
         \x20     <before>[\"id\"]</before>\n\
         \x20     <after>[\"customer_id\",\"id\"]</after>\n\
         \x20   </change>\n\
         \x20 </contract_changes>\n\
         </contract_awareness>\n\
         </validation_error>"
    );
    let other_action = call(json!({"action": "list_invoices", "limit": 0})).await;
    let text = &other_action.content[0].as_text().unwrap().text;
    assert!(text.starts_with("<validation_error action=\"billing.list_invoices\">"));
    assert!(!text.contains("contract_awareness"), "{text}");
    let valid = call(json!({"action": "get_invoice", "id": "inv_1", "customer_id": "c_1"})).await;
    assert_eq!(valid.is_error, Some(false), "only validation errors carry the block");
    assert_eq!(valid.content.len(), 1);
}

#[test]
fn locking_the_demo_twice_gives_identical_files() {
    let server = demo::billing_server(FUSION);
    let dir = tempfile::tempdir().unwrap();
    let command = format!("'{}' --db '{}'", server.display(), dir.path().join("billing.db").display());
    let (first, second) = (dir.path().join("first.lock"), dir.path().join("second.lock"));
    for lock in [&first, &second] {
        let output = fusion(&["lock", "--stdio", &command, "--lockfile", lock.to_str().unwrap()]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let (first, second) = (std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap());
    assert_eq!(first, second);
    let text = String::from_utf8(first).unwrap();
    assert!(text.ends_with("}\n") && text.contains("\n  \"lockfileVersion\": 2,\n"), "{text}");
    // The demo's prompt and template are locked with their typed input: the tones of the
    // letter, the pattern of an invoice id.
    let locked = Lockfile::parse(&text).unwrap();
    let letter = &locked.prompts["dunning_letter"];
    assert_eq!(
        letter.arguments.iter().map(|a| (a.name.as_str(), a.required)).collect::<Vec<_>>(),
        [("id", true), ("tone", true)]
    );
    let schema = letter.input_schema.as_ref().expect("the typed schema is published").to_string();
    assert!(schema.contains("\"friendly\"") && schema.contains("\"firm\""), "{schema}");
    let invoice = &locked.resource_templates["billing://invoices/{id}"];
    assert_eq!(invoice.name, "invoice");
    assert!(invoice.input_schema.as_ref().unwrap()["properties"]["id"]["pattern"].is_string(), "{invoice:?}");
    let up_to_date =
        fusion(&["check", "--stdio", &command, "--lockfile", dir.path().join("first.lock").to_str().unwrap()]);
    assert_eq!(up_to_date.status.code(), Some(0));
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum ToneV1 {
    Friendly,
    Firm,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum ToneV2 {
    Friendly,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct LetterV1 {
    /// The invoice id.
    id: String,
    tone: Option<ToneV1>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct LetterV2 {
    /// The invoice id.
    id: String,
    tone: ToneV2,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct InvoiceV1 {
    id: String,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct InvoiceV2 {
    #[schemars(regex(pattern = "^inv_"))]
    id: String,
}

/// A server of one prompt and two templates, in version 1 or 2 (the prompt's tone required
/// and without `firm`, the invoice id with a pattern and read as CSV, the customer template
/// gone).
fn surface(version: u8) -> FusionServer {
    let builder = FusionServer::builder("surface", "1");
    let builder = if version == 1 {
        builder
            .prompt(
                Prompt::new("letter", "A letter.").handler(|_: Ctx<()>, _: LetterV1| async { Ok::<_, ToolError>("") }),
            )
            .resource_template(
                ResourceTemplate::new("billing://invoices/{id}", "invoice")
                    .mime_type("application/json")
                    .handler(|_: Ctx<()>, _: InvoiceV1| async { Ok::<_, ToolError>("") }),
            )
            .resource_template(
                ResourceTemplate::new("crm://customers/{id}", "customer")
                    .handler(|_: Ctx<()>, _: InvoiceV1| async { Ok::<_, ToolError>("") }),
            )
    } else {
        builder
            .prompt(
                Prompt::new("letter", "A letter.").handler(|_: Ctx<()>, _: LetterV2| async { Ok::<_, ToolError>("") }),
            )
            .resource_template(
                ResourceTemplate::new("billing://invoices/{id}", "invoice")
                    .mime_type("text/csv")
                    .handler(|_: Ctx<()>, _: InvoiceV2| async { Ok::<_, ToolError>("") }),
            )
    };
    builder.build(()).unwrap()
}

#[test]
fn prompts_and_templates_drift_like_tools() {
    let dir = tempfile::tempdir().unwrap();
    let listing = |version: u8| {
        let server = surface(version);
        let path = dir.path().join(format!("listing-v{version}.json"));
        let listing = json!({"tools": server.tools(), "prompts": server.prompts(), "resourceTemplates": server.resource_templates()});
        std::fs::write(&path, listing.to_string()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (v1, v2) = (listing(1), listing(2));
    let lock = dir.path().join("fusion.lock");
    let lock = lock.to_str().unwrap();
    let locked = fusion(&["lock", "--tools", &v1, "--lockfile", lock]);
    assert!(
        stdout(&locked).starts_with(&format!("wrote {lock}: 0 tool(s), 1 prompt(s), 2 resource template(s), sha256:"))
    );
    assert_eq!(fusion(&["check", "--tools", &v1, "--lockfile", lock]).status.code(), Some(0));

    let drift = fusion(&["check", "--tools", &v2, "--lockfile", lock, "--fail-on", "breaking"]);
    assert_eq!(drift.status.code(), Some(1));
    assert_eq!(
        stdout(&drift),
        format!(
            "prompt letter\n\
             \x20 BREAKING arguments.properties.tone.enum: Argument \"tone\" no longer accepts: [\"firm\",null]\n\
             \x20          before: [\"firm\",\"friendly\",null]\n\
             \x20          after:  [\"friendly\"]\n\
             \x20 BREAKING arguments.properties.tone.type: Argument \"tone\" type narrowed from [\"null\",\"string\"] to \"string\"\n\
             \x20          before: [\"null\",\"string\"]\n\
             \x20          after:  \"string\"\n\
             \x20 BREAKING arguments.required: Prompt \"letter\" now requires new arguments: [tone]\n\
             \x20          before: [\"id\"]\n\
             \x20          after:  [\"id\",\"tone\"]\n\
             resource template billing://invoices/{{id}}\n\
             \x20 BREAKING parameters.properties.id.pattern: Parameter \"id\" must now match the pattern \"^inv_\"\n\
             \x20          after:  \"^inv_\"\n\
             \x20 RISKY    mimeType: Resource template \"billing://invoices/{{id}}\" now returns text/csv (was application/json)\n\
             \x20          before: \"application/json\"\n\
             \x20          after:  \"text/csv\"\n\
             resource template crm://customers/{{id}}\n\
             \x20 BREAKING resourceTemplate: Resource template \"crm://customers/{{id}}\" was removed\n\
             \x20          before: \"crm://customers/{{id}}\"\n\
             max severity: BREAKING\n\
             drift: the contracts changed since {lock} was written (max severity BREAKING)\n"
        )
    );
    let printed: Value =
        serde_json::from_str(&stdout(&fusion(&["diff", "--tools", &v2, "--lockfile", lock, "--json"]))).unwrap();
    assert_eq!(printed["tools"], json!([]));
    assert_eq!(printed["prompts"][0]["prompt"], "letter");
    assert_eq!(printed["prompts"][0]["deltas"][2]["field"], "arguments.required");
    assert_eq!(
        printed["resource_templates"][1],
        json!({"uri_template": "crm://customers/{id}", "deltas": [{
            "severity": "BREAKING", "field": "resourceTemplate",
            "description": "Resource template \"crm://customers/{id}\" was removed",
            "before": "\"crm://customers/{id}\"", "after": null,
        }]})
    );
    // Back the other way, every change is an addition or a loosening: nothing fails on breaking.
    let relock = fusion(&["lock", "--tools", &v2, "--lockfile", lock]);
    assert!(relock.status.success());
    let loosened = fusion(&["check", "--tools", &v1, "--lockfile", lock, "--fail-on", "breaking"]);
    assert_eq!(loosened.status.code(), Some(0), "{}", stdout(&loosened));
}

#[test]
fn exactly_one_source_of_tools() {
    let dir = tempfile::tempdir().unwrap();
    let tools = save_tools(dir.path(), 1);
    let tools = tools.to_str().unwrap();
    let lock = dir.path().join("fusion.lock");
    let lock = lock.to_str().unwrap();
    let none = fusion(&["lock", "--lockfile", lock]);
    assert_eq!(none.status.code(), Some(2));
    let said = String::from_utf8_lossy(&none.stderr);
    assert!(
        said.contains("required arguments were not provided")
            && said.contains("<--stdio <CMD>|--url <URL>|--tools <FILE>>"),
        "{said}"
    );
    for (a, b) in [("--stdio", "--tools"), ("--url", "--tools"), ("--stdio", "--url")] {
        let value = |flag: &str| if flag == "--tools" { tools.to_owned() } else { "x".to_owned() };
        for command in ["lock", "check", "diff"] {
            let (va, vb) = (value(a), value(b));
            let two = fusion(&[command, a, &va, b, &vb, "--lockfile", lock]);
            assert_eq!(two.status.code(), Some(2), "{command} {a} {b}");
            let said = String::from_utf8_lossy(&two.stderr);
            assert!(said.contains("cannot be used with"), "{command} {a} {b}: {said}");
        }
    }
    assert!(!Path::new(lock).exists(), "no invocation above may write the lockfile");
    // `fusion call` talks to a live server: a saved tools/list is no source for it.
    let call = fusion(&["call", "--tools", tools, "billing.get_invoice"]);
    assert_eq!(call.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&call.stderr).contains("unexpected argument '--tools'"));
    let neither = fusion(&["call", "billing.get_invoice"]);
    assert_eq!(neither.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&neither.stderr).contains("<--stdio <CMD>|--url <URL>>"));
}

#[test]
fn bad_lockfiles_and_tool_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tools = save_tools(dir.path(), 1);
    let tools = tools.to_str().unwrap();
    let missing = fusion(&["check", "--tools", tools, "--lockfile", "/no/such.lock"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "fusion: error: no lockfile at /no/such.lock: create it with `fusion lock`\n"
    );
    let corrupt = dir.path().join("corrupt.lock");
    std::fs::write(&corrupt, "{\"lockfileVersion\": 1, \"tools\": {\"billing\": {").unwrap();
    let output = fusion(&["check", "--tools", tools, "--lockfile", corrupt.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("the lockfile is not valid JSON"));
    let not_tools = dir.path().join("not-tools.json");
    std::fs::write(&not_tools, "{\"tool\": []}").unwrap();
    let output = fusion(&[
        "lock",
        "--tools",
        not_tools.to_str().unwrap(),
        "--lockfile",
        dir.path().join("x.lock").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("expected a tools/list result"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (listing, said) in [
        (r#"{"tools": [], "prompts": 3}"#, "\"prompts\" must be an array"),
        (r#"{"tools": [], "prompts": [{"title": "no name"}]}"#, "a prompt does not match the MCP Prompt shape"),
        (r#"{"tools": [], "resourceTemplates": {}}"#, "\"resourceTemplates\" must be an array"),
        (r#"{"tools": [], "resourceTemplates": [{"name": "x"}]}"#, "a resource template does not match"),
    ] {
        std::fs::write(&not_tools, listing).unwrap();
        let lock = dir.path().join("x.lock");
        let output = fusion(&["lock", "--tools", not_tools.to_str().unwrap(), "--lockfile", lock.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{listing}: {stderr}");
        assert!(stderr.contains(said), "{listing}: {stderr}");
        assert!(!lock.exists(), "{listing}");
    }
}

/// Runs fusion with `stdin` open for writing by `feed`, killing it after `within`: an input
/// read whole would never end.
fn fusion_within(args: &[&str], feed: impl FnOnce(std::process::ChildStdin) + Send + 'static) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(FUSION)
        .args(args)
        .env_remove("FUSION_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fusion");
    let stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || feed(stdin));
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("fusion {args:?} still reading after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn inputs_over_the_size_cap_fail_at_once_with_the_limit_named() {
    let dir = tempfile::tempdir().unwrap();
    let tools = save_tools(dir.path(), 1);
    let size = std::fs::metadata(&tools).unwrap().len();
    let cap = size.to_string();
    let lock = dir.path().join("fusion.lock");
    let (tools, lock) = (tools.to_str().unwrap(), lock.to_str().unwrap());

    // At the cap, the file is read; the flag is global, before or after the command.
    let at_cap = fusion(&["--max-input-bytes", &cap, "lock", "--tools", tools, "--lockfile", lock]);
    assert!(at_cap.status.success(), "{}", String::from_utf8_lossy(&at_cap.stderr));

    let over = dir.path().join("over.json");
    std::fs::write(&over, format!("{}\n", std::fs::read_to_string(tools).unwrap())).unwrap();
    let over = over.to_str().unwrap();
    let unwritten = dir.path().join("unwritten.lock");
    let refused =
        fusion(&["lock", "--tools", over, "--lockfile", unwritten.to_str().unwrap(), "--max-input-bytes", &cap]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(!unwritten.exists());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        format!(
            "fusion: error: --tools {over} is larger than {size} bytes (the --max-input-bytes limit); \
             if it is what you meant to read, raise the limit with --max-input-bytes\n"
        )
    );

    let lock_size = std::fs::metadata(lock).unwrap().len();
    let small = (lock_size - 1).to_string();
    let refused = fusion(&["--max-input-bytes", &small, "check", "--tools", tools, "--lockfile", lock]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).starts_with(&format!(
            "fusion: error: the lockfile {lock} is larger than {small} bytes (the --max-input-bytes limit); "
        )),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // An endless file under the default cap: 16 MiB read, then the error, not all the memory.
    if Path::new("/dev/urandom").exists() {
        let endless =
            fusion_within(&["lock", "--tools", "/dev/urandom", "--lockfile", unwritten.to_str().unwrap()], drop);
        assert_eq!(endless.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&endless.stderr),
            "fusion: error: --tools /dev/urandom is larger than 16777216 bytes (the --max-input-bytes limit); \
             if it is what you meant to read, raise the limit with --max-input-bytes\n"
        );
    }
}

#[test]
fn an_endless_stdin_fails_at_the_cap() {
    use std::io::Write as _;
    let endless = fusion_within(&["parse", "--max-input-bytes", "4096"], |mut stdin| {
        // Like `yes`: it writes until fusion stops reading.
        while stdin.write_all(b"y\n").is_ok() {}
    });
    assert_eq!(endless.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&endless.stderr),
        "fusion: error: stdin is larger than 4096 bytes (the --max-input-bytes limit); \
         if it is what you meant to read, raise the limit with --max-input-bytes\n"
    );
}

#[test]
fn a_server_of_more_tools_than_a_lockfile_holds_is_not_locked() {
    let dir = tempfile::tempdir().unwrap();
    let tools: Vec<Value> = (0..=mcp_fusion_contract::MAX_LOCKFILE_TOOLS)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    let many = dir.path().join("many.json");
    std::fs::write(&many, json!({"tools": tools}).to_string()).unwrap();
    let lock = dir.path().join("fusion.lock");
    let output = fusion(&["lock", "--tools", many.to_str().unwrap(), "--lockfile", lock.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "fusion: error: the server lists 10001 tools, more than a lockfile holds (10000)\n"
    );
    assert!(!lock.exists(), "a lockfile no server would load is not written");
}
