//! Which keys an object takes. Many schemas name their fields without saying that others are
//! refused, and the server behind them then ignores a misspelt or invented key: the call
//! "succeeds" with the wrong effect. So an object is closed to keys nothing applying to it
//! names or admits, with the semantics of JSON Schema 2020-12's `unevaluatedProperties:
//! false`, which the validator implements: a key is known when the object's own
//! `properties`, `patternProperties` or `additionalProperties` take it, or those of any schema
//! that applies to the same value — through `$ref`, `allOf`, the branches of `anyOf` / `oneOf`
//! that match, `then` / `else`, `dependentSchemas`. Keys the conditions themselves name (`if`,
//! `not`, a `then` that did not apply) are known too: the schema names them.
//!
//! What stays open: an object schema that names no properties is a map, whose keys are data;
//! one that says itself what other keys may be (`additionalProperties`,
//! `unevaluatedProperties`, `patternProperties`), or that a schema always applying to it
//! (through `$ref` or `allOf`) closes already, so a schema whose objects are all closed as
//! written is published as written; one whose references cannot all be followed
//! (what applies is then unknown); what sits under `not`, `if` or `contains`, where a stricter
//! schema would let more through; and the places two schemas that apply to the same value
//! describe differently (two `allOf` branches each naming `address` with other fields), which
//! no closing of either could keep right.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::document::{Child, Document, Role, children};

/// The keywords by which a schema says what keys an object takes.
const SAYS_WHAT_KEYS: [&str; 4] = ["properties", "patternProperties", "additionalProperties", "unevaluatedProperties"];

/// `schema` with every object that names its properties closed to other keys: with
/// `additionalProperties: false` where its own `properties` are all that name any, else with
/// `unevaluatedProperties: false`.
pub(crate) fn close_unknown_keys(schema: Map<String, Value>) -> Map<String, Value> {
    let document = Document::new(Value::Object(schema));
    let mut plan = Plan { document: &document, edits: Vec::new(), open: HashSet::new(), reused: HashSet::new() };
    plan.find_disagreements("", true, false, 0);
    plan.close("", true, false, 0);
    let edits = plan.edits;
    let mut closed = document.into_root();
    for edit in edits {
        let (Edit::Additional(pointer) | Edit::Unevaluated(pointer) | Edit::Admit(pointer, _)) = &edit;
        let Some(Value::Object(object)) = closed.pointer_mut(pointer) else { continue };
        match edit {
            Edit::Additional(_) => {
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
            Edit::Unevaluated(_) => {
                object.insert("unevaluatedProperties".into(), Value::Bool(false));
            }
            Edit::Admit(_, names) => {
                let properties = names.into_iter().map(|name| (name, Value::Bool(true))).collect();
                let entry = Value::Object(Map::from_iter([("properties".to_owned(), Value::Object(properties))]));
                if let Value::Array(all) = object.entry("allOf").or_insert_with(|| Value::Array(Vec::new())) {
                    all.push(entry);
                }
            }
        }
    }
    match closed {
        Value::Object(closed) => closed,
        _ => unreachable!("built from an object"),
    }
}

enum Edit {
    Additional(String),
    Unevaluated(String),
    /// Keys a condition names, made known to the object's `unevaluatedProperties`.
    Admit(String, BTreeSet<String>),
}

struct Plan<'d> {
    document: &'d Document,
    edits: Vec<Edit>,
    /// Places left open, with all under them: two schemas that apply to one value describe
    /// them differently.
    open: HashSet<String>,
    /// Schemas left open themselves: a reference applies them to another value, whose
    /// schemas name more keys (`"$ref": "#/properties/a"` beside other properties).
    reused: HashSet<String>,
}

