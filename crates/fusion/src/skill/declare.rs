//! One skill: its `SKILL.md`, its other files, and where it stands in the server's skill
//! namespace.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::path::{self, SKILL_MD};

/// One skill: a `SKILL.md` and the files beside it, served at
/// `skill://<prefix>/<name>/<file>`. Declared in Rust with [`Skill::new`], or found on disk by
/// [`Skills::from_dir`](super::Skills::from_dir). Nothing is checked until the server is
/// built (or [`Skills::new`](super::Skills::new) is called): then a malformed skill stops it.
///
/// ```
/// use mcp_fusion::skill::Skill;
///
/// let refunds = Skill::new("refunds", "---\nname: refunds\ndescription: Refund a payment.\n---\n# Refunds\n")
///     .prefix("acme/billing")
///     .file("examples/email.md", "Dear customer, ...");
/// assert_eq!(refunds.uri(), "skill://acme/billing/refunds/SKILL.md");
/// ```
#[derive(Clone)]
pub struct Skill {
    pub(crate) prefix: String,
    pub(crate) name: String,
    pub(crate) skill_md: Arc<[u8]>,
    /// Paths relative to the skill's directory, `/`-separated.
    pub(crate) files: Vec<(String, Arc<[u8]>)>,
    /// The directory it was read from; `None` when declared in Rust.
    pub(crate) origin: Option<PathBuf>,
}

impl Skill {
    /// The skill `name` (its directory's name, which its frontmatter's `name` must equal),
    /// whose `SKILL.md` holds `skill_md`.
    pub fn new(name: impl Into<String>, skill_md: impl Into<Vec<u8>>) -> Skill {
        Skill {
            prefix: String::new(),
            name: name.into(),
            skill_md: skill_md.into().into(),
            files: Vec::new(),
            origin: None,
        }
    }

    /// Serves it below `prefix` (`acme/billing`): at `skill://acme/billing/<name>/SKILL.md`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Skill {
        self.prefix = prefix.into();
        self
    }

    /// Adds a file at `path` below the skill's directory (`references/FORMS.md`), holding
    /// `bytes`.
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Skill {
        self.files.push((path.into(), bytes.into().into()));
        self
    }

    /// Its path in the skill namespace (`acme/billing/refunds`).
    pub fn path(&self) -> String {
        path::join(&self.prefix, &self.name)
    }

    /// The URI of its `SKILL.md`, which names the skill in `skills/get`.
    pub fn uri(&self) -> String {
        path::uri(&path::join(&self.path(), SKILL_MD))
    }

    /// One of its files as a refusal names it: its path on disk, or its URI.
    pub(crate) fn label(&self, file: &str) -> String {
        match &self.origin {
            Some(directory) => directory.join(file).display().to_string(),
            None => path::uri(&path::join(&self.path(), file)),
        }
    }

    /// Where it came from, as a refusal names it.
    pub(crate) fn origin(&self) -> String {
        match &self.origin {
            Some(directory) => directory.display().to_string(),
            None => format!("Skill::new({:?}) (prefix {:?})", self.name, self.prefix),
        }
    }
}

impl fmt::Debug for Skill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<&str> = self.files.iter().map(|(path, _)| path.as_str()).collect();
        f.debug_struct("Skill").field("uri", &self.uri()).field("files", &files).finish()
    }
}
