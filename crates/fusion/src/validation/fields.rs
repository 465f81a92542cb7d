//! The fields of an object, as everything applying to it names them: through `$ref`,
//! `allOf`, `if` / `then` / `else`, and of a union the branch a discriminator picks — for
//! the did-you-mean of unknown keys, for the missing fields, and for telling a union's
//! branches apart.

use mcp_fusion_wire::Expectation;
use serde_json::{Map, Value};

use super::describe::expectation;
use super::document::{Document, escape};
use super::suggest::FieldInfo;
use super::{Checker, parent_pointer};

/// The fields the root object of `schema` names, through everything applying to it, each
/// with what it takes: what an upstream's refusal that names a field is answered with.
pub(crate) fn described_fields(schema: &Map<String, Value>) -> Vec<(String, Expectation)> {
    let document = Document::new(Value::Object(schema.clone()));
    let members = document.members("").unwrap_or_else(|| vec![String::new()]);
    named_by(&document, members)
        .into_iter()
        .map(|(name, pointer)| {
            let expected = expectation(&document, &pointer);
            (name, expected)
        })
        .collect()
}

/// The fields the object schemas at `members` name, each with its schema's pointer, in the
/// schemas' order, each once.
fn named_by(document: &Document, members: Vec<String>) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for member in members {
        let Some(properties) = document.at(&member).and_then(|s| s.get("properties")).and_then(Value::as_object) else {
            continue;
        };
        for name in properties.keys() {
            if !fields.iter().any(|(known, _)| known == name) {
                fields.push((name.clone(), format!("{member}/properties/{}", escape(name))));
            }
        }
    }
    fields
}

impl Checker {
    /// The fields the object schema at `pointer` names, with the pointer of each one's
    /// schema, in the schema's order. With the value sent, a union's branches are narrowed to
    /// the one its discriminator picks.
    pub(super) fn fields_at(&self, pointer: &str, instance: Option<&Value>) -> Vec<(String, String)> {
        let mut follow = |schema: &Value, child: &super::document::Child| {
            let union = matches!(child.keyword, "anyOf" | "oneOf");
            let Some(instance) = instance.filter(|_| union) else { return true };
            let union_pointer = parent_pointer(&child.pointer);
            let branches: Vec<usize> =
                (0..schema.get(child.keyword).and_then(Value::as_array).map_or(0, Vec::len)).collect();
            match self.discriminator(union_pointer, &branches) {
                Some(discriminator) => match instance.get(&discriminator.name).and_then(|v| discriminator.branch_of(v))
                {
                    Some(chosen) => child.key.as_deref() == Some(chosen.to_string().as_str()),
                    None => true,
                },
                None => true,
            }
        };
        let members = self.document.members_where(pointer, &mut follow).unwrap_or_else(|| vec![pointer.to_owned()]);
        named_by(&self.document, members)
    }

    /// The fields as the did-you-mean matches keys against them: each with its words and the
    /// kinds of value it takes.
    pub(super) fn known_fields(&self, fields: &[(String, String)]) -> Vec<FieldInfo> {
        fields
            .iter()
            .map(|(name, pointer)| {
                let title = self.schema_at(pointer).and_then(|s| s.get("title")).and_then(Value::as_str);
                FieldInfo::new(name, &expectation(&self.document, pointer), title)
            })
            .collect()
    }

    /// Whether anything applying to the object at `pointer`, in any branch, names `key` or
    /// takes keys it does not name.
    pub(super) fn admits(&self, pointer: &str, key: &str) -> bool {
        let Some(members) = self.document.members(pointer) else { return true };
        members.iter().filter_map(|m| self.schema_at(m)).any(|schema| {
            schema.get("properties").and_then(|p| p.get(key)).is_some()
                || schema.get("patternProperties").is_some()
                || schema.get("additionalProperties").is_some_and(|a| a != false)
        })
    }

    /// The required fields of the object schema at `pointer` that `instance` does not hold.
    pub(super) fn missing_required(&self, pointer: &str, instance: &Value) -> Vec<String> {
        let members = self.document.members(pointer).unwrap_or_else(|| vec![pointer.to_owned()]);
        let mut missing = Vec::new();
        for schema in members.iter().filter_map(|m| self.schema_at(m)) {
            let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
            for name in required.filter_map(Value::as_str) {
                if instance.get(name).is_none() && !missing.iter().any(|m| m == name) {
                    missing.push(name.to_owned());
                }
            }
        }
        missing
    }
    /// The property whose `const` / `enum` tells the branches of the union at `pointer` apart
    /// (serde's tagged enums, pydantic's and Zod's discriminated unions), with each branch's
    /// values; an OpenAPI `discriminator` names it.
    pub(super) fn discriminator(&self, pointer: &str, branches: &[usize]) -> Option<Discriminator> {
        let named =
            self.schema_at(parent_pointer(pointer))?.pointer("/discriminator/propertyName").and_then(Value::as_str);
        let first = format!("{pointer}/{}", branches.first()?);
        let candidates: Vec<String> = match named {
            Some(name) => vec![name.to_owned()],
            None => self.fields_at(&first, None).into_iter().map(|(name, _)| name).collect(),
        };
        candidates.into_iter().find_map(|name| {
            let mut values: Vec<(usize, Vec<Value>)> = Vec::new();
            for branch in branches {
                let fields = self.fields_at(&format!("{pointer}/{branch}"), None);
                let (_, at) = fields.into_iter().find(|(field, _)| *field == name)?;
                let allowed = expectation(&self.document, &at).allowed;
                let taken = values.iter().any(|(_, others)| others.iter().any(|v| allowed.contains(v)));
                if allowed.is_empty() || taken {
                    return None;
                }
                values.push((*branch, allowed));
            }
            (values.len() > 1).then_some(Discriminator { name, values })
        })
    }
}

/// The property that tells a union's branches apart, and the values each branch takes.
pub(super) struct Discriminator {
    pub(super) name: String,
    pub(super) values: Vec<(usize, Vec<Value>)>,
}

impl Discriminator {
    pub(super) fn branch_of(&self, value: &Value) -> Option<usize> {
        self.values.iter().find(|(_, values)| values.contains(value)).map(|(branch, _)| *branch)
    }
}
