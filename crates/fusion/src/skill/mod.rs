//! Agent Skills served over MCP, as the skills extension (SEP-2640,
//! `io.modelcontextprotocol/skills`) prescribes.
//!
//! A skill is a directory of files, one of them a `SKILL.md` whose YAML frontmatter names it
//! and says what it is for ([Agent Skills](https://agentskills.io/specification)). Each file
//! is a resource at `skill://<skill-path>/<file-path>`, read with `resources/read` through the
//! server's guards like any resource, and listed by `resources/list` (`SKILL.md` under its
//! skill's name and description, as `text/markdown`). The server declares the extension, with
//! `directoryRead`, and answers its methods:
//!
//! - `skills/list`: each skill's entry, a page at a time: the URI of its `SKILL.md`, its
//!   frontmatter as written, and every file it holds with its SHA-256 digest and size;
//! - `skills/get`: one skill's entry, by the URI of its `SKILL.md`;
//! - `resources/directory/read`: the direct children of a skill's directory or of one below
//!   it, the folders among them as `inode/directory`.
//!
//! Skills are declared in Rust ([`Skill`]) or found in a directory tree
//! ([`Skills::from_dir`]). Either way they are checked before the server starts: a
//! `SKILL.md` without frontmatter, YAML that does not read, a field that breaks the Agent
//! Skills rules, a `name` that is not its directory's, a skill past [`MAX_FILES`] files or
//! [`MAX_BYTES`] bytes, or two skills at one path is a [`SkillError`] naming the file, the
//! field, what was found and what to do (a [`BuildError`](crate::BuildError) from
//! [`ServerBuilder::build`](crate::ServerBuilder::build) for skills declared in Rust). A tree
//! serves its valid skills and reports each other one ([`Skipped`]) as a warning at start-up;
//! [`Skills::from_dir_strict`] refuses the tree instead, [`Skills::load_dir`] hands the report
//! to the caller.
//!
//! ```
//! use mcp_fusion::FusionServer;
//! use mcp_fusion::skill::{Skill, Skills};
//!
//! let text = "---\nname: refunds\ndescription: Refund a payment. Use it when a customer asks for money back.\n---\n\
//!             # Refunds\n\nFollow [the template](examples/email.md).\n";
//! let refunds = Skill::new("refunds", text).prefix("acme/billing").file("examples/email.md", "Dear customer, ...");
//! let skills = Skills::new([refunds]).unwrap();
//! assert_eq!(skills.entries()[0].uri, "skill://acme/billing/refunds/SKILL.md");
//!
//! let server = FusionServer::builder("billing", "1.0.0").skills(skills).build(()).unwrap();
//! let listed: Vec<String> = server.resources().into_iter().map(|r| r.uri).collect();
//! assert_eq!(listed, ["skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/examples/email.md"]);
//!
//! // A malformed skill stops the build, saying where and why.
//! let wrong = Skill::new("refunds", "---\nname: Refunds\ndescription: Refund a payment.\n---\n");
//! let error = FusionServer::builder("billing", "1.0.0").skill(wrong).build(()).unwrap_err();
//! assert!(error.to_string().starts_with("skill://refunds/SKILL.md:2: field `name` is \"Refunds\" (the uppercase 'R')"));
//! ```

mod catalog;
mod declare;
mod error;
mod frontmatter;
mod load;
mod mime;
mod path;
mod set;

pub(crate) use catalog::{Catalog, Child};
pub use declare::Skill;
pub use error::SkillError;
pub use frontmatter::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
pub use load::{Loaded, Skipped};
pub use rmcp::model::SKILLS_EXTENSION_ID as EXTENSION;
pub use set::Skills;

/// The most files one skill holds (its `SKILL.md` and the files of skills nested in it
/// included), as every host must accept.
pub const MAX_FILES: usize = 512;

/// The most bytes one skill's files hold together (16 MiB), as every host must accept.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;
