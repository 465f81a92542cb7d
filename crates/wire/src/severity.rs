//! How bad a failure is, and whether the MCP result is flagged `isError`.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The severity of an envelope: one of the three the contract names, or any other text a
/// server sent.
///
/// | severity | `isError` | meaning |
/// |---|---|---|
/// | `error` (default) | true | the action failed |
/// | `critical` | true | failed, and must not be retried blindly |
/// | `warning` | false | guidance travelling on the success path |
/// | anything else | true | a severity of the server's own, kept as written |
///
/// Closed first, then open, as [`ErrorCode`](crate::ErrorCode) is: `"warning".parse()` gives
/// [`Severity::Warning`], any other string (compared case-sensitively, so `"Warning"` too)
/// gives [`Severity::Custom`]. Equality and hashing go by the text, so `Custom("warning")`
/// built by hand still equals `Warning` and is not an error.
///
/// ```
/// use mcp_fusion_wire::Severity;
/// let fatal: Severity = "fatal".parse().unwrap();
/// assert_eq!(fatal, Severity::Custom("fatal".into()));
/// assert_eq!(fatal.as_str(), "fatal");
/// assert!(fatal.is_error());
/// assert_eq!("warning".parse::<Severity>().unwrap(), Severity::Warning);
/// ```
#[derive(Debug, Clone, Eq, Default)]
#[non_exhaustive]
pub enum Severity {
    /// The action failed.
    #[default]
    Error,
    /// The action failed and must not be retried blindly.
    Critical,
    /// Guidance on a successful result.
    Warning,
    /// A severity outside the three, written as given; the result is an error.
    Custom(String),
}

impl Severity {
    /// The severity as written in the `severity` attribute (before escaping).
    pub fn as_str(&self) -> &str {
        match self {
            Severity::Error => "error",
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Custom(text) => text,
        }
    }

    /// The named severity spelled exactly `text`, if there is one.
    fn known(text: &str) -> Option<Severity> {
        match text {
            "error" => Some(Severity::Error),
            "critical" => Some(Severity::Critical),
            "warning" => Some(Severity::Warning),
            _ => None,
        }
    }

    /// Whether a result with this severity is flagged `isError: true` (all but `warning`).
    pub fn is_error(&self) -> bool {
        // By text, so that a hand-built `Custom("warning")` agrees with its equality.
        self.as_str() != "warning"
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Severity {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Hash for Severity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl FromStr for Severity {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Severity::from(s))
    }
}

impl From<&str> for Severity {
    fn from(text: &str) -> Self {
        Severity::known(text).unwrap_or_else(|| Severity::Custom(text.to_owned()))
    }
}

impl From<String> for Severity {
    fn from(text: String) -> Self {
        Severity::known(&text).unwrap_or(Severity::Custom(text))
    }
}

impl From<Cow<'_, str>> for Severity {
    fn from(text: Cow<'_, str>) -> Self {
        Severity::from(text.into_owned())
    }
}

impl Serialize for Severity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Severity::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_warning_is_not_an_error() {
        assert!(Severity::default().is_error());
        assert!(Severity::Critical.is_error());
        assert!(!Severity::Warning.is_error());
        for custom in ["fatal", "Warning", "WARNING", "", " warning"] {
            assert!(Severity::Custom(custom.into()).is_error(), "{custom:?}");
        }
        assert!(!Severity::Custom("warning".into()).is_error());
    }

    #[test]
    fn the_three_names_parse_to_their_variants_case_sensitively() {
        for s in [Severity::Error, Severity::Critical, Severity::Warning] {
            let parsed: Severity = s.as_str().parse().unwrap();
            assert!(!matches!(parsed, Severity::Custom(_)), "{s}");
            assert_eq!(parsed, s);
        }
        for text in ["fatal", "Warning", "ERROR", "", "a&b"] {
            let parsed: Severity = text.parse().unwrap();
            assert!(matches!(&parsed, Severity::Custom(t) if t == text), "{text:?}");
            assert_eq!(parsed.as_str(), text);
            assert_eq!(parsed.to_string(), text);
        }
    }

    #[test]
    fn hand_built_custom_equals_variant() {
        use std::collections::HashSet;

        assert_eq!(Severity::Custom("critical".into()), Severity::Critical);
        assert_ne!(Severity::Custom("Critical".into()), Severity::Critical);
        let set: HashSet<Severity> = [Severity::Warning, Severity::Custom("warning".into())].into_iter().collect();
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn serde_writes_and_reads_the_text() {
        for (severity, text) in [(Severity::Critical, "critical"), (Severity::Custom("fatal".into()), "fatal")] {
            assert_eq!(serde_json::to_value(&severity).unwrap(), serde_json::json!(text));
            assert_eq!(serde_json::from_value::<Severity>(serde_json::json!(text)).unwrap(), severity);
        }
        let warning: Severity = serde_json::from_str("\"warning\"").unwrap();
        assert!(matches!(warning, Severity::Warning));
    }
}