impl Plan<'_> {
    /// Marks open the places that schemas applying to the same value describe differently.
    fn find_disagreements(&mut self, pointer: &str, position: bool, inverted: bool, depth: usize) {
        let Some(schema) = self.document.at(pointer) else { return };
        if depth > 64 {
            return;
        }
        if position
            && !inverted
            && let Some(members) = self.document.members(pointer)
        {
            let whole = self.named(pointer);
            for member in &members[1..] {
                if whole.is_none() || self.named(member) != whole {
                    self.reused.insert(member.clone());
                }
            }
            let mut places: HashMap<(String, Option<String>), Vec<String>> = HashMap::new();
            for member in &members {
                let Some(schema) = self.document.at(member) else { continue };
                for child in children(schema, member).into_iter().filter(|c| c.role == Role::Position) {
                    places.entry(place(&child)).or_default().push(child.pointer);
                }
            }
            for pointers in places.into_values().filter(|pointers| pointers.len() > 1) {
                let first = self.named(&pointers[0]);
                if first.is_none() || pointers[1..].iter().any(|p| self.named(p) != first) {
                    self.open.extend(pointers);
                }
            }
        }
        for child in children(schema, pointer) {
            let inverted = inverted || child.role == Role::Inverted;
            self.find_disagreements(&child.pointer, child.role == Role::Position, inverted, depth + 1);
        }
    }

    /// The names the schemas applying to the value at `pointer` give its keys, and whether
    /// they take others; `None` when not all is known.
    fn named(&self, pointer: &str) -> Option<(BTreeSet<String>, bool)> {
        let mut names = BTreeSet::new();
        let mut others = false;
        for member in self.document.members(pointer)? {
            let schema = self.document.at(&member)?;
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                names.extend(properties.keys().cloned());
            }
            others |= ["patternProperties", "additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|k| schema.get(*k).is_some());
        }
        Some((names, others))
    }

    fn is_open(&self, pointer: &str) -> bool {
        self.open
            .iter()
            .any(|open| pointer == open || pointer.strip_prefix(open.as_str()).is_some_and(|r| r.starts_with('/')))
    }

    /// Closes the objects described at and under `pointer`.
    fn close(&mut self, pointer: &str, position: bool, inverted: bool, depth: usize) {
        let Some(schema) = self.document.at(pointer) else { return };
        if depth > 64 {
            return;
        }
        if position && !inverted && !self.is_open(pointer) {
            self.decide(pointer);
        }
        for child in children(schema, pointer) {
            let inverted = inverted || child.role == Role::Inverted;
            self.close(&child.pointer, child.role == Role::Position, inverted, depth + 1);
        }
    }

    /// Closes the object schema at `pointer`, a value's own, if it names properties and says
    /// nothing of other keys.
    fn decide(&mut self, pointer: &str) {
        let Some(Value::Object(schema)) = self.document.at(pointer) else { return };
        if self.reused.contains(pointer) {
            return;
        }
        if ["additionalProperties", "unevaluatedProperties", "patternProperties"]
            .iter()
            .any(|k| schema.contains_key(*k))
        {
            return;
        }
        let Some(members) = self.document.members(pointer) else { return };
        if self.closed_by_what_always_applies(pointer) {
            return;
        }
        let own = schema.contains_key("properties");
        let others = members[1..].iter().filter_map(|m| self.document.at(m)).any(says_what_keys);
        match (own, others) {
            (false, false) => {}
            (true, false) => self.edits.push(Edit::Additional(pointer.to_owned())),
            _ => match lone_object_branch(schema, pointer) {
                // `Option<T>`: `anyOf: [T, null]` is closed as T itself.
                Some(branch) => self.decide(&branch),
                None => {
                    self.edits.push(Edit::Unevaluated(pointer.to_owned()));
                    let named = self.conditional_names(&members);
                    if !named.is_empty() {
                        self.edits.push(Edit::Admit(pointer.to_owned(), named));
                    }
                }
            },
        }
    }

    /// Whether a schema that applies to the value at `pointer` whatever it holds (through
    /// references and `allOf`) closes it already: `additionalProperties: false` or
    /// `unevaluatedProperties: false` there refuses every key it does not name, whatever sits
    /// beside the reference, so closing the object again would only add a keyword.
    fn closed_by_what_always_applies(&self, pointer: &str) -> bool {
        let always = self.document.members_where(pointer, &mut |_, child| child.keyword == "allOf");
        always.unwrap_or_default().iter().skip(1).filter_map(|member| self.document.at(member)).any(|schema| {
            ["additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|k| schema.get(*k) == Some(&Value::Bool(false)))
        })
    }

    /// The keys named by the conditions of the schemas in `members`: `if`, `not`, and `then`,
    /// `else` and `dependentSchemas`, which name keys whether or not they apply.
    fn conditional_names(&self, members: &[String]) -> BTreeSet<String> {
        let conditional = |child: &Child| matches!(child.keyword, "if" | "then" | "else" | "not" | "dependentSchemas");
        let mut names = BTreeSet::new();
        for member in members {
            let Some(schema) = self.document.at(member) else { continue };
            for child in children(schema, member).into_iter().filter(conditional) {
                for inner in self.document.members(&child.pointer).unwrap_or_default() {
                    let properties =
                        self.document.at(&inner).and_then(|s| s.get("properties")).and_then(Value::as_object);
                    names.extend(properties.into_iter().flat_map(|p| p.keys().cloned()));
                }
            }
        }
        names
    }
}

