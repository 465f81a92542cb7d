//! The skill the demo ships, `chase-unpaid-invoice`, as a host finds and reads it: listed by
//! `skills/list` with its frontmatter and files, its `SKILL.md` pointed at by the
//! instructions, and every file read back byte for byte; and the actions it names are the
//! demo's own.

use crate::support;

use billing_server::{CHASE_SKILL_URI, Options};
use rmcp::model::{
    GetSkillRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams, ResourceContents,
};
use serde_json::json;
use support::in_process::{build, build_server};

const SKILL_MD: &str = include_str!("../../skills/chase-unpaid-invoice/SKILL.md");
const REMINDER: &str = include_str!("../../skills/chase-unpaid-invoice/references/reminder-email.md");

#[tokio::test]
async fn the_skill_is_listed_with_its_frontmatter_and_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let client = build(&dir.path().join("billing.db"), &Options::default()).await;
    let peer = client.peer();
    let info = peer.peer_info().unwrap();
    assert!(info.capabilities.supports_directory_read());
    assert!(info.instructions.as_deref().unwrap().contains(CHASE_SKILL_URI));
    let skills = serde_json::to_value(peer.list_skills(None).await.unwrap().skills).unwrap();
    assert_eq!(skills.as_array().unwrap().len(), 1);
    assert_eq!(skills[0]["uri"], CHASE_SKILL_URI);
    assert_eq!(skills[0]["frontmatter"]["name"], "chase-unpaid-invoice");
    assert_eq!(skills[0]["frontmatter"]["metadata"], json!({"server": "billing-server", "version": "1"}));
    let files: Vec<(&str, u64)> = skills[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| (file["uri"].as_str().unwrap(), file["size"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            (CHASE_SKILL_URI, SKILL_MD.len() as u64),
            ("skill://chase-unpaid-invoice/references/reminder-email.md", REMINDER.len() as u64),
        ]
    );
    let got = peer.get_skill(GetSkillRequestParams::new(CHASE_SKILL_URI)).await.unwrap();
    assert_eq!(serde_json::to_value(got.skill).unwrap(), skills[0]);
    let root = peer.read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://chase-unpaid-invoice"));
    let children: Vec<(String, Option<String>)> =
        root.await.unwrap().resources.into_iter().map(|r| (r.name, r.mime_type)).collect();
    assert_eq!(
        children,
        [
            ("chase-unpaid-invoice".to_owned(), Some("text/markdown".to_owned())),
            ("references".to_owned(), Some("inode/directory".to_owned())),
        ]
    );
}

#[tokio::test]
async fn each_file_reads_back_byte_for_byte_from_any_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let client = build(&dir.path().join("billing.db"), &Options::default()).await;
    for (uri, text) in
        [(CHASE_SKILL_URI, SKILL_MD), ("skill://chase-unpaid-invoice/references/reminder-email.md", REMINDER)]
    {
        let read = client.peer().read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
        match &read.contents[..] {
            [ResourceContents::TextResourceContents { text: read, mime_type, .. }] => {
                assert_eq!((read.as_str(), mime_type.as_deref()), (text, Some("text/markdown")));
            }
            other => panic!("expected one text content, got {other:?}"),
        }
    }
}

#[test]
fn the_actions_and_prompt_the_skill_names_are_the_demos() {
    let dir = tempfile::tempdir().unwrap();
    let server = build_server(&dir.path().join("billing.db"), &Options::default());
    for action in ["list_invoices", "get_invoice", "pay_invoice", "void_invoice"] {
        assert!(SKILL_MD.contains(&format!("`{action}`")), "{action}");
        assert!(server.chain(&format!("billing.{action}")).is_some(), "the server has no action {action}");
    }
    assert!(SKILL_MD.contains("`dunning_letter`") && server.prompts().iter().any(|p| p.name == "dunning_letter"));
    for field in
        ["status: \"open\"", "`next_cursor`", "amount_cents - paid_cents", "`idempotency_key`", "`friendly`", "`firm`"]
    {
        assert!(SKILL_MD.contains(field), "{field}");
    }
    assert!(SKILL_MD.contains("(references/reminder-email.md)"));
}
