//! The `<contract_awareness>` block: what changed in a tool's contract, told to the model in
//! the same turn its call was rejected.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::escape::{push_attr, push_text};

const NOTE_PREFIX: &str = "IMPORTANT: The behavioral contract for tool \"";
const NOTE_SUFFIX: &str = "\" has changed since your last calibration.";
/// The fixed `<instructions>` text of the block.
pub const CONTRACT_INSTRUCTIONS: &str = "Review the contract changes below and adjust your next invocation accordingly. These changes may explain why your previous arguments were rejected.";

/// How much a contract change matters to a caller calibrated on the old contract.
///
/// Ordered from least to most severe, so `max()` gives the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChangeSeverity {
    /// Descriptions and titles.
    Cosmetic,
    /// Additions and loosened constraints: old calls keep working.
    Safe,
    /// Old calls work, but results or guarantees may differ.
    Risky,
    /// Old calls may now fail.
    Breaking,
}

impl ChangeSeverity {
    /// The severity as written: `BREAKING`, `RISKY`, `SAFE`, `COSMETIC`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSeverity::Cosmetic => "COSMETIC",
            ChangeSeverity::Safe => "SAFE",
            ChangeSeverity::Risky => "RISKY",
            ChangeSeverity::Breaking => "BREAKING",
        }
    }
}

impl fmt::Display for ChangeSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text named no change severity: expected `BREAKING`, `RISKY`, `SAFE` or `COSMETIC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownChangeSeverity(pub String);

impl fmt::Display for UnknownChangeSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown change severity {:?}: expected BREAKING, RISKY, SAFE or COSMETIC", self.0)
    }
}

impl std::error::Error for UnknownChangeSeverity {}

impl FromStr for ChangeSeverity {
    type Err = UnknownChangeSeverity;

    /// Case-insensitive, so `breaking` reads as `BREAKING`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [ChangeSeverity::Breaking, ChangeSeverity::Risky, ChangeSeverity::Safe, ChangeSeverity::Cosmetic]
            .into_iter()
            .find(|sev| sev.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownChangeSeverity(s.to_owned()))
    }
}

/// One change of a contract: a delta of the contract diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContractChange {
    /// How much it matters.
    pub severity: ChangeSeverity,
    /// Where it is (`actions.get_invoice.required`, `inputSchema.properties.currency.enum`).
    pub field: String,
    /// What changed, in words.
    pub description: String,
    /// The old value (compact JSON or text), if there was one.
    pub before: Option<String>,
    /// The new value, if there is one.
    pub after: Option<String>,
}

/// The block a validation error carries when the failed action's contract has changed.
///
/// ```
/// use mcp_fusion_wire::{ChangeSeverity, ContractAwareness, ContractChange};
///
/// let block = ContractAwareness {
///     tool: "billing".into(),
///     action: "billing.get_invoice".into(),
///     changes: vec![ContractChange {
///         severity: ChangeSeverity::Breaking,
///         field: "actions.get_invoice.required".into(),
///         description: "Action \"get_invoice\" now requires new fields: [customer_id]".into(),
///         before: Some(r#"["id"]"#.into()),
///         after: Some(r#"["customer_id","id"]"#.into()),
///     }],
/// };
/// assert_eq!(block.render(), r#"<contract_awareness>
///   <system_note>IMPORTANT: The behavioral contract for tool "billing" has changed since your last calibration.</system_note>
///   <action>billing.get_invoice</action>
///   <change_count>1</change_count>
///   <max_severity>BREAKING</max_severity>
///   <instructions>Review the contract changes below and adjust your next invocation accordingly. These changes may explain why your previous arguments were rejected.</instructions>
///   <contract_changes>
///     <change severity="BREAKING" field="actions.get_invoice.required">
///       <description>Action "get_invoice" now requires new fields: [customer_id]</description>
///       <before>["id"]</before>
///       <after>["customer_id","id"]</after>
///     </change>
///   </contract_changes>
/// </contract_awareness>"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContractAwareness {
    /// The tool whose contract changed (`billing`).
    pub tool: String,
    /// The qualified action the block is about (`billing.get_invoice`).
    pub action: String,
    /// The changes, most severe first as the caller ordered them; already capped.
    pub changes: Vec<ContractChange>,
}

