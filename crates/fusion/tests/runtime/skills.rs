//! Agent Skills served as SEP-2640 prescribes, through a real rmcp client speaking MCP
//! 2026-07-28, against a tree that reproduces the SEP's own examples (`git-workflow`,
//! `acme/billing/refunds`, `pdf-processing`) and a nested skill (`code-review` holding
//! `security-review`); and every malformed skill refused before the server starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_fusion::cache::{CacheHint, Listing};
use mcp_fusion::skill::{Skill, SkillError, Skills};
use mcp_fusion::{BuildError, FusionServer};
use rmcp::model::{
    ClientRequest, CustomRequest, ErrorCode, GetSkillRequestParams, PaginatedRequestParams, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService, ServiceError};
use rmcp::{ErrorData, RoleClient};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The tree of skills the tests serve.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

/// The bytes of `path` below the fixtures.
fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(path)).unwrap()
}

/// `sha256:` and the digest's 64 lowercase hex digits, computed here rather than by the server.
fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// A skill's entry as the SEP shapes it: the URI of its `SKILL.md`, its frontmatter, and
/// `files` (below the skill's directory) with their digests and sizes.
fn entry(path: &str, frontmatter: Value, files: &[&str]) -> Value {
    let resources: Vec<Value> = files
        .iter()
        .map(|file| {
            let bytes = fixture(&format!("{path}/{file}"));
            json!({"uri": format!("skill://{path}/{file}"), "digest": digest(&bytes), "size": bytes.len()})
        })
        .collect();
    json!({"uri": format!("skill://{path}/SKILL.md"), "frontmatter": frontmatter, "resources": resources})
}

/// The fixtures' skills, listed fresh for five minutes to anyone, as the SEP's example says.
fn server() -> FusionServer {
    let five_minutes = CacheHint::shared(Duration::from_secs(300));
    FusionServer::builder("docs-server", "1")
        .skills(Skills::from_dir(fixtures()).unwrap())
        .list_cache_hint(Listing::Skills, five_minutes)
        .cache_hint(five_minutes)
        .build(())
        .unwrap()
}

type Client = RunningService<RoleClient, ()>;

/// A client of `server` speaking MCP 2026-07-28 (results carry `resultType` and cache hints).
async fn connect(server: FusionServer) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

