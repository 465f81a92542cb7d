//! Skills found in a directory tree: every directory holding a `SKILL.md` is a skill, at its
//! path below the root. A malformed skill is reported and left out, the others served (or, in
//! strict mode, it is the error).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use super::catalog;
use super::declare::Skill;
use super::error::SkillError;
use super::path::{self, SKILL_MD};
use super::set::Skills;
use super::{MAX_BYTES, MAX_FILES, mime};

/// Directories that are no skill's content: version control metadata (a checkout's history)
/// and the caches Python tools make beside the code they run on (rebuilt on each machine, and
/// never published): `__pycache__` appears beside a skill's scripts as soon as one imports
/// another. Either would be served as hundreds of files, past the limits, or as bytecode.
const NOT_CONTENT: [&str; 9] =
    [".git", ".hg", ".svn", ".venv", ".tox", ".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__"];

/// What operating systems leave in a directory: served only when the `SKILL.md` names them.
const OS_JUNK: [&str; 7] =
    [".DS_Store", "Thumbs.db", "desktop.ini", ".directory", ".Spotlight-V100", ".Trashes", ".fseventsd"];

/// An entry of the tree, by its `/`-separated path below the root.
enum Found {
    File {
        size: u64,
        /// Left by the operating system (`.DS_Store`): served only if the `SKILL.md` names it.
        junk: bool,
    },
    Directory,
    /// A link, a special file, or a name that is not UTF-8: refused inside a skill.
    Unsupported {
        on_disk: PathBuf,
        reason: &'static str,
        help: &'static str,
    },
}

/// The skills of a directory tree, and what was left out of it and why
/// ([`Skills::load_dir`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Loaded {
    /// The directory the skills were loaded from.
    pub root: PathBuf,
    /// The skills that can be served.
    pub skills: Skills,
    /// The skills (and files) left out, each with the refusal that says where, why and the fix.
    pub skipped: Vec<Skipped>,
}

impl Loaded {
    /// Logs each skipped skill or file as a `tracing` warning, then one line counting them, as
    /// a compiler lists its warnings: a server started from a tree says at start-up what it
    /// does not serve.
    pub fn warn(&self) {
        if self.skipped.is_empty() {
            return;
        }
        for skipped in &self.skipped {
            tracing::warn!(target: "mcp_fusion::skill", "{skipped}");
        }
        let skills = self.skipped.iter().filter(|skipped| skipped.whole_skill).count();
        let files = self.skipped.len() - skills;
        tracing::warn!(
            target: "mcp_fusion::skill",
            "{}: {} skills served, {skills} skipped, {files} files left out, each reported above \
             (Skills::from_dir_strict refuses such a tree)",
            self.root.display(),
            self.skills.len(),
        );
    }
}

/// A skill, or a file of one, that a directory tree holds and is not served: its URI and the
/// refusal (file:line, the rule broken, the fix).
#[derive(Debug)]
#[non_exhaustive]
pub struct Skipped {
    /// The URI it would have been served at: its `SKILL.md`'s for a skill.
    pub uri: String,
    /// Whether the whole skill is left out, rather than one file of it.
    pub whole_skill: bool,
    /// Why.
    pub error: SkillError,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let left_out =
            if self.whole_skill { "the skill is not served; the others are" } else { "the file is not served" };
        write!(f, "{}\n  note: {left_out} ({})", self.error, self.uri)
    }
}

