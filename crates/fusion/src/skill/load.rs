//! Skills found in a directory tree: every directory holding a `SKILL.md` is a skill, at its
//! path below the root.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::declare::Skill;
use super::error::SkillError;
use super::path::{self, SKILL_MD};
use super::set::Skills;
use super::{MAX_BYTES, MAX_FILES};

/// An entry of the tree, by its `/`-separated path below the root.
enum Found {
    File {
        size: u64,
    },
    Directory,
    /// A link, a special file, or a name that is not UTF-8: refused inside a skill.
    Unsupported {
        on_disk: PathBuf,
        reason: &'static str,
        help: &'static str,
    },
}

impl Skills {
    /// Every skill below `root`: each directory holding a `SKILL.md` is one, served at its path
    /// below `root` (`root/acme/billing/refunds/SKILL.md` at
    /// `skill://acme/billing/refunds/SKILL.md`). Every file of a skill's directory is in it,
    /// the files of skills nested in it included; hidden entries (`.git`, `.DS_Store`) are
    /// left out, and files outside every skill are not served. Each file is read now, once.
    ///
    /// A malformed skill is the error, naming its file and what is wrong; so is a link or a
    /// special file inside a skill (a skill never reaches outside its directory), a root
    /// holding no skill, and a root that is itself a skill.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Skills, SkillError> {
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
        for dir in &skill_dirs {
            check_entries(dir, &tree)?;
        }
        let owned = owners(&tree, &skill_dirs);
        let skills = owned.iter().map(|(dir, files)| read_skill(root, dir, files)).collect::<Result<Vec<_>, _>>()?;
        Skills::new(skills)
    }
}

/// Records every entry below `dir` (a path below `root`) in `tree`, hidden ones left out.
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
        if name.starts_with('.') {
            continue;
        }
        let relative = path::join(dir, &name);
        let kind = entry.file_type().map_err(io(&entry_path))?;
        let found = if kind.is_dir() {
            walk(root, &relative, tree)?;
            Found::Directory
        } else if kind.is_file() {
            Found::File { size: entry.metadata().map_err(io(&entry_path))?.len() }
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
            Found::File { size } => (files, bytes) = (files + 1, bytes + size),
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

/// The files of each skill directory: every file whose nearest enclosing skill it is, the
/// skills' own `SKILL.md`s left out.
fn owners<'t>(tree: &'t BTreeMap<String, Found>, skill_dirs: &[&'t str]) -> BTreeMap<&'t str, Vec<&'t str>> {
    let mut owned: BTreeMap<&str, Vec<&str>> = skill_dirs.iter().map(|dir| (*dir, Vec::new())).collect();
    for (file_path, found) in tree {
        if !matches!(found, Found::File { .. }) || path::file_name(file_path) == SKILL_MD {
            continue;
        }
        let mut ancestors =
            std::iter::successors(Some(path::parent(file_path)), |dir| (!dir.is_empty()).then(|| path::parent(dir)));
        if let Some(dir) = ancestors.find(|dir| owned.contains_key(dir))
            && let Some(files) = owned.get_mut(dir)
        {
            files.push(file_path);
        }
    }
    owned
}

/// The entries below `dir`, in path order.
fn below<'t>(dir: &str, tree: &'t BTreeMap<String, Found>) -> impl Iterator<Item = (&'t String, &'t Found)> {
    let prefix = format!("{dir}/");
    tree.range(prefix.clone()..).take_while(move |(path, _)| path.starts_with(&prefix))
}

/// The skill at `dir`, with `files` (their paths below the root): those below it that no
/// skill nested in it holds.
fn read_skill(root: &Path, dir: &str, files: &[&str]) -> Result<Skill, SkillError> {
    let on_disk = root.join(dir);
    let read = |relative: &str| {
        let file = on_disk.join(relative);
        fs::read(&file).map_err(|source| SkillError::Io { path: file, source })
    };
    let mut skill = Skill::new(path::file_name(dir), read(SKILL_MD)?).prefix(path::parent(dir));
    for file_path in files {
        let relative = &file_path[dir.len() + 1..];
        skill = skill.file(relative, read(relative)?);
    }
    skill.origin = Some(on_disk);
    Ok(skill)
}
