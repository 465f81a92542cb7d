//! How actions become MCP tools (shared with the client once the contract crate lands).

/// The `_meta` key under which a grouped tool describes each of its actions.
pub const ACTIONS_META_KEY: &str = "fusion/actions";

/// How actions become MCP tools.
#[derive(Debug, Clone, PartialEq, Eq)]
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

    /// The discriminator of grouped exposition.
    pub fn discriminator(&self) -> Option<&str> {
        match self {
            Exposition::Grouped { discriminator } => Some(discriminator),
            Exposition::Flat { .. } => None,
        }
    }
}
