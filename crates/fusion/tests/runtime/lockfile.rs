//! A server given a known-good lockfile: its drift logged as one summary line however large,
//! and a lockfile of more tools than one may hold refused.

use std::io::Write;
use std::sync::{Arc, Mutex};

use mcp_fusion::contract::{Lockfile, MAX_LOCKFILE_TOOLS, contracts_of};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, BuildError, Ctx, FusionServer, Group};
use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Id {
    id: String,
}

async fn get(_ctx: Ctx<()>, input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// Twelve groups `g0`..`g11`, each one action.
fn builder() -> mcp_fusion::ServerBuilder<()> {
    (0..12).fold(FusionServer::builder("s", "1"), |builder, i| {
        builder.group(Group::new(format!("g{i}"), "A group.").action(Action::new("get", "Get one.").handler(get)))
    })
}

fn tool(name: &str, description: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}});
    Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema.as_object().cloned().unwrap()))
}

/// Everything logged while `run` runs, as text.
pub(crate) fn logged(run: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber =
        tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).without_time().finish();
    tracing::subscriber::with_default(subscriber, run);
    String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn drift_is_logged_as_one_summary_line() {
    // Locked: g0..g7 with other descriptions (eight changed), and three tools the server no
    // longer has; g8..g11 are not locked (four added).
    let mut locked: Vec<Tool> = builder().build(()).unwrap().tools().into_iter().take(8).collect();
    for tool in &mut locked {
        tool.description = Some("Another description.".into());
    }
    locked.extend(["gone_a", "gone_b", "gone_c"].map(|name| tool(name, "Gone.")));
    let lockfile = Lockfile::new(contracts_of(&locked));
    let log = logged(|| {
        builder().contract_lockfile(lockfile).build(()).unwrap();
    });
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains(
            "contract changed since the lockfile: 8 tool(s) changed, 3 removed, 4 added (max severity BREAKING): \
             'g0', 'g1', 'g10', 'g11', 'g2', …; `fusion diff` shows each change"
        ),
        "{log}"
    );
    assert!(lines[0].starts_with(" WARN "), "{log}");
}

#[test]
fn a_lockfile_of_too_many_tools_is_refused() {
    let tools: Vec<Tool> = (0..=MAX_LOCKFILE_TOOLS).map(|i| tool(&format!("t{i}"), "A tool.")).collect();
    let lockfile = Lockfile::new(contracts_of(&tools));
    let log = logged(|| {
        let Err(error) = builder().contract_lockfile(lockfile).build(()) else { panic!("built") };
        assert!(matches!(error, BuildError::LockfileTooLarge { tools: 10_001, max: 10_000 }), "{error}");
        assert_eq!(
            error.to_string(),
            "the lockfile has 10001 tools, more than the 10000 a lockfile may hold; lock a server of fewer tools with `fusion lock`"
        );
    });
    assert_eq!(log, "", "refused before any drift is logged");
}
