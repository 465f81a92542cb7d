//! Skills checked and laid out for serving: each skill's entry (frontmatter and manifest, as
//! `skills/list` returns it), each file as a resource, and each directory's children.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{Skill as Entry, SkillFrontmatter, SkillResource, SkillResources};

use super::declare::Skill;
use super::error::SkillError;
use super::frontmatter::{self, Frontmatter, Source};
use super::path::{self, SKILL_MD};
use super::{MAX_BYTES, MAX_FILES, mime};

/// Every skill of a server, checked, with its files and directories.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// In the order they were given.
    entries: Vec<Entry>,
    by_uri: HashMap<String, usize>,
    /// Each file once, skill by skill, `SKILL.md` first.
    files: Vec<File>,
    file_index: HashMap<String, usize>,
    /// Each directory's children, by name.
    directories: HashMap<String, Vec<Child>>,
}

/// A file of a skill, served as a resource.
#[derive(Debug)]
pub(crate) struct File {
    pub uri: String,
    /// `SKILL.md`'s is its skill's name; any other's, its file name.
    pub name: String,
    /// `SKILL.md`'s is its skill's description.
    pub description: Option<String>,
    pub mime_type: &'static str,
    pub bytes: Arc<[u8]>,
}

/// A direct child of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Child {
    /// A file, by its URI.
    File(String),
    /// A directory: its URI and its name.
    Directory(String, String),
}

/// A file as declared: its bytes and the skill that declared it.
struct Declared {
    bytes: Arc<[u8]>,
    by: usize,
}

impl Catalog {
    /// Checks `skills` and lays them out: the first problem found stops it.
    pub(crate) fn new(skills: &[Skill]) -> Result<Catalog, SkillError> {
        let mut roots: BTreeMap<String, (usize, Frontmatter)> = BTreeMap::new();
        let mut files: BTreeMap<String, Declared> = BTreeMap::new();
        for (index, skill) in skills.iter().enumerate() {
            check_paths(skill)?;
            let source =
                Source { file: &skill.label(SKILL_MD), directory: &skill.name, in_rust: skill.origin.is_none() };
            let frontmatter = frontmatter::read(&skill.skill_md, &source)?;
            if let Some((first, _)) = roots.insert(skill.path(), (index, frontmatter)) {
                let (first, second) = (skills[first].origin(), skill.origin());
                return Err(SkillError::DuplicateSkill { uri: skill.uri(), first, second });
            }
            let own = std::iter::once((SKILL_MD, &skill.skill_md)).chain(skill.files.iter().map(|(p, b)| (&**p, b)));
            for (relative, bytes) in own {
                declare(
                    &mut files,
                    skills,
                    path::join(&skill.path(), relative),
                    Declared { bytes: bytes.clone(), by: index },
                )?;
            }
        }
        check_shapes(&files, &roots)?;
        let mut catalog = Catalog::default();
        let mut ordered: Vec<(&String, &(usize, Frontmatter))> = roots.iter().collect();
        ordered.sort_by_key(|(_, (index, _))| *index);
        for (root, (_, frontmatter)) in ordered {
            catalog.add_skill(root, frontmatter, &files, &roots)?;
        }
        Ok(catalog)
    }

    /// Adds the skill at `root`: its entry, its files not yet served, its directories.
    fn add_skill(
        &mut self,
        root: &str,
        frontmatter: &Frontmatter,
        files: &BTreeMap<String, Declared>,
        roots: &BTreeMap<String, (usize, Frontmatter)>,
    ) -> Result<(), SkillError> {
        let skill_md = path::join(root, SKILL_MD);
        let below = format!("{root}/");
        let others = files.range(below.clone()..).take_while(|(path, _)| path.starts_with(&below));
        let own: Vec<(&String, &Declared)> =
            std::iter::once((&skill_md, &files[&skill_md])).chain(others.filter(|(p, _)| **p != skill_md)).collect();
        let uri = path::uri(&skill_md);
        let bytes: u64 = own.iter().map(|(_, file)| file.bytes.len() as u64).sum();
        if own.len() > MAX_FILES || bytes > MAX_BYTES {
            return Err(SkillError::TooLarge { uri, files: own.len(), bytes });
        }
        let mut manifest = Vec::with_capacity(own.len());
        for (file_path, file) in own {
            manifest.push(SkillResource::from_bytes(path::uri(file_path), &file.bytes));
            self.serve_file(file_path, file, roots);
            self.add_directories(root, file_path);
        }
        self.by_uri.insert(uri.clone(), self.entries.len());
        self.entries.push(Entry::new(uri, wire_frontmatter(frontmatter), SkillResources::Files(manifest)));
        Ok(())
    }

