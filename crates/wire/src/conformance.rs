//! Running the cases of a wire-vectors file: each case's input through this crate.
//!
//! The format is one JSON object per line, as produced by the TypeScript implementation:
//! `{"id", "kind", "input", "expected"}` with `kind` one of `tool_error`, `error_builder`,
//! `escape_text`, `escape_attr`. [`run_line`] turns a line into what this crate renders, so
//! a runner can print it and a test can compare it with `expected`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::escape::{escape_attr, escape_text};
use crate::severity::Severity;
use crate::tool_error::ToolError;

/// One case of a vectors file.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// The case's identifier.
    pub id: String,
    /// `tool_error`, `error_builder`, `escape_text` or `escape_attr`.
    pub kind: String,
    /// The input, shaped by `kind`.
    pub input: Value,
    /// What the reference implementation produced, if the file says.
    #[serde(default)]
    pub expected: Option<Expected>,
}

/// The reference implementation's output for a case.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Expected {
    /// The text block (or the escaped text).
    pub text: String,
    /// `isError` of the result; absent for the escape kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

/// What this crate produced for a case: the runner's output line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The case's identifier.
    pub id: String,
    /// The rendered text.
    pub text: String,
    /// `isError`, for the envelope kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl Outcome {
    /// Whether this outcome is exactly what the case expected.
    pub fn matches(&self, expected: &Expected) -> bool {
        self.text == expected.text && self.is_error == expected.is_error
    }
}

/// Why a case could not be run: where, what was found, what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError {
    /// The case's id, when the line got that far.
    pub id: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            Some(id) => write!(f, "case {id:?}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CaseError {}

/// Parses one line of a vectors file.
pub fn parse_case(line: &str) -> Result<Case, CaseError> {
    serde_json::from_str(line).map_err(|e| CaseError {
        id: None,
        message: format!("not a case: {e}; expected a JSON object with \"id\", \"kind\" and \"input\""),
    })
}

/// Runs one case through this crate.
pub fn run_case(case: &Case) -> Result<Outcome, CaseError> {
    let fail = |message: String| CaseError { id: Some(case.id.clone()), message };
    let input = Input { value: &case.input };
    let (text, is_error) = match case.kind.as_str() {
        "tool_error" => {
            let err = tool_error(&input).map_err(fail)?;
            (err.render(), Some(err.is_error()))
        }
        "error_builder" => {
            let err = error_builder(&input).map_err(fail)?;
            (err.render(), Some(err.is_error()))
        }
        "escape_text" => (escape_text(input.str("text").map_err(fail)?), None),
        "escape_attr" => (escape_attr(input.str("text").map_err(fail)?), None),
        other => {
            return Err(fail(format!(
                "unknown kind {other:?}; expected tool_error, error_builder, escape_text or escape_attr"
            )));
        }
    };
    Ok(Outcome { id: case.id.clone(), text, is_error })
}

/// Parses and runs one line.
pub fn run_line(line: &str) -> Result<Outcome, CaseError> {
    run_case(&parse_case(line)?)
}

struct Input<'a> {
    value: &'a Value,
}

impl<'a> Input<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.value.get(key).filter(|v| !v.is_null())
    }

    fn str(&self, key: &str) -> Result<&'a str, String> {
        match self.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(format!("`input.{key}` is {other}; expected a string")),
            None => Err(format!("`input.{key}` is missing; expected a string")),
        }
    }
}

fn string(value: &Value, what: &str) -> Result<String, String> {
    value.as_str().map(str::to_owned).ok_or_else(|| format!("{what} is {value}; expected a string"))
}

fn strings(value: &Value, what: &str) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| format!("{what} is {value}; expected a list of strings"))?;
    items.iter().map(|v| string(v, what)).collect()
}

fn pairs(value: &Value, what: &str) -> Result<Vec<(String, String)>, String> {
    let items = value.as_array().ok_or_else(|| format!("{what} is {value}; expected a list of [key, value] pairs"))?;
    items
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([k, v]) => Ok((string(k, what)?, string(v, what)?)),
            _ => Err(format!("{what} holds {pair}; expected a [key, value] pair of strings")),
        })
        .collect()
}

fn seconds(value: &Value, what: &str) -> Result<u64, String> {
    value.as_u64().ok_or_else(|| format!("{what} is {value}; expected a whole number of seconds"))
}

fn severity(value: &Value, what: &str) -> Result<Severity, String> {
    string(value, what).map(Severity::from)
}

