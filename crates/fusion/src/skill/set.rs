//! A set of skills, checked: what a server serves under `skill://`.

use std::fmt;
use std::sync::Arc;

use super::catalog::Catalog;
use super::declare::Skill;
use super::error::SkillError;

/// Skills checked together: each `SKILL.md`'s frontmatter, each path, the limits, and that no
/// two skills stand at one path. Made from skills declared in Rust ([`Skills::new`]) or found
/// in a directory tree ([`Skills::from_dir`]), and served with
/// [`ServerBuilder::skills`](crate::ServerBuilder::skills).
#[derive(Clone, Default)]
pub struct Skills {
    skills: Vec<Skill>,
    catalog: Arc<Catalog>,
}

impl Skills {
    /// Checks `skills` as one set; the first malformed skill is the error.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Result<Skills, SkillError> {
        let skills: Vec<Skill> = skills.into_iter().collect();
        let catalog = Arc::new(Catalog::new(&skills)?);
        Ok(Skills { skills, catalog })
    }

    /// These skills and `others` as one set, checked again together (two sets may both hold
    /// a skill at one path).
    pub(crate) fn merged(sets: Vec<Skills>, others: Vec<Skill>) -> Result<Skills, SkillError> {
        if sets.len() == 1 && others.is_empty() {
            return Ok(sets.into_iter().next().unwrap_or_default());
        }
        Skills::new(sets.into_iter().flat_map(|set| set.skills).chain(others))
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills, in the order given (by path for a directory).
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter()
    }

    /// Each skill's entry as `skills/list` returns it: its `SKILL.md`'s URI, its frontmatter,
    /// and every file it holds with its digest and size.
    pub fn entries(&self) -> &[rmcp::model::Skill] {
        self.catalog.entries()
    }

    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }
}

impl fmt::Debug for Skills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.skills.iter().map(Skill::uri)).finish()
    }
}