impl Skills {
    /// Every skill below `root` that can be served; each one that cannot is logged as a
    /// `tracing` warning (file:line, the rule broken, the fix) and left out, as
    /// [`Skills::load_dir`] reports it. A published tree often holds one malformed skill among
    /// many, and it does not stop the others. For a tree that must be whole (in CI, say), use
    /// [`Skills::from_dir_strict`].
    ///
    /// A tree with no skill that can be served is the error: no `SKILL.md` at all, every skill
    /// malformed, or a root that is itself a skill.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Skills, SkillError> {
        let loaded = Skills::load_dir(root)?;
        loaded.warn();
        Ok(loaded.skills)
    }

    /// Every skill below `root`, the first malformed skill or unservable file the error: strict
    /// mode, for a tree that must be served whole.
    pub fn from_dir_strict(root: impl AsRef<Path>) -> Result<Skills, SkillError> {
        let loaded = Skills::load_dir(root)?;
        match loaded.skipped.into_iter().next() {
            Some(skipped) => Err(skipped.error),
            None => Ok(loaded.skills),
        }
    }

    /// Every skill below `root`, and a report of what is left out and why, logged nowhere.
    ///
    /// Each directory holding a `SKILL.md` is a skill, served at its path below `root`
    /// (`root/acme/billing/refunds/SKILL.md` at `skill://acme/billing/refunds/SKILL.md`), hidden
    /// directories included (`.curated/pdf/SKILL.md` at `skill://.curated/pdf/SKILL.md`). Every
    /// file of a skill's directory is in it, dot-files (`.env.example`) and the files of skills
    /// nested in it included; left out are version control metadata (`.git`, `.hg`, `.svn`),
    /// which is the tree's history, not the skill, Python tools' caches (`.venv`,
    /// `__pycache__`, `.pytest_cache`), and what operating systems leave behind
    /// (`.DS_Store`, `Thumbs.db`) unless the `SKILL.md` names it. Files outside every skill
    /// are not served. Each file is read now, once.
    ///
    /// Skipped, each with its refusal: a skill whose `SKILL.md` breaks a rule, that holds a link
    /// or a special file (a skill never reaches outside its directory), or that is past the
    /// limits; and a file that is a Git LFS pointer (the tree was checked out without
    /// `git lfs pull`), left out of its skill. A skill nested in a skipped one is checked on
    /// its own; the files of a skipped nested skill are not served by its parent.
    pub fn load_dir(root: impl AsRef<Path>) -> Result<Loaded, SkillError> {
        let root = root.as_ref();
        let mut tree = BTreeMap::new();
        walk(root, "", &mut tree)?;
        let skill_dirs: Vec<&str> = tree
            .iter()
            .filter(|(path, found)| path::file_name(path) == SKILL_MD && matches!(found, Found::File { .. }))
            .map(|(path, _)| path::parent(path))
            .collect();
        if skill_dirs.contains(&"") {
            return Err(SkillError::RootIsSkill { root: root.to_owned() });
        }
        if skill_dirs.is_empty() {
            return Err(SkillError::NoSkills { root: root.to_owned() });
        }
        let mut skipped = Vec::new();
        let mut skills = Vec::new();
        // Every skill directory owns its files, a skipped one too: they are not its parent's.
        for (dir, files) in owners(&tree, &skill_dirs) {
            let whole = |error| Skipped { uri: path::uri(&path::join(dir, SKILL_MD)), whole_skill: true, error };
            let skill = check_entries(dir, &tree)
                .and_then(|()| read_skill(root, dir, &files))
                .and_then(|(skill, pointers)| catalog::check(&skill).map(|()| (skill, pointers)));
            match skill {
                Ok((skill, pointers)) => {
                    skills.push(skill);
                    skipped.extend(pointers);
                }
                Err(error) => skipped.push(whole(error)),
            }
        }
        if skills.is_empty() {
            let mut refused: Vec<Skipped> = skipped.into_iter().filter(|skipped| skipped.whole_skill).collect();
            return Err(match refused.len() {
                1 => refused.remove(0).error,
                _ => SkillError::NoValidSkill { root: root.to_owned(), skipped: refused },
            });
        }
        skipped.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(Loaded { root: root.to_owned(), skills: Skills::new(skills)?, skipped })
    }
}

/// Records every entry below `dir` (a path below `root`) in `tree`, what is no content left out.
fn walk(root: &Path, dir: &str, tree: &mut BTreeMap<String, Found>) -> Result<(), SkillError> {
    let on_disk = root.join(dir);
    let mut entries =
        fs::read_dir(&on_disk).map_err(io(&on_disk))?.collect::<Result<Vec<_>, _>>().map_err(io(&on_disk))?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let entry_path = entry.path();
        let Ok(name) = entry.file_name().into_string() else {
            let help = "rename it in UTF-8, or move it out of the skill";
            let found = Found::Unsupported { on_disk: entry_path, reason: "its name is not UTF-8", help };
            tree.insert(path::join(dir, &entry.file_name().to_string_lossy()), found);
            continue;
        };
        if NOT_CONTENT.contains(&name.as_str()) {
            continue;
        }
        let junk = OS_JUNK.contains(&name.as_str()) || name.starts_with("._");
        let relative = path::join(dir, &name);
        let kind = entry.file_type().map_err(io(&entry_path))?;
        let found = if kind.is_dir() {
            if junk {
                continue;
            }
            walk(root, &relative, tree)?;
            Found::Directory
        } else if kind.is_file() {
            Found::File { size: entry.metadata().map_err(io(&entry_path))?.len(), junk }
        } else if kind.is_symlink() {
            let help = "copy what it points to into the skill: links are not followed, so a skill never reaches outside its directory";
            Found::Unsupported { on_disk: entry_path, reason: "a symbolic link", help }
        } else {
            let help = "move it out of the skill";
            Found::Unsupported { on_disk: entry_path, reason: "a special file (a socket, a pipe or a device)", help }
        };
        tree.insert(relative, found);
    }
    Ok(())
}