    /// Serves the file at `file_path` as a resource, unless a skill it is nested in already does.
    fn serve_file(&mut self, file_path: &str, file: &Declared, roots: &BTreeMap<String, (usize, Frontmatter)>) {
        let uri = path::uri(file_path);
        if self.file_index.contains_key(&uri) {
            return;
        }
        let name = path::file_name(file_path);
        let skill = (name == SKILL_MD).then(|| roots.get(path::parent(file_path))).flatten();
        let (name, description, mime_type) = match skill {
            Some((_, frontmatter)) => {
                (frontmatter.name().to_owned(), Some(frontmatter.description().to_owned()), mime::MARKDOWN)
            }
            None => (name.to_owned(), None, mime::of(name, &file.bytes)),
        };
        self.file_index.insert(uri.clone(), self.files.len());
        self.files.push(File { uri, name, description, mime_type, bytes: file.bytes.clone() });
    }

    /// Records `file_path` in its directory, and each directory between it and `root` in its
    /// parent's.
    fn add_directories(&mut self, root: &str, file_path: &str) {
        let mut child = Child::File(path::uri(file_path));
        let mut directory = path::parent(file_path);
        loop {
            let children = self.directories.entry(path::uri(directory)).or_default();
            if !children.contains(&child) {
                let at = children.partition_point(|known| child_name(known) < child_name(&child));
                children.insert(at, child);
            }
            if directory == root {
                return;
            }
            child = Child::Directory(path::uri(directory), path::file_name(directory).to_owned());
            directory = path::parent(directory);
        }
    }

    /// The entries, as `skills/list` returns them.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub(crate) fn entry(&self, uri: &str) -> Option<&Entry> {
        self.by_uri.get(uri).map(|&index| &self.entries[index])
    }

    /// Every file, each once.
    pub(crate) fn files(&self) -> &[File] {
        &self.files
    }

    /// The file at `uri`.
    pub(crate) fn file(&self, uri: &str) -> Option<&File> {
        self.file_index.get(uri).map(|&index| &self.files[index])
    }

    /// The children of the directory at `uri`, by name.
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Child]> {
        self.directories.get(uri).map(Vec::as_slice)
    }

    /// The URIs of every directory.
    pub(crate) fn directory_uris(&self) -> impl Iterator<Item = &str> {
        self.directories.keys().map(String::as_str)
    }

    /// Whether there is no skill.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn child_name(child: &Child) -> &str {
    match child {
        Child::File(uri) => path::file_name(uri),
        Child::Directory(_, name) => name,
    }
}

/// The frontmatter as rmcp carries it: `name` and `description`, then every other field in
/// the author's order.
fn wire_frontmatter(frontmatter: &Frontmatter) -> SkillFrontmatter {
    let others = frontmatter.fields().iter().filter(|(key, _)| !matches!(key.as_str(), "name" | "description"));
    others.fold(SkillFrontmatter::new(frontmatter.name(), frontmatter.description()), |wire, (key, value)| {
        wire.with_field(key.clone(), value.clone())
    })
}

/// Records the file at `file_path`; the same path declared with other bytes is refused.
fn declare(
    files: &mut BTreeMap<String, Declared>,
    skills: &[Skill],
    file_path: String,
    file: Declared,
) -> Result<(), SkillError> {
    if let Some(known) = files.get(&file_path) {
        if known.bytes == file.bytes {
            return Ok(());
        }
        let (first, second) = (skills[known.by].origin(), skills[file.by].origin());
        return Err(SkillError::Conflict {
            uri: path::uri(&file_path),
            reason: format!("declared with different contents by {first} and by {second}"),
            help: "declare the file once, in the skill nearest to it".to_owned(),
        });
    }
    files.insert(file_path, file);
    Ok(())
}