/// The JSON-RPC error a request got.
fn rpc_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_extension_is_declared_with_directory_read_beside_resources() {
    let client = connect(server()).await;
    let capabilities = &client.peer_info().unwrap().capabilities;
    let extensions = capabilities.extensions.as_ref().unwrap();
    assert_eq!(Value::Object(extensions["io.modelcontextprotocol/skills"].clone()), json!({"directoryRead": true}));
    assert!(capabilities.resources.is_some());
    // A server without skills declares nothing of them, and answers their methods as unknown.
    let plain = connect(FusionServer::builder("plain", "1").build(()).unwrap()).await;
    assert!(!plain.peer_info().unwrap().capabilities.supports_skills());
    let asked = ClientRequest::CustomRequest(CustomRequest::new("skills/get", Some(json!({"uri": 5}))));
    assert_eq!(rpc_error(plain.send_request(asked).await).code, ErrorCode::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn skills_list_gives_every_skill_flat_with_its_frontmatter_and_whole_manifest() {
    let client = connect(server()).await;
    let listed = serde_json::to_value(client.list_skills(None).await.unwrap()).unwrap();
    let pdf_files = [
        "SKILL.md",
        "references/FORMS.md",
        "scripts/extract.py",
        "templates/invoice.md",
        "templates/purchase-order.md",
        "templates/regional/eu-invoice.md",
    ];
    let code_review = json!({
        "license": "MIT",
        "name": "code-review",
        "description": "Review a change before it is merged. Use it when asked to review a pull request.",
        "compatibility": "Needs git and read access to the repository",
        "allowed-tools": "Bash(git diff:*) Read",
        "metadata": {"author": "platform-team", "reviewed": "2026-05-01"},
        "x-review-depth": "thorough",
    });
    let security_review = json!({
        "name": "security-review",
        "description": "Review a change for security problems. Use it when a change touches authentication, secrets or parsing.",
    });
    let expected = json!({
        "resultType": "complete",
        "skills": [
            entry("acme/billing/refunds", json!({
                "name": "refunds",
                "description": "Process customer refund requests per company policy",
                "license": "Apache-2.0",
            }), &["SKILL.md", "examples/email.md"]),
            // The nested skill's files are the enclosing skill's too; the listing stays flat.
            entry("code-review", code_review, &["SKILL.md", "security-review/SKILL.md", "security-review/checklist.md"]),
            entry("code-review/security-review", security_review, &["SKILL.md", "checklist.md"]),
            entry("git-workflow", json!({
                "name": "git-workflow",
                "description": "Follow this team's Git conventions for branching and commits",
            }), &["SKILL.md"]),
            entry("pdf-processing", json!({
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "metadata": {"version": "2.1.0"},
            }), &pdf_files),
        ],
        "ttlMs": 300_000,
        "cacheScope": "public",
    });
    assert_eq!(listed, expected);
    // A digest is `sha256:` and 64 lowercase hex digits.
    let digest = listed["skills"][0]["resources"][0]["digest"].as_str().unwrap();
    assert!(digest.len() == 71 && digest[7..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
}

#[tokio::test]
async fn skills_get_returns_one_entry_and_names_the_closest_skill_for_an_unknown_uri() {
    let client = connect(server()).await;
    let got = client.get_skill(GetSkillRequestParams::new("skill://pdf-processing/SKILL.md")).await.unwrap();
    let got = serde_json::to_value(got).unwrap();
    assert_eq!(
        (&got["resultType"], &got["ttlMs"], &got["cacheScope"]),
        (&json!("complete"), &json!(300_000), &json!("public"))
    );
    assert_eq!(got["skill"]["frontmatter"]["metadata"], json!({"version": "2.1.0"}));
    assert_eq!(got["skill"]["resources"].as_array().unwrap().len(), 6);
    assert_eq!(got["skill"], serde_json::to_value(&client.list_skills(None).await.unwrap().skills[4]).unwrap());

    let unknown = GetSkillRequestParams::new("skill://acme/billing/chargebacks/SKILL.md");
    let error = rpc_error(client.get_skill(unknown).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "No skill is served at 'skill://acme/billing/chargebacks/SKILL.md'. \
         Did you mean 'skill://acme/billing/refunds/SKILL.md'? Call skills/list for the skills this server serves."
    );
    assert_eq!(
        error.data.unwrap(),
        json!({"uri": "skill://acme/billing/chargebacks/SKILL.md", "closest": ["skill://acme/billing/refunds/SKILL.md"]})
    );
    // Behind rmcp's own transport, a URI that is no SKILL.md's is refused by rmcp before the
    // server sees it, with the same code (the framework's transports refuse it first, cut and
    // escaped: tests/protocol/skills.rs).
    let error = rpc_error(client.get_skill(GetSkillRequestParams::new("skill://pdf-processing")).await);
    assert_eq!(
        (error.code, error.message.as_ref()),
        (ErrorCode::INVALID_PARAMS, "skill://pdf-processing is not the uri of a SKILL.md")
    );
    // What the client sent is cut and escaped in the message, as every echo is.
    let hostile = format!("skill://x\u{202e}{}/SKILL.md", "a".repeat(100));
    let error = rpc_error(client.get_skill(GetSkillRequestParams::new(&*hostile)).await);
    assert!(error.message.starts_with("No skill is served at 'skill://x\\u{202e}aaaa"), "{}", error.message);
    assert!(error.message.len() < 300, "{}", error.message);
}

#[tokio::test]
async fn a_directory_lists_its_files_and_folders_and_a_file_is_no_directory() {
    let client = connect(server()).await;
    let templates = ReadResourceDirectoryRequestParams::new("skill://pdf-processing/templates");
    let listed = serde_json::to_value(client.read_resource_directory(templates).await.unwrap()).unwrap();
    assert_eq!(listed["resultType"], "complete");
    assert_eq!(
        listed["resources"],
        json!([
            {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
            {"uri": "skill://pdf-processing/templates/purchase-order.md", "name": "purchase-order.md", "mimeType": "text/markdown"},
            {"uri": "skill://pdf-processing/templates/regional", "name": "regional", "mimeType": "inode/directory"},
        ])
    );
    let root = ReadResourceDirectoryRequestParams::new("skill://code-review");
    let names: Vec<String> =
        client.read_resource_directory(root).await.unwrap().resources.into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["code-review", "security-review"], "SKILL.md goes by its skill's name");

    let file = ReadResourceDirectoryRequestParams::new("skill://pdf-processing/SKILL.md");
    let error = rpc_error(client.read_resource_directory(file).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "'skill://pdf-processing/SKILL.md' is not a directory resource: it is a file. \
         Read it with resources/read, or list its directory 'skill://pdf-processing'."
    );
    let slash = ReadResourceDirectoryRequestParams::new("skill://pdf-processing/templates/");
    let error = rpc_error(client.read_resource_directory(slash).await);
    assert!(error.message.ends_with("directory URIs end without a slash. Read 'skill://pdf-processing/templates'."));
    let unknown = ReadResourceDirectoryRequestParams::new("skill://pdf-processing/template");
    let error = rpc_error(client.read_resource_directory(unknown).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error.message.starts_with(
            "No directory resource at 'skill://pdf-processing/template'. Did you mean 'skill://pdf-processing/templates'?"
        ),
        "{}",
        error.message
    );
    // The directories above a skill's root are no skill's: not served.
    let prefix = ReadResourceDirectoryRequestParams::new("skill://acme/billing");
    assert_eq!(rpc_error(client.read_resource_directory(prefix).await).code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn files_are_read_byte_for_byte_and_listed_with_their_skills_names() {
    let client = connect(server()).await;
    for (path, mime_type) in [
        ("pdf-processing/SKILL.md", "text/markdown"),
        ("pdf-processing/scripts/extract.py", "text/x-python"),
        ("acme/billing/refunds/examples/email.md", "text/markdown"),
    ] {
        let uri = format!("skill://{path}");
        let read = client.read_resource(ReadResourceRequestParams::new(&*uri)).await.unwrap();
        match &read.contents[..] {
            [ResourceContents::TextResourceContents { uri: read_uri, mime_type: Some(read_type), text, .. }] => {
                assert_eq!((read_uri.as_str(), read_type.as_str()), (uri.as_str(), mime_type));
                assert_eq!(text.as_bytes(), fixture(path), "{path}");
            }
            other => panic!("expected one text content, got {other:?}"),
        }
    }
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(listed.len(), 12, "every file once, the nested skill's included");
    let skill_md = listed.iter().find(|r| r.uri == "skill://acme/billing/refunds/SKILL.md").unwrap();
    assert_eq!(
        (skill_md.name.as_str(), skill_md.description.as_deref(), skill_md.mime_type.as_deref()),
        ("refunds", Some("Process customer refund requests per company policy"), Some("text/markdown"))
    );
    let unknown = client.read_resource(ReadResourceRequestParams::new("skill://git-workflow/SKILLS.md")).await;
    assert!(rpc_error(unknown).message.contains("Did you mean 'skill://git-workflow/SKILL.md'?"));
}

#[tokio::test]
async fn a_skill_declared_in_rust_serves_bytes_as_a_blob_and_reads_pass_the_guards() {
    let text = "---\nname: brand\ndescription: Use the company's logo and colours.\n---\n# Brand\n";
    let logo: &[u8] = &[0x89, b'P', b'N', b'G', 0, 1, 2];
    let brand = Skill::new("brand", text).prefix("acme").file("assets/logo.png", logo);
    let open = connect(FusionServer::builder("s", "1").skill(brand.clone()).build(()).unwrap()).await;
    let read = open.read_resource(ReadResourceRequestParams::new("skill://acme/brand/assets/logo.png")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap(),
        json!([{"uri": "skill://acme/brand/assets/logo.png", "mimeType": "image/png", "blob": "iVBORwABAg=="}])
    );
    let entries = open.list_skills(None).await.unwrap().skills;
    assert_eq!(serde_json::to_value(&entries[0].resources).unwrap()[1]["size"], 7);
    // The skill's files are resources like any other: a server that wants an identity wants it here.
    let guarded =
        connect(FusionServer::builder("s", "1").skill(brand).requires_identity(true).build(()).unwrap()).await;
    let refused = rpc_error(guarded.read_resource(ReadResourceRequestParams::new("skill://acme/brand/SKILL.md")).await);
    assert_eq!(refused.data.unwrap()["code"], "AUTH_REQUIRED");
}

#[tokio::test]
async fn skills_list_pages_and_malformed_params_say_what_is_wrong() {
    let many = (0..150).map(|n| {
        let name = format!("skill-{n:03}");
        Skill::new(&*name, format!("---\nname: {name}\ndescription: Skill number {n}.\n---\n"))
    });
    let client = connect(FusionServer::builder("s", "1").skills(Skills::new(many).unwrap()).build(()).unwrap()).await;
    let first = client.list_skills(None).await.unwrap();
    assert_eq!((first.skills.len(), first.next_cursor.as_deref()), (100, Some("100")));
    let next = PaginatedRequestParams::default().with_cursor(first.next_cursor);
    let second = client.list_skills(Some(next)).await.unwrap();
    assert_eq!((second.skills.len(), second.next_cursor), (50, None));
    assert_eq!(client.list_all_skills().await.unwrap().len(), 150);

    for (method, params, message) in [
        (
            "skills/get",
            json!({"uri": 5}),
            "Invalid params for skills/get: \"uri\" must be a string, but it is a number",
        ),
        (
            "skills/get",
            json!({}),
            "Invalid params for skills/get: \"uri\" is missing; expected an object with \"uri\", a string (the URI of a SKILL.md)",
        ),
        (
            "resources/directory/read",
            Value::Null,
            "Invalid params for resources/directory/read: \"uri\" is missing; expected an object with \"uri\", a string",
        ),
        (
            "resources/directory/read",
            json!({"uri": "skill://skill-001", "cursor": 3}),
            "Invalid params for resources/directory/read: \"cursor\" must be a string, but it is a number",
        ),
    ] {
        let params = Some(params).filter(|params| !params.is_null());
        let asked = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        let error = rpc_error(client.send_request(asked).await);
        assert_eq!((error.code, error.message.as_ref()), (ErrorCode::INVALID_PARAMS, message));
    }
    let forged = PaginatedRequestParams::default().with_cursor(Some("x".to_owned()));
    assert!(rpc_error(client.list_skills(Some(forged)).await).message.starts_with("Invalid cursor 'x'"));
    let asked = ClientRequest::CustomRequest(CustomRequest::new("skills/list", None));
    assert!(client.send_request(asked).await.is_ok(), "no params are no page's params: the first page");
}

/// A skills tree in a fresh temporary directory: each `(path, text)` written below it.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

/// The refusal of the tree `files`, with the temporary root replaced by `<root>`.
fn refusal(files: &[(&str, &str)]) -> String {
    let root = tree(files);
    let error = Skills::from_dir(root.path()).unwrap_err().to_string();
    error.replace(&root.path().display().to_string(), "<root>")
}

#[test]
fn a_malformed_directory_is_a_start_up_error_naming_the_file_and_why() {
    let good = "---\nname: refunds\ndescription: Refund a payment.\n---\n";
    assert!(
        refusal(&[("refunds/SKILL.md", "# Refunds\n")])
            .starts_with("<root>/refunds/SKILL.md:1: no frontmatter: the file starts with the line \"# Refunds\"")
    );
    let yaml = refusal(&[("refunds/SKILL.md", "---\nname: refunds\ndescription: Refunds: always\n---\n")]);
    assert!(yaml.starts_with("<root>/refunds/SKILL.md:3: the frontmatter is not valid YAML: mapping values"), "{yaml}");
    assert_eq!(
        refusal(&[("team/refund/SKILL.md", good)]),
        "<root>/team/refund/SKILL.md:2: field `name` is \"refunds\", but its directory is named \"refund\"\n  \
         expected: the name of the skill's directory\n  \
         help: write `name: refund`, or rename the directory to \"refunds\""
    );
    let missing = refusal(&[("refunds/SKILL.md", "---\nname: refunds\n---\n")]);
    assert!(missing.starts_with("<root>/refunds/SKILL.md: field `description` is missing\n"), "{missing}");
    assert!(refusal(&[("README.md", "no skills here")]).starts_with("<root>: no skill found"));
    assert!(refusal(&[("SKILL.md", good)]).starts_with("<root>: the directory given is a skill itself"));
    let root = tree(&[("refunds/SKILL.md", good)]);
    for n in 0..512 {
        std::fs::write(root.path().join(format!("refunds/note-{n}.txt")), "x").unwrap();
    }
    let error = Skills::from_dir(root.path()).unwrap_err();
    assert!(matches!(error, SkillError::TooLarge { files: 513, .. }), "{error}");
    assert!(error.to_string().starts_with("the skill skill://refunds/SKILL.md holds 513 files of 565 bytes"));
    let root = tree(&[("refunds/SKILL.md", good)]);
    let heavy = std::fs::File::create(root.path().join("refunds/big.bin")).unwrap();
    heavy.set_len(16 * 1024 * 1024).unwrap();
    assert!(matches!(Skills::from_dir(root.path()), Err(SkillError::TooLarge { files: 2, .. })));
}

#[cfg(unix)]
#[test]
fn a_link_inside_a_skill_is_refused_and_version_control_metadata_is_left_out() {
    let good = "---\nname: refunds\ndescription: Refund a payment.\n---\n";
    let root = tree(&[("refunds/SKILL.md", good), ("refunds/.git/config", "x"), ("outside.md", "secret")]);
    let skills = Skills::from_dir(root.path()).unwrap();
    assert_eq!(serde_json::to_value(&skills.entries()[0].resources).unwrap().as_array().unwrap().len(), 1);
    std::os::unix::fs::symlink(root.path().join("outside.md"), root.path().join("refunds/linked.md")).unwrap();
    let error = Skills::from_dir(root.path()).unwrap_err().to_string();
    assert!(error.ends_with("/refunds/linked.md: a symbolic link\n  help: copy what it points to into the skill: links are not followed, so a skill never reaches outside its directory"), "{error}");
    // Beside a skill without links, the skill with one is left out and the other served.
    std::fs::create_dir(root.path().join("chase")).unwrap();
    std::fs::write(root.path().join("chase/SKILL.md"), good.replace("refunds", "chase")).unwrap();
    let loaded = Skills::load_dir(root.path()).unwrap();
    assert_eq!(loaded.skills.iter().map(Skill::uri).collect::<Vec<_>>(), ["skill://chase/SKILL.md"]);
    assert!(matches!(&loaded.skipped[..], [skipped] if matches!(skipped.error, SkillError::Unsupported { .. })));
}

#[test]
fn a_malformed_skill_declared_in_rust_or_two_at_one_path_stop_the_build() {
    let bad = Skill::new("refunds", "---\nname: refunds\ndescription: \"\"\n---\n");
    let error = FusionServer::builder("s", "1").skill(bad).build(()).unwrap_err();
    assert!(matches!(&error, BuildError::Skill(skill) if matches!(**skill, SkillError::Field { .. })));
    assert!(error.to_string().starts_with("skill://refunds/SKILL.md:3: field `description` is blank\n"), "{error}");
    let git = Skill::new("git-workflow", "---\nname: git-workflow\ndescription: Branch and commit.\n---\n");
    let error =
        FusionServer::builder("s", "1").skills(Skills::from_dir(fixtures()).unwrap()).skill(git).build(()).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("two skills at skill://git-workflow/SKILL.md: "), "{message}");
    assert!(message.contains("fixtures/skills/git-workflow and Skill::new(\"git-workflow\")"), "{message}");
    let twice = FusionServer::builder("s", "1")
        .extension("io.modelcontextprotocol/skills", serde_json::Map::new())
        .skills(Skills::from_dir(fixtures()).unwrap())
        .build(());
    assert!(matches!(twice, Err(BuildError::Duplicate { what: "extension", .. })));
}

/// `tree`'s refusal text with its temporary root replaced by `<root>`.
fn shown(root: &tempfile::TempDir, text: impl std::fmt::Display) -> String {
    text.to_string().replace(&root.path().display().to_string(), "<root>")
}

/// The URIs of the files of the entry of `skills` at `uri`, as `skills/list` gives them.
fn manifest(skills: &Skills, uri: &str) -> Vec<String> {
    let entry = skills.entries().iter().find(|entry| entry.uri == uri).unwrap();
    let files = serde_json::to_value(&entry.resources).unwrap();
    files.as_array().unwrap().iter().map(|file| file["uri"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_tree_serves_its_good_skills_and_reports_a_malformed_one_by_file_line_and_rule() {
    let good = |name: &str| format!("---\nname: {name}\ndescription: The skill {name}.\n---\n# {name}\n");
    let broken = "---\nname: Refunds\ndescription: Refund a payment.\n---\n";
    let root = tree(&[
        ("chase/SKILL.md", &good("chase")),
        ("refunds/SKILL.md", broken),
        ("refunds/notes.md", "served with its skill or not at all"),
        ("team/triage/SKILL.md", &good("triage")),
    ]);
    let loaded = Skills::load_dir(root.path()).unwrap();
    let served: Vec<String> = loaded.skills.iter().map(Skill::uri).collect();
    assert_eq!(served, ["skill://chase/SKILL.md", "skill://team/triage/SKILL.md"]);
    assert_eq!(loaded.skipped.len(), 1);
    let skipped = &loaded.skipped[0];
    assert_eq!((skipped.uri.as_str(), skipped.whole_skill), ("skill://refunds/SKILL.md", true));
    assert!(matches!(&skipped.error, SkillError::Field { line: Some(2), field, .. } if field == "name"));
    let report = shown(&root, skipped);
    assert!(
        report.starts_with("<root>/refunds/SKILL.md:2: field `name` is \"Refunds\" (the uppercase 'R')"),
        "{report}"
    );
    assert!(report.contains("\n  expected: ") && report.contains("\n  help: "), "{report}");
    assert!(report.ends_with("note: the skill is not served; the others are (skill://refunds/SKILL.md)"), "{report}");
    // The default loads the rest and logs the refusal as a warning; strict mode refuses the
    // tree with it.
    let log = crate::lockfile::logged(|| assert_eq!(Skills::from_dir(root.path()).unwrap().len(), 2));
    let log = shown(&root, log);
    assert!(log.contains(" WARN mcp_fusion::skill: <root>/refunds/SKILL.md:2: field `name` is \"Refunds\""), "{log}");
    assert_eq!(log.matches(" WARN ").count(), 2, "{log}");
    assert!(
        log.contains(
            " WARN mcp_fusion::skill: <root>: 2 skills served, 1 skipped, 0 files left out, each reported above"
        ),
        "{log}"
    );
    let strict = Skills::from_dir_strict(root.path()).unwrap_err();
    assert!(shown(&root, &strict).starts_with("<root>/refunds/SKILL.md:2: field `name`"), "{strict}");
    // A tree with no skill to serve is still an error, listing each refusal.
    let root = tree(&[("refunds/SKILL.md", broken), ("chase/SKILL.md", "# Chase\n")]);
    let error = Skills::from_dir(root.path()).unwrap_err();
    assert!(matches!(&error, SkillError::NoValidSkill { skipped, .. } if skipped.len() == 2));
    let error = shown(&root, error);
    assert!(
        error.starts_with("<root>: none of its 2 skills can be served\n<root>/chase/SKILL.md:1: no frontmatter"),
        "{error}"
    );
    assert!(error.contains("\n<root>/refunds/SKILL.md:2: field `name`"), "{error}");
}

#[tokio::test]
async fn dot_files_are_listed_and_read_byte_for_byte_and_version_control_and_os_junk_are_not() {
    let text = "---\nname: shell\ndescription: Set up a shell.\n---\nCopy `templates/.zshrc` and fill `.env.example`; see `.DS_Store`.\n";
    let env = "API_KEY=\nREGION=eu-west-1\n";
    let root = tree(&[
        ("shell/SKILL.md", text),
        ("shell/.env.example", env),
        ("shell/.gitignore", "*.log\n"),
        ("shell/templates/.zshrc", "export PATH=$HOME/bin:$PATH\n"),
        ("shell/.github/workflow.yml", "on: push\n"),
        ("shell/.git/config", "[core]\n"),
        ("shell/scripts/.venv/bin/python", "a virtualenv"),
        ("shell/scripts/.pytest_cache/v/cache", "a cache"),
        ("shell/scripts/__pycache__/setup.cpython-312.pyc", "bytecode"),
        ("shell/.DS_Store", "named by the SKILL.md, so served"),
        ("shell/templates/.DS_Store", "junk"),
        ("shell/._notes.md", "AppleDouble"),
        ("shell/Thumbs.db", "junk"),
    ]);
    let skills = Skills::from_dir_strict(root.path()).unwrap();
    assert_eq!(
        manifest(&skills, "skill://shell/SKILL.md"),
        [
            "skill://shell/SKILL.md",
            "skill://shell/.DS_Store",
            "skill://shell/.env.example",
            "skill://shell/.github/workflow.yml",
            "skill://shell/.gitignore",
            "skill://shell/templates/.zshrc",
        ]
    );
    let client = connect(FusionServer::builder("s", "1").skills(skills).build(()).unwrap()).await;
    let read = client.read_resource(ReadResourceRequestParams::new("skill://shell/.env.example")).await.unwrap();
    match &read.contents[..] {
        [ResourceContents::TextResourceContents { text, .. }] => assert_eq!(text.as_bytes(), env.as_bytes()),
        other => panic!("expected one text content, got {other:?}"),
    }
    let listed = client.list_all_resources().await.unwrap();
    assert!(listed.iter().any(|r| r.uri == "skill://shell/templates/.zshrc"));
}

#[test]
fn skills_in_hidden_folders_are_served_at_their_paths() {
    let good = |name: &str| format!("---\nname: {name}\ndescription: The skill {name}.\n---\n");
    let root = tree(&[
        (".curated/pdf/SKILL.md", &good("pdf")),
        (".system/skill-creator/SKILL.md", &good("skill-creator")),
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("README.md", "not a skill"),
    ]);
    let skills = Skills::from_dir_strict(root.path()).unwrap();
    let served: Vec<String> = skills.iter().map(Skill::uri).collect();
    assert_eq!(served, ["skill://.curated/pdf/SKILL.md", "skill://.system/skill-creator/SKILL.md"]);
    // A skill inside version control metadata is no skill of the tree.
    let root = tree(&[(".git/pdf/SKILL.md", &good("pdf"))]);
    assert!(matches!(Skills::from_dir(root.path()), Err(SkillError::NoSkills { .. })));
}

#[tokio::test]
async fn fonts_and_schemas_are_typed_from_the_registry_and_an_lfs_pointer_is_reported() {
    let text = "---\nname: brand\ndescription: Use the brand.\n---\n# Brand\n";
    let pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 48213\n";
    let root = tree(&[("brand/SKILL.md", text), ("brand/schema.xsd", "<xs:schema/>\n"), ("brand/logo.png", pointer)]);
    std::fs::write(root.path().join("brand/Inter.ttf"), [0u8, 1, 0, 0, 0, 16]).unwrap();
    std::fs::write(root.path().join("brand/Inter.woff2"), b"wOF2\0\x01\0\0").unwrap();
    let loaded = Skills::load_dir(root.path()).unwrap();
    assert_eq!(loaded.skipped.len(), 1);
    let skipped = &loaded.skipped[0];
    assert_eq!((skipped.uri.as_str(), skipped.whole_skill), ("skill://brand/logo.png", false));
    let report = shown(&root, skipped);
    assert!(report.starts_with("<root>/brand/logo.png:1: a Git LFS pointer, not the file it stands for"), "{report}");
    assert!(report.contains("checked out without `git lfs pull`"), "{report}");
    assert!(report.ends_with("note: the file is not served (skill://brand/logo.png)"), "{report}");
    let strict = Skills::from_dir_strict(root.path()).unwrap_err();
    assert!(matches!(strict, SkillError::LfsPointer { .. }), "{strict}");
    let client = connect(FusionServer::builder("s", "1").skills(loaded.skills).build(()).unwrap()).await;
    let listed = client.list_all_resources().await.unwrap();
    let types: Vec<(&str, Option<&str>)> = listed.iter().map(|r| (r.uri.as_str(), r.mime_type.as_deref())).collect();
    assert_eq!(
        types,
        [
            ("skill://brand/SKILL.md", Some("text/markdown")),
            ("skill://brand/Inter.ttf", Some("font/ttf")),
            ("skill://brand/Inter.woff2", Some("font/woff2")),
            ("skill://brand/schema.xsd", Some("text/xml")),
        ]
    );
}
