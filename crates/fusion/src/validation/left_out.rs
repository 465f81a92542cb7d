//! `null` as "left out": a strict schema publishes each optional field as required and
//! nullable, so a host that decodes against it sends `null` for a field the model did not
//! mean to send. Before the full schema checks the call, such a `null` is taken out — only
//! where the full schema refuses it and the field's object does not require it.

use jsonschema::error::ValidationErrorKind;
use mcp_fusion_wire::{FieldPath, Segment};
use serde_json::Value;

use super::{Checker, instance_path, value_at_path};

impl Checker {
    /// `arguments` without each `null` the schema refuses for a field its object does not
    /// require; unchanged when they are valid as sent.
    pub(crate) fn nulls_left_out(&self, mut arguments: Value) -> Value {
        // Each round takes out at least one key, so the rounds end.
        while !self.validator.is_valid(&arguments) {
            let refused: Vec<FieldPath> = self
                .validator
                .iter_errors(&arguments)
                .flat_map(|error| {
                    let at = instance_path(&error, &arguments);
                    match error.kind() {
                        ValidationErrorKind::AdditionalProperties { unexpected }
                        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                            unexpected.iter().map(|key| at.clone().key(key.clone())).collect()
                        }
                        _ => vec![at],
                    }
                })
                .filter(|path| value_at_path(&arguments, path) == Some(&Value::Null))
                .filter(|path| !self.requires(path))
                .collect();
            let mut removed = false;
            for path in refused {
                let Some(Segment::Key(key)) = path.segments().last() else { continue };
                let key = key.to_owned();
                if let Some(Value::Object(object)) = super::retyped::value_at_mut(&mut arguments, &path.parent()) {
                    removed |= object.shift_remove(&key).is_some();
                }
            }
            if !removed {
                break;
            }
        }
        // A union (`anyOf`, `oneOf`) refuses as a whole, naming no key: the nulls it refuses
        // are found by leaving every `null` of an object out, kept only when that makes the
        // call valid — as a strict schema's host means them when it fills each field it had no
        // value for.
        if !self.validator.is_valid(&arguments) {
            let mut without = arguments.clone();
            if without_null_members(&mut without) && self.validator.is_valid(&without) {
                return without;
            }
        }
        arguments
    }

    /// Whether the object holding `path` requires its last key, as any schema applying to
    /// that object says.
    fn requires(&self, path: &FieldPath) -> bool {
        let Some(Segment::Key(key)) = path.segments().last() else { return true };
        let parent = path.parent();
        let along = self.pointers_along(&parent);
        if along.len() != parent.len() + 1 {
            return false;
        }
        let pointer = along.last().cloned().unwrap_or_default();
        let members = self.document.members(&pointer).unwrap_or_else(|| vec![pointer]);
        members.iter().any(|member| {
            let required = self.document.at(member).and_then(|schema| schema.get("required"));
            required.and_then(Value::as_array).is_some_and(|names| names.iter().any(|name| name == key))
        })
    }
}

/// Takes every `null` member out of every object in `value`; whether it took any.
fn without_null_members(value: &mut Value) -> bool {
    match value {
        Value::Object(object) => {
            let before = object.len();
            object.retain(|_, member| !member.is_null());
            let mut removed = object.len() < before;
            for member in object.values_mut() {
                removed |= without_null_members(member);
            }
            removed
        }
        Value::Array(items) => items.iter_mut().fold(false, |removed, item| without_null_members(item) | removed),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::Formats;
    use super::*;

    fn checker(schema: Value) -> Checker {
        Checker::new(schema.as_object().unwrap(), Vec::new(), Formats::Asserted).unwrap()
    }

    #[test]
    fn a_null_for_an_optional_field_is_left_out_and_one_for_a_required_or_nullable_field_stays() {
        let checker = checker(json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "limit": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["city"]},
            },
            "required": ["id"],
            "unevaluatedProperties": false,
        }));
        let sent =
            json!({"id": "a", "limit": null, "note": null, "other": null, "address": {"city": "x", "zip": null}});
        assert_eq!(checker.nulls_left_out(sent), json!({"id": "a", "note": null, "address": {"city": "x"}}));
        let required = json!({"id": null, "limit": null});
        assert_eq!(checker.nulls_left_out(required), json!({"id": null}));
    }

    #[test]
    fn a_null_a_union_refuses_is_left_out_when_that_makes_the_call_valid() {
        let branch = |action: &str, field: &str| json!({"type": "object", "properties": {"action": {"const": action}, field: {"type": "string"}, "v": {"type": "object", "properties": {"f": {"type": "string"}}, "additionalProperties": false}}, "required": ["action"], "additionalProperties": false});
        let checker = checker(json!({"oneOf": [branch("create", "due_date"), branch("pay", "method")]}));
        let sent = json!({"action": "create", "due_date": null, "v": {"f": null}});
        assert_eq!(checker.nulls_left_out(sent), json!({"action": "create", "v": {}}));
        // Left as sent when leaving the nulls out would not make it valid either.
        let wrong = json!({"action": "refund", "due_date": null});
        assert_eq!(checker.nulls_left_out(wrong.clone()), wrong);
    }
}
