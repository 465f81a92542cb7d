//! The value sent, as the type the schema expects would hold it: `"2500"` where an integer is
//! expected is `2500`, `42` where a string is is `'42'`. A wrong type that is only the wrong
//! spelling of a right value is answered with that value, which is the whole fix.

use mcp_fusion_wire::{FieldPath, Segment};
use serde_json::{Number, Value};

use super::{Checker, instance_path};

impl Checker {
    /// `instance`, sent at `path` of `root`, retyped to one of `types` — when that value is
    /// one the schema accepts there (so `"0"` is no answer where the least is 1).
    pub(super) fn retyped(&self, types: &[String], instance: &Value, path: &FieldPath, root: &Value) -> Option<Value> {
        let wants = |t: &str| types.iter().any(|have| have == t);
        let candidate = match instance {
            Value::String(text) => {
                let text = text.trim();
                if (wants("integer") || wants("number"))
                    && let Ok(n) = text.parse::<i64>()
                {
                    Value::from(n)
                } else if wants("number")
                    && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64)
                {
                    Value::Number(n)
                } else if wants("boolean") && matches!(text, "true" | "false") {
                    Value::Bool(text == "true")
                } else {
                    return None;
                }
            }
            Value::Number(_) | Value::Bool(_) if wants("string") => Value::String(instance.to_string()),
            _ => return None,
        };
        let mut patched = root.clone();
        *value_at_mut(&mut patched, path)? = candidate.clone();
        let within = |at: &FieldPath| at.len() >= path.len() && at.segments().zip(path.segments()).all(|(a, b)| a == b);
        let still_wrong = self.validator.iter_errors(&patched).any(|error| within(&instance_path(&error, &patched)));
        (!still_wrong).then_some(candidate)
    }
}

/// The value at `path` inside `root`.
pub(super) fn value_at_mut<'a>(root: &'a mut Value, path: &FieldPath) -> Option<&'a mut Value> {
    path.segments().try_fold(root, |value, segment| match segment {
        Segment::Key(key) => value.get_mut(key),
        Segment::Index(index) => value.get_mut(index),
    })
}
