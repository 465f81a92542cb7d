//! Error codes: the canonical set first, then any code of your own.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// An error code: one of the canonical codes, or a code of your own.
        ///
        /// Closed first, then open: `"NOT_FOUND".parse()` gives [`ErrorCode::NotFound`], any
        /// other string gives [`ErrorCode::Custom`]. Equality and hashing go by the code's text,
        /// so `Custom("NOT_FOUND")` built by hand still equals `NotFound`.
        ///
        /// ```
        /// use mcp_fusion_wire::ErrorCode;
        /// let code: ErrorCode = "NOT_FOUND".parse().unwrap();
        /// assert_eq!(code, ErrorCode::NotFound);
        /// assert_eq!(ErrorCode::from("ProjectNotFound").as_str(), "ProjectNotFound");
        /// assert!(!ErrorCode::from("ProjectNotFound").is_canonical());
        /// ```
        ///
        /// # Codes the framework uses outside the canonical set
        ///
        /// | code | built by | when |
        /// |---|---|---|
        /// | `UNKNOWN` | [`ErrorCode::unknown`] | a parser read text that names no code |
        /// | `CANCELLED` | [`ErrorCode::cancelled`] | the client cancelled the call before it did anything: nothing was written |
        /// | `CANCELLED_IN_FLIGHT` | [`ErrorCode::cancelled_in_flight`] | the client cancelled a mounted call after it reached its upstream, which did not answer: it may have taken effect |
        /// | `RESULT_TRUNCATED` | [`ErrorCode::result_truncated`] | a warning: the result was cut to the payload cap |
        /// | `UPSTREAM_ERROR` | [`ErrorCode::upstream_error`] | a mounted tool's upstream failed it, and its words do not say how |
        /// | `ARGUMENTS_CONVERTED` | [`ErrorCode::arguments_converted`] | a warning: the call ran with a string read as the number or boolean it spells |
        ///
        /// They stay custom codes so that the canonical set is exactly the one the error
        /// contract defines, shared with the TypeScript implementation and pinned by the golden
        /// vectors. None of them is a failure of the action itself: `UNKNOWN` is what a reader
        /// makes of text that is not an envelope, `CANCELLED` and `CANCELLED_IN_FLIGHT` answer a
        /// caller that already left,
        /// and `RESULT_TRUNCATED` and `ARGUMENTS_CONVERTED` travel on a success. A client that
        /// does not know them reads them as it reads any custom code.
        #[derive(Debug, Clone, Eq)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
            /// A code outside the canonical set, written as given.
            Custom(String),
        }

        impl ErrorCode {
            /// Every canonical code, in the order the contract lists them.
            pub const CANONICAL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( ErrorCode::$variant => $text, )*
                    ErrorCode::Custom(code) => code,
                }
            }

            /// The canonical code spelled exactly `text`, if there is one.
            pub fn canonical(text: &str) -> Option<ErrorCode> {
                match text {
                    $( $text => Some(ErrorCode::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    /// The discriminator field (default `action`) is absent, empty or not a string.
    MissingDiscriminator = "MISSING_DISCRIMINATOR",
    /// The discriminator names no action of the tool.
    UnknownAction = "UNKNOWN_ACTION",
    /// The arguments were rejected.
    ValidationError = "VALIDATION_ERROR",
    /// A required field was not sent.
    MissingRequiredField = "MISSING_REQUIRED_FIELD",
    /// The server failed; the call must not be retried blindly.
    InternalError = "INTERNAL_ERROR",
    /// Too many calls; always carries `retry_after`.
    RateLimited = "RATE_LIMITED",
    /// Credentials are missing, invalid or expired.
    Unauthorized = "UNAUTHORIZED",
    /// The caller is known but lacks the permission.
    Forbidden = "FORBIDDEN",
    /// The entity does not exist.
    NotFound = "NOT_FOUND",
    /// The entity's state does not allow the action.
    Conflict = "CONFLICT",
    /// The action ran out of time.
    Timeout = "TIMEOUT",
    /// Load shedding by the concurrency guard.
    ServerBusy = "SERVER_BUSY",
    /// The action or a field is deprecated.
    Deprecated = "DEPRECATED",
    /// The action needs an authenticated identity.
    AuthRequired = "AUTH_REQUIRED",
    /// A mounted upstream server is down or failing.
    HandoffUpstreamUnavailable = "HANDOFF_UPSTREAM_UNAVAILABLE",
    /// The namespace or tool names no mounted upstream.
    HandoffNamespaceMismatch = "HANDOFF_NAMESPACE_MISMATCH",
    /// A mounted upstream server is still connecting.
    HandoffConnecting = "HANDOFF_CONNECTING",
}

impl ErrorCode {
    /// The code a parser gives to text that names no code: `UNKNOWN` (a custom code).
    pub fn unknown() -> ErrorCode {
        ErrorCode::Custom("UNKNOWN".to_owned())
    }

    /// The code of a call the client cancelled before it finished: `CANCELLED` (a custom
    /// code).
    pub fn cancelled() -> ErrorCode {
        ErrorCode::Custom("CANCELLED".to_owned())
    }

    /// The code of a mounted call the client cancelled after it reached its upstream, which
    /// gave no answer, so it may have taken effect: `CANCELLED_IN_FLIGHT` (a custom code).
    pub fn cancelled_in_flight() -> ErrorCode {
        ErrorCode::Custom("CANCELLED_IN_FLIGHT".to_owned())
    }

    /// The code of the warning added to a result cut to the payload cap: `RESULT_TRUNCATED`
    /// (a custom code).
    pub fn result_truncated() -> ErrorCode {
        ErrorCode::Custom("RESULT_TRUNCATED".to_owned())
    }

    /// The code of the warning on a call that ran with a string read as the number or boolean
    /// it spells (`"200"` as `200`): `ARGUMENTS_CONVERTED` (a custom code).
    pub fn arguments_converted() -> ErrorCode {
        ErrorCode::Custom("ARGUMENTS_CONVERTED".to_owned())
    }

    /// The code of a mounted tool's failure whose upstream's words make no other code clear:
    /// `UPSTREAM_ERROR` (a custom code).
    pub fn upstream_error() -> ErrorCode {
        ErrorCode::Custom("UPSTREAM_ERROR".to_owned())
    }

    /// Whether this is one of the canonical codes.
    pub fn is_canonical(&self) -> bool {
        ErrorCode::canonical(self.as_str()).is_some()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for ErrorCode {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Hash for ErrorCode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl FromStr for ErrorCode {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ErrorCode::from(s))
    }
}

impl From<&str> for ErrorCode {
    fn from(code: &str) -> Self {
        ErrorCode::canonical(code).unwrap_or_else(|| ErrorCode::Custom(code.to_owned()))
    }
}

impl From<String> for ErrorCode {
    fn from(code: String) -> Self {
        ErrorCode::canonical(&code).unwrap_or(ErrorCode::Custom(code))
    }
}

impl From<Cow<'_, str>> for ErrorCode {
    fn from(code: Cow<'_, str>) -> Self {
        ErrorCode::from(code.into_owned())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ErrorCode::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_codes_round_trip_through_text() {
        assert_eq!(ErrorCode::CANONICAL.len(), 17);
        for code in ErrorCode::CANONICAL {
            let parsed: ErrorCode = code.as_str().parse().unwrap();
            assert!(!matches!(parsed, ErrorCode::Custom(_)), "{code}");
            assert_eq!(&parsed, code);
        }
    }

    #[test]
    fn anything_else_is_custom() {
        for text in ["not_found", "", " NOT_FOUND", "ProjectNotFound", "UNKNOWN"] {
            assert_eq!(ErrorCode::from(text), ErrorCode::Custom(text.to_owned()));
        }
    }

    #[test]
    fn hand_built_custom_equals_variant() {
        assert_eq!(ErrorCode::Custom("CONFLICT".into()), ErrorCode::Conflict);
    }

    #[test]
    fn the_framework_codes_are_custom_and_read_back() {
        use crate::{Severity, ToolError, parse};

        for (code, text) in [
            (ErrorCode::unknown(), "UNKNOWN"),
            (ErrorCode::cancelled(), "CANCELLED"),
            (ErrorCode::cancelled_in_flight(), "CANCELLED_IN_FLIGHT"),
            (ErrorCode::result_truncated(), "RESULT_TRUNCATED"),
            (ErrorCode::arguments_converted(), "ARGUMENTS_CONVERTED"),
        ] {
            assert_eq!(code.as_str(), text);
            assert_eq!(code.to_string(), text);
            assert!(!code.is_canonical(), "{code}");
            assert!(matches!(code, ErrorCode::Custom(_)));
            assert_eq!(text.parse::<ErrorCode>(), Ok(code.clone()));
            assert_eq!(serde_json::to_value(&code).unwrap(), serde_json::json!(text));
            let rendered = ToolError::new(code.clone(), "m").render();
            assert!(rendered.starts_with(&format!("<tool_error code=\"{text}\" ")), "{rendered}");
            assert_eq!(parse(&rendered).error.code, code);
        }
        let truncated = ToolError::new(ErrorCode::result_truncated(), "cut").severity(Severity::Warning);
        assert_eq!(parse(&truncated.render()).error.severity, Severity::Warning);
    }
}
