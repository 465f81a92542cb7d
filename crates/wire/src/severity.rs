//! How bad a failure is, and whether the MCP result is flagged `isError`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The severity of an envelope.
///
/// | severity | `isError` | meaning |
/// |---|---|---|
/// | `error` (default) | true | the action failed |
/// | `critical` | true | failed, and must not be retried blindly |
/// | `warning` | false | guidance travelling on the success path |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The action failed.
    #[default]
    Error,
    /// The action failed and must not be retried blindly.
    Critical,
    /// Guidance on a successful result.
    Warning,
}

impl Severity {
    /// The severity as written in the `severity` attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Critical => "critical",
            Severity::Warning => "warning",
        }
    }

    /// Whether a result with this severity is flagged `isError: true` (all but `warning`).
    pub fn is_error(self) -> bool {
        self != Severity::Warning
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text named no severity: expected `error`, `critical` or `warning`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSeverity(pub String);

impl fmt::Display for UnknownSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown severity {:?}: expected \"error\", \"critical\" or \"warning\"", self.0)
    }
}

impl std::error::Error for UnknownSeverity {}

impl FromStr for Severity {
    type Err = UnknownSeverity;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "error" => Ok(Severity::Error),
            "critical" => Ok(Severity::Critical),
            "warning" => Ok(Severity::Warning),
            other => Err(UnknownSeverity(other.to_owned())),
        }
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
    }

    #[test]
    fn parses_exactly_the_three_names() {
        for s in [Severity::Error, Severity::Critical, Severity::Warning] {
            assert_eq!(s.as_str().parse::<Severity>(), Ok(s));
        }
        let err = "Warning".parse::<Severity>().unwrap_err();
        assert_eq!(err.to_string(), "unknown severity \"Warning\": expected \"error\", \"critical\" or \"warning\"");
    }
}
