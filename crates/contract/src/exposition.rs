//! How groups and actions appear in `tools/list`: one tool per group with a discriminator
//! (grouped), or one tool per action (flat). The server lays its tools out this way and the
//! client reads the layout back, so both share this one definition.

/// How actions become MCP tools.
///
/// ```
/// use mcp_fusion_contract::Exposition;
///
/// let grouped = Exposition::default();
/// assert_eq!(grouped, Exposition::grouped());
/// assert_eq!(grouped.tool_name("billing", "get_invoice"), "billing");
/// assert_eq!(grouped.discriminator(), Some("action"));
///
/// let flat = Exposition::flat();
/// assert_eq!(flat.tool_name("billing", "get_invoice"), "billing_get_invoice");
/// assert_eq!(flat.discriminator(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Exposition {
    /// One tool per group; the `discriminator` field (a string enum of the action names)
    /// picks the action.
    Grouped {
        /// The field that names the action (`action`).
        discriminator: String,
    },
    /// One tool per action, named `{group}{separator}{action}`.
    Flat {
        /// Between group and action names (`_`).
        separator: String,
    },
}

impl Default for Exposition {
    fn default() -> Self {
        Exposition::grouped()
    }
}

impl Exposition {
    /// Grouped, with the discriminator `action`.
    pub fn grouped() -> Exposition {
        Exposition::Grouped { discriminator: "action".into() }
    }

    /// Flat, with the separator `_` (`billing_get_invoice`).
    pub fn flat() -> Exposition {
        Exposition::Flat { separator: "_".into() }
    }

    /// The name of the tool that serves `action` of `group`: the group itself when grouped,
    /// `{group}{separator}{action}` when flat.
    ///
    /// ```
    /// use mcp_fusion_contract::Exposition;
    ///
    /// let dashed = Exposition::Flat { separator: "--".into() };
    /// assert_eq!(dashed.tool_name("billing", "pay"), "billing--pay");
    /// assert_eq!(Exposition::grouped().tool_name("billing", "pay"), "billing");
    /// ```
    pub fn tool_name(&self, group: &str, action: &str) -> String {
        match self {
            Exposition::Grouped { .. } => group.to_owned(),
            Exposition::Flat { separator } => format!("{group}{separator}{action}"),
        }
    }

    /// The argument that names the action, when grouped.
    pub fn discriminator(&self) -> Option<&str> {
        match self {
            Exposition::Grouped { discriminator } => Some(discriminator),
            Exposition::Flat { .. } => None,
        }
    }
}

/// The qualified name of an action, `{group}.{action}`: how errors, `available_actions` and
/// callers name it whatever the exposition.
///
/// ```
/// assert_eq!(mcp_fusion_contract::qualified_name("billing", "get_invoice"), "billing.get_invoice");
/// ```
pub fn qualified_name(group: &str, action: &str) -> String {
    format!("{group}.{action}")
}

/// A qualified name split into group and action at its first `.`; `None` when there is no
/// `.` or either side is empty. The action keeps any later dots.
///
/// ```
/// use mcp_fusion_contract::split_qualified;
///
/// assert_eq!(split_qualified("billing.get_invoice"), Some(("billing", "get_invoice")));
/// assert_eq!(split_qualified("files.read.v2"), Some(("files", "read.v2")));
/// assert_eq!(split_qualified("ping"), None);
/// assert_eq!(split_qualified(".get"), None);
/// ```
pub fn split_qualified(name: &str) -> Option<(&str, &str)> {
    let (group, action) = name.split_once('.')?;
    (!group.is_empty() && !action.is_empty()).then_some((group, action))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_round_trip() {
        for (group, action) in [("billing", "get_invoice"), ("a", "b"), ("x", "y.z")] {
            let name = qualified_name(group, action);
            assert_eq!(split_qualified(&name), Some((group, action)));
        }
        for name in ["", ".", "billing.", ".x", "nodot"] {
            assert_eq!(split_qualified(name), None, "{name:?}");
        }
    }

    #[test]
    fn discriminator_only_when_grouped() {
        let op = Exposition::Grouped { discriminator: "op".into() };
        assert_eq!((op.discriminator(), op.tool_name("g", "a")), (Some("op"), "g".to_owned()));
        let flat = Exposition::Flat { separator: "::".into() };
        assert_eq!((flat.discriminator(), flat.tool_name("g", "a")), (None, "g::a".to_owned()));
    }
}
