//! Where a value sits in the arguments.

use std::fmt::{self, Write as _};

use crate::echo::{Style, render};

/// Where a value sits in the arguments: keys and array indices from the argument object.
///
/// Rendered with `.` between segments (`items.1.qty`); the argument object itself is `(root)`.
/// A key comes from the caller when it is one the schema does not know, so it is rendered as
/// an echo: cut, with control and invisible characters escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: Vec<PathSegment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PathSegment {
    Key(String),
    Index(usize),
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// An object key, as sent.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

impl FieldPath {
    /// The argument object itself.
    pub fn root() -> FieldPath {
        FieldPath::default()
    }

    /// This path followed by an object key.
    pub fn key(mut self, key: impl Into<String>) -> FieldPath {
        self.segments.push(PathSegment::Key(key.into()));
        self
    }

    /// This path followed by an array index.
    pub fn index(mut self, index: usize) -> FieldPath {
        self.segments.push(PathSegment::Index(index));
        self
    }

    /// Appends an object key in place.
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.segments.push(PathSegment::Key(key.into()));
    }

    /// Appends an array index in place.
    pub fn push_index(&mut self, index: usize) {
        self.segments.push(PathSegment::Index(index));
    }

    /// The keys and indices from the argument object to the value.
    pub fn segments(&self) -> impl Iterator<Item = Segment<'_>> {
        self.segments.iter().map(|segment| match segment {
            PathSegment::Key(key) => Segment::Key(key),
            PathSegment::Index(index) => Segment::Index(*index),
        })
    }

    /// The path without its last step (the root stays the root).
    pub fn parent(&self) -> FieldPath {
        let mut segments = self.segments.clone();
        segments.pop();
        FieldPath { segments }
    }

    /// Whether this is the argument object itself.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether the path has no segments (it is the root).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("(root)");
        }
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_char('.')?;
            }
            match segment {
                PathSegment::Key(key) => f.write_str(&render(key, Style::Bare))?,
                PathSegment::Index(index) => write!(f, "{index}")?,
            }
        }
        Ok(())
    }
}