/// Which value a position describes, for telling when two schemas describe the same one: a
/// property by its name, any item as one place.
fn place(child: &Child) -> (String, Option<String>) {
    match child.keyword {
        "properties" => ("properties".into(), child.key.clone()),
        "prefixItems" | "items" | "additionalItems" | "unevaluatedItems" => ("items".into(), None),
        keyword => (keyword.into(), child.key.clone()),
    }
}

fn says_what_keys(schema: &Value) -> bool {
    SAYS_WHAT_KEYS.iter().any(|keyword| schema.get(*keyword).is_some())
}

/// The one branch of a union that may be an object, when every other branch cannot and the
/// union is all the schema composes (`Option<T>` as `anyOf: [T, {"type": "null"}]`).
fn lone_object_branch(schema: &Map<String, Value>, pointer: &str) -> Option<String> {
    let composes = ["properties", "allOf", "$ref", "$dynamicRef", "if", "then", "else", "dependentSchemas"];
    if composes.iter().any(|k| schema.contains_key(*k)) {
        return None;
    }
    let (keyword, branches) = match (schema.get("anyOf"), schema.get("oneOf")) {
        (Some(Value::Array(branches)), None) => ("anyOf", branches),
        (None, Some(Value::Array(branches))) => ("oneOf", branches),
        _ => return None,
    };
    let mut objects = branches.iter().enumerate().filter(|(_, branch)| may_be_object(branch));
    let (index, _) = objects.next()?;
    objects.next().is_none().then(|| format!("{pointer}/{keyword}/{index}"))
}