fn tool_error(input: &Input<'_>) -> Result<ToolError, String> {
    let mut err = ToolError::new(input.str("code")?, input.str("message")?);
    if let Some(s) = input.get("suggestion") {
        err = err.suggest(string(s, "`input.suggestion`")?);
    }
    if let Some(a) = input.get("available_actions") {
        err = err.actions(strings(a, "`input.available_actions`")?);
    }
    if let Some(d) = input.get("details") {
        err = err.details(pairs(d, "`input.details`")?);
    }
    if let Some(r) = input.get("retry_after") {
        err = err.retry_after(seconds(r, "`input.retry_after`")?);
    }
    if let Some(s) = input.get("severity") {
        err = err.severity(severity(s, "`input.severity`")?);
    }
    Ok(err)
}

fn error_builder(input: &Input<'_>) -> Result<ToolError, String> {
    let mut err = ToolError::new(input.str("code")?, input.str("message")?);
    let chain = match input.get("chain") {
        Some(Value::Array(chain)) => chain.as_slice(),
        Some(other) => return Err(format!("`input.chain` is {other}; expected a list of calls")),
        None => &[],
    };
    for (i, call) in chain.iter().enumerate() {
        let method = call.get("method").and_then(Value::as_str).unwrap_or_default();
        let args = call.get("args").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let what = format!("`input.chain[{i}].args` of {method}");
        let one = || match args {
            [arg] => Ok(arg),
            _ => Err(format!("{what} has {} arguments; expected 1", args.len())),
        };
        err = match method {
            "suggest" => err.suggest(string(one()?, &what)?),
            "actions" => err.actions(args.iter().map(|a| string(a, &what)).collect::<Result<Vec<_>, _>>()?),
            "severity" => err.severity(severity(one()?, &what)?),
            "warning" => err.warning(),
            "critical" => err.critical(),
            "details" => err.details(pairs(one()?, &what)?),
            "retry_after" => err.retry_after(seconds(one()?, &what)?),
            other => {
                return Err(format!(
                    "`input.chain[{i}].method` is {other:?}; expected suggest, actions, severity, warning, critical, details or retry_after"
                ));
            }
        };
    }
    Ok(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_say_what_and_where() {
        let cases = [
            ("not json", "not a case"),
            (r#"{"id":"a","kind":"nope","input":{}}"#, "unknown kind \"nope\""),
            (r#"{"id":"a","kind":"tool_error","input":{"message":"m"}}"#, "`input.code` is missing"),
            (
                r#"{"id":"a","kind":"tool_error","input":{"code":1,"message":"m"}}"#,
                "`input.code` is 1; expected a string",
            ),
            (r#"{"id":"a","kind":"tool_error","input":{"code":"X","message":"m","retry_after":-1}}"#, "whole number"),
            (r#"{"id":"a","kind":"tool_error","input":{"code":"X","message":"m","severity":1}}"#, "expected a string"),
            (
                r#"{"id":"a","kind":"tool_error","input":{"code":"X","message":"m","details":[["k"]]}}"#,
                "[key, value] pair",
            ),
            (
                r#"{"id":"a","kind":"error_builder","input":{"code":"X","message":"m","chain":[{"method":"explode"}]}}"#,
                "\"explode\"",
            ),
            (
                r#"{"id":"a","kind":"error_builder","input":{"code":"X","message":"m","chain":[{"method":"suggest","args":[]}]}}"#,
                "expected 1",
            ),
            (r#"{"id":"a","kind":"escape_text","input":{}}"#, "`input.text` is missing"),
        ];
        for (line, wanted) in cases {
            let err = run_line(line).unwrap_err().to_string();
            assert!(err.contains(wanted), "{line}: {err}");
        }
    }

    #[test]
    fn runs_each_kind() {
        let out = run_line(r#"{"id":"e","kind":"escape_attr","input":{"text":"<"}}"#).unwrap();
        assert_eq!(out, Outcome { id: "e".into(), text: "&lt;".into(), is_error: None });
        let out = run_line(r#"{"id":"b","kind":"error_builder","input":{"code":"X","message":"m","chain":[{"method":"warning","args":[]}]}}"#).unwrap();
        assert_eq!(out.is_error, Some(false));
        // A severity of the server's own is rendered as written (escaped), and is an error.
        let out = run_line(r#"{"id":"f","kind":"tool_error","input":{"code":"X","message":"m","severity":"fatal&"}}"#)
            .unwrap();
        assert_eq!(out.text, "<tool_error code=\"X\" severity=\"fatal&amp;\">\n<message>m</message>\n</tool_error>");
        assert_eq!(out.is_error, Some(true));
    }
}