/// The refusal of `path`, which could not be read.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SkillError + '_ {
    move |source| SkillError::Io { path: path.to_owned(), source }
}

/// The entries below the skill at `dir`: none unsupported, and within the limits by their
/// sizes on disk, before anything is read.
fn check_entries(dir: &str, tree: &BTreeMap<String, Found>) -> Result<(), SkillError> {
    let (mut files, mut bytes) = (0, 0);
    for (_, found) in below(dir, tree) {
        match found {
            Found::File { size, .. } => (files, bytes) = (files + 1, bytes + size),
            Found::Directory => {}
            Found::Unsupported { on_disk, reason, help } => {
                return Err(SkillError::Unsupported { path: on_disk.clone(), reason, help });
            }
        }
    }
    if files > MAX_FILES || bytes > MAX_BYTES {
        return Err(SkillError::TooLarge { uri: path::uri(&path::join(dir, SKILL_MD)), files, bytes });
    }
    Ok(())
}

/// The files of each skill directory: every file whose nearest enclosing skill it is, with
/// whether it is OS junk, the skills' own `SKILL.md`s left out.
fn owners<'t>(tree: &'t BTreeMap<String, Found>, skill_dirs: &[&'t str]) -> BTreeMap<&'t str, Vec<(&'t str, bool)>> {
    let mut owned: BTreeMap<&str, Vec<(&str, bool)>> = skill_dirs.iter().map(|dir| (*dir, Vec::new())).collect();
    for (file_path, found) in tree {
        let Found::File { junk, .. } = found else { continue };
        if path::file_name(file_path) == SKILL_MD {
            continue;
        }
        let mut ancestors =
            std::iter::successors(Some(path::parent(file_path)), |dir| (!dir.is_empty()).then(|| path::parent(dir)));
        if let Some(dir) = ancestors.find(|dir| owned.contains_key(dir))
            && let Some(files) = owned.get_mut(dir)
        {
            files.push((file_path, *junk));
        }
    }
    owned
}

/// The entries below `dir`, in path order.
fn below<'t>(dir: &str, tree: &'t BTreeMap<String, Found>) -> impl Iterator<Item = (&'t String, &'t Found)> {
    let prefix = format!("{dir}/");
    tree.range(prefix.clone()..).take_while(move |(path, _)| path.starts_with(&prefix))
}

/// The skill at `dir`, with `files` (their paths below the root, and whether each is OS junk):
/// those below it that no skill nested in it holds. OS junk the `SKILL.md` does not name is
/// left out; so is a Git LFS pointer, returned with its refusal.
fn read_skill(root: &Path, dir: &str, files: &[(&str, bool)]) -> Result<(Skill, Vec<Skipped>), SkillError> {
    let on_disk = root.join(dir);
    let read = |relative: &str| {
        let file = on_disk.join(relative);
        fs::read(&file).map_err(|source| SkillError::Io { path: file, source })
    };
    let skill_md = read(SKILL_MD)?;
    let named = |relative: &str| String::from_utf8_lossy(&skill_md).contains(relative);
    let mut skill = Skill::new(path::file_name(dir), skill_md.clone()).prefix(path::parent(dir));
    let mut pointers = Vec::new();
    for &(file_path, junk) in files {
        let relative = &file_path[dir.len() + 1..];
        if junk && !named(relative) {
            continue;
        }
        let bytes = read(relative)?;
        if mime::is_lfs_pointer(&bytes) {
            let error = SkillError::LfsPointer { path: on_disk.join(relative) };
            pointers.push(Skipped { uri: path::uri(file_path), whole_skill: false, error });
            continue;
        }
        skill = skill.file(relative, bytes);
    }
    skill.origin = Some(on_disk);
    Ok((skill, pointers))
}
