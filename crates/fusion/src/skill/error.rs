//! Why a skill cannot be served: each refusal names the file (and the field, the line), says
//! what was found and what was expected, and what to do, as a compiler's diagnostic does.

use std::path::PathBuf;

use super::load::Skipped;
use super::{MAX_BYTES, MAX_FILES};

/// Why a skill, or a set of skills, cannot be served. Its message reads as a compiler's
/// diagnostic: where (the file, its line when known), what was found, what was expected, and
/// the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// `SKILL.md` does not begin with a `---` line.
    #[error(
        "{file}:1: no frontmatter: the file starts with {found}\n  \
         expected: a first line `---`, the YAML fields (`name` and `description` at least), then a line `---`\n  \
         help: put the frontmatter block at the very top of the file"
    )]
    NoFrontmatter {
        /// The `SKILL.md`: its path on disk, or its URI for a skill declared in Rust.
        file: String,
        /// What the file starts with instead.
        found: String,
    },
    /// The frontmatter is opened by `---` and never closed.
    #[error(
        "{file}:1: the frontmatter opened on line 1 is never closed\n  \
         expected: a line `---` after the last field\n  \
         help: add a line `---` between the fields and the instructions"
    )]
    UnclosedFrontmatter {
        /// The `SKILL.md`.
        file: String,
    },
    /// `SKILL.md` is not UTF-8 text.
    #[error("{file}: not UTF-8 text\n  expected: a SKILL.md in UTF-8\n  help: save the file as UTF-8")]
    NotUtf8 {
        /// The `SKILL.md`.
        file: String,
    },
    /// The frontmatter is not YAML, or YAML that JSON cannot hold.
    #[error("{file}{}: the frontmatter is not valid YAML: {reason}\n  help: {help}", at(*.line))]
    Yaml {
        /// The `SKILL.md`.
        file: String,
        /// The line of `SKILL.md` the YAML reader stopped at, when it says.
        line: Option<u32>,
        /// What the reader said.
        reason: String,
        /// What to do.
        help: String,
    },
    /// A frontmatter field is missing, or its value breaks a rule of the Agent Skills
    /// specification.
    #[error("{file}{}: field `{field}` is {found}\n  expected: {expected}\n  help: {help}", at(*.line))]
    Field {
        /// The `SKILL.md`.
        file: String,
        /// The line of the field, when it stands on a line of its own.
        line: Option<u32>,
        /// The field (`name`, `metadata.version`).
        field: String,
        /// What it holds (or `missing`).
        found: String,
        /// What the rule asks for.
        expected: &'static str,
        /// What to write instead.
        help: String,
    },
    /// A skill's path, or the path of one of its files, cannot be a resource URI.
    #[error("{skill}: the path {path:?} cannot be served: {reason}\n  help: {help}")]
    Path {
        /// The skill (its `SKILL.md` URI, or its directory on disk).
        skill: String,
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
        /// What to write instead.
        help: String,
    },
    /// Two skills stand at one path.
    #[error(
        "two skills at {uri}: {first} and {second}\n  \
         expected: one skill per path\n  \
         help: give one of them another path (a prefix such as `team/`), or drop it"
    )]
    DuplicateSkill {
        /// The URI of their `SKILL.md`.
        uri: String,
        /// Where the first came from.
        first: String,
        /// Where the second came from.
        second: String,
    },
    /// Two declarations give one URI different contents, or make it both a file and a
    /// directory.
    #[error("{uri}: {reason}\n  help: {help}")]
    Conflict {
        /// The URI both claim.
        uri: String,
        /// How they disagree.
        reason: String,
        /// What to do.
        help: String,
    },
    /// A skill holds more files or bytes than every host must accept.
    #[error(
        "the skill {uri} holds {files} files of {bytes} bytes in all (nested skills' files included)\n  \
         expected: at most {max_files} files and {max_bytes} bytes (16 MiB), which every host loads\n  \
         help: move large or generated files out of the skill, or split it into smaller skills",
        max_files = MAX_FILES,
        max_bytes = MAX_BYTES
    )]
    TooLarge {
        /// The URI of its `SKILL.md`.
        uri: String,
        /// How many files it holds.
        files: usize,
        /// How many bytes they hold.
        bytes: u64,
    },
    /// An entry of a skills directory is a link, a special file, or has a name that is not
    /// UTF-8.
    #[error("{}: {reason}\n  help: {help}", .path.display())]
    Unsupported {
        /// The entry.
        path: PathBuf,
        /// What it is.
        reason: &'static str,
        /// What to do.
        help: &'static str,
    },
    /// A skills directory holds no `SKILL.md` at all.
    #[error(
        "{}: no skill found\n  \
         expected: subdirectories holding a SKILL.md each (the directory name is the skill's name)\n  \
         help: give Skills::from_dir the directory above the skills",
        .root.display()
    )]
    NoSkills {
        /// The directory given.
        root: PathBuf,
    },
    /// The directory given is a skill itself, so its path below itself would be empty.
    #[error(
        "{}: the directory given is a skill itself (it holds a SKILL.md)\n  \
         expected: the directory above the skills; a skill's path below it is its URI (skill://<path>/SKILL.md)\n  \
         help: give Skills::from_dir the parent directory",
        .root.display()
    )]
    RootIsSkill {
        /// The directory given.
        root: PathBuf,
    },
    /// A file is a Git LFS pointer: the tree was checked out without its LFS objects.
    #[error(
        "{}:1: a Git LFS pointer, not the file it stands for\n  \
         expected: the file's own bytes (the pointer says `version https://git-lfs.github.com/spec/v1`)\n  \
         help: the tree was checked out without `git lfs pull`: run `git lfs install && git lfs pull` in it, then start again",
        .path.display()
    )]
    LfsPointer {
        /// The file.
        path: PathBuf,
    },
    /// Every skill of a directory tree was refused: the tree has nothing to serve.
    #[error(
        "{}: none of its {} skills can be served\n{}",
        .root.display(),
        .skipped.len(),
        .skipped.iter().map(|skipped| skipped.error.to_string()).collect::<Vec<_>>().join("\n")
    )]
    NoValidSkill {
        /// The directory given.
        root: PathBuf,
        /// Each skill, and why it was refused.
        skipped: Vec<Skipped>,
    },
    /// A file or directory could not be read.
    #[error("{}: cannot be read: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// `:line`, when the line is known.
fn at(line: Option<u32>) -> String {
    line.map(|line| format!(":{line}")).unwrap_or_default()
}