impl ContractAwareness {
    /// The most severe change, if there is any.
    pub fn max_severity(&self) -> Option<ChangeSeverity> {
        self.changes.iter().map(|c| c.severity).max()
    }

    /// Renders the block (no trailing newline), every value escaped as in a tool error.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(640 + self.changes.len() * 256);
        self.render_into(&mut out);
        out
    }

    /// Appends the rendered block to `out`.
    pub fn render_into(&self, out: &mut String) {
        out.push_str("<contract_awareness>\n  <system_note>");
        push_text(out, NOTE_PREFIX);
        push_text(out, &self.tool);
        push_text(out, NOTE_SUFFIX);
        out.push_str("</system_note>\n  <action>");
        push_text(out, &self.action);
        out.push_str("</action>\n  <change_count>");
        out.push_str(&self.changes.len().to_string());
        out.push_str("</change_count>\n");
        if let Some(max) = self.max_severity() {
            out.push_str("  <max_severity>");
            out.push_str(max.as_str());
            out.push_str("</max_severity>\n");
        }
        out.push_str("  <instructions>");
        push_text(out, CONTRACT_INSTRUCTIONS);
        out.push_str("</instructions>\n  <contract_changes>\n");
        for change in &self.changes {
            out.push_str("    <change severity=\"");
            push_attr(out, change.severity.as_str());
            out.push_str("\" field=\"");
            push_attr(out, &change.field);
            out.push_str("\">\n      <description>");
            push_text(out, &change.description);
            out.push_str("</description>\n");
            for (tag, value) in [("before", &change.before), ("after", &change.after)] {
                if let Some(value) = value {
                    out.push_str("      <");
                    out.push_str(tag);
                    out.push('>');
                    push_text(out, value);
                    out.push_str("</");
                    out.push_str(tag);
                    out.push_str(">\n");
                }
            }
            out.push_str("    </change>\n");
        }
        out.push_str("  </contract_changes>\n</contract_awareness>");
    }

    /// The tool named by a `<system_note>`: the name between the fixed words, or the whole
    /// note when it does not follow them (so nothing the note said is lost).
    pub(crate) fn tool_from_note(note: &str) -> String {
        note.strip_prefix(NOTE_PREFIX).and_then(|rest| rest.strip_suffix(NOTE_SUFFIX)).unwrap_or(note).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_orders_and_parses() {
        assert!(ChangeSeverity::Breaking > ChangeSeverity::Risky);
        assert!(ChangeSeverity::Safe > ChangeSeverity::Cosmetic);
        assert_eq!("risky".parse(), Ok(ChangeSeverity::Risky));
        assert!("MAJOR".parse::<ChangeSeverity>().is_err());
    }

    #[test]
    fn escapes_every_value() {
        let block = ContractAwareness {
            tool: "a&b".into(),
            action: "a&b.<x>".into(),
            changes: vec![ContractChange {
                severity: ChangeSeverity::Risky,
                field: "f\"<>".into(),
                description: "d<".into(),
                before: None,
                after: Some("&".into()),
            }],
        };
        let text = block.render();
        assert!(text.contains("tool \"a&amp;b\" has changed"));
        assert!(text.contains("<action>a&amp;b.&lt;x></action>"));
        assert!(text.contains("field=\"f&quot;&lt;&gt;\""));
        assert!(text.contains("<description>d&lt;</description>\n      <after>&amp;</after>\n"));
        assert!(!text.contains("<before>"));
    }

    #[test]
    fn tool_from_a_foreign_note_keeps_the_note() {
        assert_eq!(ContractAwareness::tool_from_note("something else"), "something else");
        assert_eq!(ContractAwareness::tool_from_note(&format!("{NOTE_PREFIX}x\"y{NOTE_SUFFIX}")), "x\"y");
    }
}