/// Checks `skill` on its own, as [`Catalog::new`] checks each skill of a set: its paths and its
/// frontmatter. What only a set can break (two skills at one path) is left to the set.
pub(crate) fn check(skill: &Skill) -> Result<(), SkillError> {
    check_paths(skill)?;
    let source = Source { file: &skill.label(SKILL_MD), directory: &skill.name, in_rust: skill.origin.is_none() };
    frontmatter::read(&skill.skill_md, &source).map(|_| ())
}

/// A skill's prefix, its name and its files' paths are relative paths a URI can hold, and no
/// file but its own is a `SKILL.md` (a nested skill is declared as a skill of its own).
fn check_paths(skill: &Skill) -> Result<(), SkillError> {
    let refuse = |path: &str, reason: &str, help: &str| SkillError::Path {
        skill: skill.label(SKILL_MD),
        path: path.to_owned(),
        reason: reason.to_owned(),
        help: help.to_owned(),
    };
    let plain = "write it as segments separated by /, such as `acme/billing`";
    if !skill.prefix.is_empty()
        && let Some(reason) = path::problem(&skill.prefix)
    {
        return Err(refuse(&skill.prefix, reason, plain));
    }
    if skill.name.contains('/') || path::problem(&skill.name).is_some() {
        let help = "name the skill with one segment, and put what comes before it in `.prefix(..)`";
        return Err(refuse(&skill.name, "a skill's name is one path segment", help));
    }
    for (file, _) in &skill.files {
        if let Some(reason) = path::problem(file) {
            return Err(refuse(
                file,
                reason,
                "write the file's path relative to the skill, such as `references/FORMS.md`",
            ));
        }
        if path::file_name(file) == SKILL_MD {
            let help = if file == SKILL_MD {
                "the SKILL.md is the text given to Skill::new; drop this file".to_owned()
            } else {
                let prefix = path::join(&skill.path(), path::parent(path::parent(file)));
                format!(
                    "declare the nested skill on its own: Skill::new({:?}, ..).prefix({prefix:?})",
                    path::file_name(path::parent(file))
                )
            };
            return Err(refuse(file, "a file named SKILL.md makes its directory a skill", &help));
        }
    }
    Ok(())
}

