//! Skill trees others published (`tests/fixtures/skill-trees`, each a copy of a public
//! repository's skills at one commit, see its `SOURCE.md`), loaded as a server loads them: how
//! many skills are served, which are skipped and by which rule, and that every served skill
//! holds every file of its directory, byte for byte. The trees were written without this
//! loader in mind, so they catch what hand-made fixtures do not; the figures are exact, so a
//! skill newly refused or newly let through fails as surely as a lost file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use base64::Engine;
use mcp_fusion::FusionServer;
use mcp_fusion::skill::{SkillError, Skills};
use rmcp::RoleClient;
use rmcp::model::{ProtocolVersion, ReadResourceRequestParams, ResourceContents};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService, ServiceError};
use sha2::{Digest, Sha256};

/// The directory of the copied trees.
fn trees() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skill-trees")
}

/// A tree, what the loader is expected to make of it: how many skills it serves, and each
/// skill or file it skips, by its path below the tree and the rule it breaks.
struct Expected {
    tree: &'static str,
    served: usize,
    skipped: &'static [(&'static str, &'static str)],
}

const EXPECTED: [Expected; 4] = [
    // Every skill in a hidden folder (`.curated`, `.experimental`, `.system`): all served.
    Expected { tree: "openai-skills", served: 10, skipped: &[] },
    Expected {
        tree: "anthropics-skills",
        served: 9,
        // 1068 characters where the Agent Skills specification allows 1024.
        skipped: &[("claude-api/SKILL.md", "line 3: field `description`")],
    },
    Expected { tree: "obra-superpowers", served: 14, skipped: &[] },
    Expected {
        tree: "k-dense-ai-claude-scientific-skills",
        served: 4,
        skipped: &[
            // `metadata` maps strings to strings; these hold YAML lists.
            ("markdown-mermaid-writing/SKILL.md", "line 6: field `metadata.skill-contributors`"),
            ("rowan/SKILL.md", "line 6: field `metadata.trigger-keywords`"),
            // The repository keeps its images in Git LFS: a plain checkout holds the pointers.
            ("timesfm-forecasting/examples/anomaly-detection/output/anomaly_detection.png", "Git LFS pointer"),
            ("timesfm-forecasting/examples/covariates-forecasting/output/covariates_data.png", "Git LFS pointer"),
            ("timesfm-forecasting/examples/global-temperature/output/forecast_animation.gif", "Git LFS pointer"),
            ("timesfm-forecasting/examples/global-temperature/output/forecast_visualization.png", "Git LFS pointer"),
        ],
    },
];

/// The rule a refusal names, short enough to list: the field and its line, or the kind.
fn rule(error: &SkillError) -> String {
    match error {
        SkillError::Field { line, field, .. } => match line {
            Some(line) => format!("line {line}: field `{field}`"),
            None => format!("field `{field}`"),
        },
        SkillError::LfsPointer { .. } => "Git LFS pointer".to_owned(),
        other => format!("{other}"),
    }
}

/// Folders that are no skill's content, as the loader's documentation lists them: version
/// control metadata and Python tools' caches. Written out here rather than taken from the
/// loader, so that the file list below is computed independently of it.
const NOT_CONTENT: [&str; 9] =
    [".git", ".hg", ".svn", ".venv", ".tox", ".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__"];

/// What operating systems leave behind: served only when the `SKILL.md` names it.
fn os_junk(name: &str) -> bool {
    [".DS_Store", "Thumbs.db", "desktop.ini", ".directory", ".Spotlight-V100", ".Trashes", ".fseventsd"].contains(&name)
        || name.starts_with("._")
}

/// Every file below `dir` (a path below `root`), by its `/`-separated path below `root`, what is
/// no content left out.
fn walk(root: &Path, dir: &str, files: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let path = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && !NOT_CONTENT.contains(&name.as_str()) && !os_junk(&name) {
            walk(root, &path, files);
        } else if kind.is_file() {
            files.insert(path);
        }
    }
}

/// `sha256:` and the digest's lowercase hex digits, computed here rather than by the server.
fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