/// Whether a value the schema accepts may be an object, as far as its own keywords tell.
fn may_be_object(schema: &Value) -> bool {
    let Value::Object(schema) = schema else { return schema.as_bool().unwrap_or(false) };
    let typed = match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => true,
    };
    let valued = match (schema.get("const"), schema.get("enum")) {
        (Some(value), _) => value.is_object(),
        (None, Some(Value::Array(values))) => values.iter().any(Value::is_object),
        _ => true,
    };
    typed && valued
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closed(schema: Value) -> Value {
        Value::Object(close_unknown_keys(schema.as_object().unwrap().clone()))
    }

    fn accepts(schema: &Value, instance: Value) -> bool {
        jsonschema::draft202012::new(schema).unwrap().is_valid(&instance)
    }

    #[test]
    fn plain_objects_get_additional_properties_false() {
        let schema = closed(
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}}, "list": {"items": {"properties": {"c": {}}}}}}),
        );
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["a"]["additionalProperties"], false);
        assert_eq!(schema["properties"]["list"]["items"]["additionalProperties"], false);
        assert!(!accepts(&schema, json!({"a": {"b": 1, "x": 2}})));
    }

    #[test]
    fn maps_stay_open() {
        for map in [json!({"type": "object"}), json!({"type": "object", "required": ["a"]}), json!({})] {
            assert_eq!(closed(map.clone()), map);
        }
        let schema = closed(json!({"properties": {"metadata": {"type": "object"}}}));
        assert!(accepts(&schema, json!({"metadata": {"anything": 1, "goes": [2]}})));
        assert!(!accepts(&schema, json!({"metadat": {}})));
    }

    #[test]
    fn composed_objects_know_every_applying_key() {
        let schema = closed(json!({
            "type": "object",
            "allOf": [{"properties": {"foo": {}}, "required": ["foo"]}, {"$ref": "#/$defs/bar"}],
            "$defs": {"bar": {"properties": {"bar": {}}}}
        }));
        assert_eq!(schema["unevaluatedProperties"], false);
        assert!(schema["allOf"][0].get("additionalProperties").is_none());
        assert!(accepts(&schema, json!({"foo": 1, "bar": 2})));
        assert!(!accepts(&schema, json!({"foo": 1, "baz": 2})));
    }

    #[test]
    fn an_object_its_reference_or_allof_closes_already_is_left_as_written() {
        let written = json!({
            "properties": {
                "address": {"$ref": "#/$defs/Address"},
                "billing": {"allOf": [{"$ref": "#/$defs/Strict"}], "properties": {"vat": {}}}
            },
            "$defs": {
                "Address": {"properties": {"zip": {}}, "additionalProperties": false},
                "Strict": {"properties": {"iban": {}}, "unevaluatedProperties": false}
            },
            "additionalProperties": false
        });
        let schema = closed(written.clone());
        assert_eq!(schema, written);
        assert!(!accepts(&schema, json!({"address": {"zap": 1}})));
        // The schema as written refuses `vat` beside the closed branch: left so, not loosened.
        assert!(!accepts(&schema, json!({"billing": {"iban": "x", "vat": 1}})));
        // A branch that may not apply closes nothing: the object is closed itself.
        let union = closed(json!({
            "properties": {"pet": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"properties": {"barks": {}}}]}},
            "$defs": {"Cat": {"properties": {"meows": {}}, "additionalProperties": false}}
        }));
        assert!(!accepts(&union, json!({"pet": {"barks": true, "purrs": 1}})));
    }

    #[test]
    fn unions_know_the_keys_of_the_branch_that_matches() {
        let schema = closed(json!({
            "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}},
            "$defs": {
                "Cat": {"properties": {"kind": {"const": "cat"}, "meows": {"type": "integer"}}, "required": ["kind"]},
                "Dog": {"properties": {"kind": {"const": "dog"}, "barks": {"type": "boolean"}}, "required": ["kind"]}
            }
        }));
        assert!(accepts(&schema, json!({"pet": {"kind": "cat", "meows": 2}})));
        assert!(!accepts(&schema, json!({"pet": {"kind": "cat", "meowz": 2}})));
        assert!(!accepts(&schema, json!({"pet": {"kind": "cat", "barks": true}})));
    }

    #[test]
    fn optional_objects_are_closed_as_themselves() {
        let schema = closed(
            json!({"properties": {"addr": {"anyOf": [{"type": "object", "properties": {"zip": {}}}, {"type": "null"}]}}}),
        );
        assert_eq!(schema["properties"]["addr"]["anyOf"][0]["additionalProperties"], false);
        assert!(schema["properties"]["addr"].get("unevaluatedProperties").is_none());
        let behind_ref = closed(json!({
            "properties": {"addr": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}},
            "$defs": {"A": {"properties": {"zip": {}}}}
        }));
        assert_eq!(behind_ref["properties"]["addr"]["anyOf"][0]["unevaluatedProperties"], false);
        assert!(accepts(&behind_ref, json!({"addr": {"zip": 1}})));
        assert!(accepts(&behind_ref, json!({"addr": null})));
        assert!(!accepts(&behind_ref, json!({"addr": {"zap": 1}})));
    }

    #[test]
    fn keys_conditions_name_are_known() {
        let schema = closed(json!({
            "properties": {"kind": {}},
            "if": {"properties": {"kind": {"const": "card"}}},
            "then": {"properties": {"number": {}}},
            "else": {"properties": {"iban": {}}},
            "dependentSchemas": {"kind": {"properties": {"note": {}}}}
        }));
        for valid in
            [json!({"kind": "card", "number": 1}), json!({"kind": "sepa", "iban": 1, "note": ""}), json!({"iban": 1})]
        {
            assert!(accepts(&schema, valid.clone()), "{valid}");
        }
        assert!(!accepts(&schema, json!({"kind": "card", "x": 1})));
    }

    #[test]
    fn what_stays_open() {
        // Said by the schema itself, a reference that leaves the document, under `not`.
        for schema in [
            json!({"properties": {"a": {}}, "patternProperties": {"^x": {}}}),
            json!({"properties": {"a": {"$ref": "https://example.com/a.json"}}}),
            json!({"not": {"properties": {"a": {"properties": {"b": {}}}}}}),
        ] {
            let closed = closed(schema.clone());
            assert!(closed.pointer("/properties/a/additionalProperties").is_none(), "{closed}");
            assert!(closed.pointer("/not/properties/a/additionalProperties").is_none(), "{closed}");
        }
        // Two branches describing one property differently leave it open.
        let schema = closed(json!({"allOf": [
            {"properties": {"a": {"properties": {"x": {}}}}},
            {"properties": {"a": {"properties": {"y": {}}}}}
        ]}));
        assert!(accepts(&schema, json!({"a": {"x": 1, "y": 2}})));
        assert!(!accepts(&schema, json!({"b": 1})));
    }
}