/// No path is both a file and a directory: no file stands where another file's directory or a
/// skill's root is.
fn check_shapes(
    files: &BTreeMap<String, Declared>,
    roots: &BTreeMap<String, (usize, Frontmatter)>,
) -> Result<(), SkillError> {
    let directories: HashSet<&str> = files
        .keys()
        .flat_map(|file| {
            std::iter::successors(Some(path::parent(file)), |dir| (!dir.is_empty()).then(|| path::parent(dir)))
        })
        .chain(roots.keys().map(String::as_str))
        .filter(|dir| !dir.is_empty())
        .collect();
    match files.keys().find(|file| directories.contains(file.as_str())) {
        None => Ok(()),
        Some(both) => Err(SkillError::Conflict {
            uri: path::uri(both),
            reason: "is declared as a file, and other files or a skill stand below it as in a directory".to_owned(),
            help: "rename the file, or move what is below it".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_md(name: &str) -> String {
        format!("---\nname: {name}\ndescription: The skill {name}.\n---\n# {name}\n")
    }

    fn uris(children: &[Child]) -> Vec<&str> {
        children
            .iter()
            .map(|c| match c {
                Child::File(uri) | Child::Directory(uri, _) => uri.as_str(),
            })
            .collect()
    }

    #[test]
    fn a_nested_skills_files_are_its_parents_too_and_served_once() {
        let outer = Skill::new("review", skill_md("review")).file("notes/a.md", "a");
        let inner = Skill::new("security", skill_md("security")).prefix("review/notes").file("list.md", "l");
        let catalog = Catalog::new(&[outer, inner]).unwrap();
        let manifest = |uri: &str| match &catalog.entry(uri).unwrap().resources {
            SkillResources::Files(files) => files.iter().map(|f| f.uri.clone()).collect::<Vec<_>>(),
            _ => unreachable!("a catalog's skills list their files"),
        };
        assert_eq!(
            manifest("skill://review/SKILL.md"),
            [
                "skill://review/SKILL.md",
                "skill://review/notes/a.md",
                "skill://review/notes/security/SKILL.md",
                "skill://review/notes/security/list.md"
            ]
        );
        assert_eq!(manifest("skill://review/notes/security/SKILL.md").len(), 2);
        assert_eq!(catalog.files().len(), 4);
        let nested = catalog.file("skill://review/notes/security/SKILL.md").unwrap();
        assert_eq!((nested.name.as_str(), nested.mime_type), ("security", "text/markdown"));
        assert_eq!(
            uris(catalog.directory("skill://review/notes").unwrap()),
            ["skill://review/notes/a.md", "skill://review/notes/security"]
        );
        assert!(catalog.directory("skill://review/notes/security").is_some());
        // Declared the other way round, the nested skill's directory is still its parent's child.
        let outer = Skill::new("review", skill_md("review")).file("notes/a.md", "a");
        let inner = Skill::new("security", skill_md("security")).prefix("review/notes").file("list.md", "l");
        let reversed = Catalog::new(&[inner, outer]).unwrap();
        assert_eq!(reversed.directory("skill://review/notes"), catalog.directory("skill://review/notes"));
    }

    #[test]
    fn two_skills_at_one_path_and_conflicting_files_are_refused() {
        let one = || Skill::new("review", skill_md("review"));
        let error = Catalog::new(&[one(), one()]).unwrap_err();
        assert!(
            error.to_string().starts_with("two skills at skill://review/SKILL.md: Skill::new(\"review\")"),
            "{error}"
        );
        let a = Skill::new("review", skill_md("review")).file("nested/x.md", "one");
        let b = Skill::new("nested", skill_md("nested")).prefix("review").file("x.md", "two");
        let error = Catalog::new(&[a, b]).unwrap_err().to_string();
        assert!(error.starts_with("skill://review/nested/x.md: declared with different contents by"), "{error}");
        let shadow = Skill::new("review", skill_md("review")).file("nested", "a file");
        let nested = Skill::new("nested", skill_md("nested")).prefix("review");
        let error = Catalog::new(&[shadow, nested]).unwrap_err().to_string();
        assert!(error.starts_with("skill://review/nested: is declared as a file"), "{error}");
    }

    #[test]
    fn paths_that_are_no_relative_paths_are_refused() {
        let base = || Skill::new("review", skill_md("review"));
        for (skill, path) in [
            (base().prefix("acme//billing"), "acme//billing"),
            (base().file("../secret", "x"), "../secret"),
            (base().file("/abs.md", "x"), "/abs.md"),
            (base().file("sub/SKILL.md", "x"), "sub/SKILL.md"),
            (Skill::new("a/review", skill_md("review")), "a/review"),
        ] {
            let error = Catalog::new(&[skill]).unwrap_err().to_string();
            assert!(
                error.starts_with("skill://") && error.contains(&format!("the path {path:?} cannot be served")),
                "{error}"
            );
        }
        let nested = Catalog::new(&[base().file("sub/SKILL.md", "x")]).unwrap_err().to_string();
        assert!(nested.contains("Skill::new(\"sub\", ..).prefix(\"review\")"), "{nested}");
    }

    #[test]
    fn a_skill_past_the_limits_is_refused() {
        let mut big = Skill::new("big", skill_md("big"));
        for n in 0..MAX_FILES {
            big = big.file(format!("f{n}.txt"), "x");
        }
        let error = Catalog::new(&[big]).unwrap_err().to_string();
        assert!(error.starts_with("the skill skill://big/SKILL.md holds 513 files of"), "{error}");
        let heavy = Skill::new("heavy", skill_md("heavy")).file("blob.bin", vec![0u8; MAX_BYTES as usize]);
        assert!(matches!(Catalog::new(&[heavy]), Err(SkillError::TooLarge { files: 2, .. })));
    }
}