#[test]
fn published_trees_serve_every_valid_skill_whole_and_report_the_rest_by_rule() {
    for expected in &EXPECTED {
        let root = trees().join(expected.tree);
        let tree = expected.tree;
        let loaded = Skills::load_dir(&root).unwrap();
        let skipped: Vec<(String, String)> = loaded
            .skipped
            .iter()
            .map(|skipped| (skipped.uri.strip_prefix("skill://").unwrap().to_owned(), rule(&skipped.error)))
            .collect();
        let wanted: Vec<(String, String)> =
            expected.skipped.iter().map(|(path, rule)| ((*path).to_owned(), (*rule).to_owned())).collect();
        assert_eq!(skipped, wanted, "{tree}: skipped");
        assert_eq!(loaded.skills.len(), expected.served, "{tree}: served");

        // The files each served skill should hold, from the walk: those of its directory that
        // no skill nested in it holds, less the files skipped on their own.
        let mut on_disk = BTreeSet::new();
        walk(&root, "", &mut on_disk);
        let skill_dirs: BTreeSet<&str> = on_disk.iter().filter_map(|path| path.strip_suffix("/SKILL.md")).collect();
        let skipped_files: BTreeSet<&str> = expected.skipped.iter().map(|(path, _)| *path).collect();
        let mut should_hold: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for path in &on_disk {
            let owner =
                std::iter::successors(Some(path.as_str()), |dir| dir.rsplit_once('/').map(|(parent, _)| parent))
                    .skip(1)
                    .find(|dir| skill_dirs.contains(dir));
            let Some(owner) = owner else { continue };
            let relative = &path[owner.len() + 1..];
            let skill_md = std::fs::read_to_string(root.join(owner).join("SKILL.md")).unwrap();
            let junk = os_junk(relative.rsplit('/').next().unwrap()) && !skill_md.contains(relative);
            if !skipped_files.contains(path.as_str()) && !junk {
                should_hold.entry(owner).or_default().push(format!("skill://{path}"));
            }
        }
        let skipped_skills: BTreeSet<&str> =
            expected.skipped.iter().filter_map(|(path, _)| path.strip_suffix("/SKILL.md")).collect();
        should_hold.retain(|dir, _| !skipped_skills.contains(dir));
        assert_eq!(should_hold.len(), expected.served, "{tree}: skill directories found by the walk");

        for entry in loaded.skills.entries() {
            let dir = entry.uri.strip_prefix("skill://").unwrap().strip_suffix("/SKILL.md").unwrap();
            let files = serde_json::to_value(&entry.resources).unwrap();
            let files = files.as_array().unwrap();
            let listed: BTreeSet<String> = files.iter().map(|file| file["uri"].as_str().unwrap().to_owned()).collect();
            let wanted: BTreeSet<String> = should_hold[dir].iter().cloned().collect();
            assert_eq!(listed, wanted, "{tree}: the files of {dir}");
            assert_eq!(listed.len(), files.len(), "{tree}: {dir} lists a file twice");
            for file in files {
                let path = file["uri"].as_str().unwrap().strip_prefix("skill://").unwrap();
                let bytes = std::fs::read(root.join(path)).unwrap();
                assert_eq!(file["digest"], digest(&bytes), "{tree}: {path}");
                assert_eq!(file["size"], bytes.len(), "{tree}: {path}");
            }
        }
    }
}

type Client = RunningService<RoleClient, ()>;

/// A client speaking MCP 2026-07-28 to a server of the skills of `tree`.
async fn serve(tree: &str) -> Client {
    let server =
        FusionServer::builder("trees", "1").skills(Skills::from_dir(trees().join(tree)).unwrap()).build(()).unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

/// The bytes and MIME type `uri` is read as over the protocol, a blob decoded.
async fn read(client: &Client, uri: &str) -> Result<(Vec<u8>, String), ServiceError> {
    let read = client.read_resource(ReadResourceRequestParams::new(uri)).await?;
    Ok(match &read.contents[..] {
        [ResourceContents::TextResourceContents { uri: read_uri, mime_type: Some(mime_type), text, .. }] => {
            assert_eq!(read_uri, uri);
            (text.as_bytes().to_vec(), mime_type.clone())
        }
        [ResourceContents::BlobResourceContents { uri: read_uri, mime_type: Some(mime_type), blob, .. }] => {
            assert_eq!(read_uri, uri);
            (base64::engine::general_purpose::STANDARD.decode(blob).unwrap(), mime_type.clone())
        }
        other => panic!("{uri}: expected one content with its MIME type, got {other:?}"),
    })
}

#[tokio::test]
async fn published_trees_are_read_back_over_the_protocol_byte_for_byte() {
    for (tree, files) in [
        (
            "k-dense-ai-claude-scientific-skills",
            &[
                ("perplexity-search/assets/.env.example", "text/plain"),
                ("timesfm-forecasting/scripts/forecast_csv.py", "text/x-python"),
                ("timesfm-forecasting/SKILL.md", "text/markdown"),
            ][..],
        ),
        (
            "anthropics-skills",
            &[
                ("web-artifacts-builder/scripts/shadcn-components.tar.gz", "application/gzip"),
                ("skill-creator/LICENSE.txt", "text/plain"),
            ][..],
        ),
        (
            "obra-superpowers",
            &[
                // A Graphviz graph, which the extension table takes for a Word template.
                ("writing-skills/graphviz-conventions.dot", "text/vnd.graphviz"),
                ("brainstorming/scripts/server.cjs", "text/javascript"),
                ("subagent-driven-development/scripts/task-brief", "text/plain"),
            ][..],
        ),
        (
            "openai-skills",
            &[(".curated/notion-knowledge-capture/evaluations/decision-record.json", "application/json")][..],
        ),
    ] {
        let client = serve(tree).await;
        for (path, mime_type) in files {
            let (bytes, read_type) = read(&client, &format!("skill://{path}")).await.unwrap();
            assert_eq!(read_type, *mime_type, "{tree}: {path}");
            assert!(bytes == std::fs::read(trees().join(tree).join(path)).unwrap(), "{tree}: {path} read back changed");
        }
        // What the loader skipped is not served: a skill, whole, and an LFS pointer.
        for (skipped, _) in EXPECTED.iter().find(|expected| expected.tree == tree).unwrap().skipped {
            assert!(read(&client, &format!("skill://{skipped}")).await.is_err(), "{tree}: {skipped} is served");
        }
    }
}
