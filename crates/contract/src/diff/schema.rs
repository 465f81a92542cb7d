//! Field-level comparison of two JSON Schemas: what a caller calibrated on the old schema
//! meets in the new one, keyword by keyword, recursively through `properties`, `items`,
//! `additionalProperties` and `anyOf` / `oneOf` / `allOf` branches, with local `$ref`s
//! resolved against each schema's own root.
//!
//! Input schemas are judged from the caller's side (a tightened constraint may reject a call
//! that used to pass: BREAKING). Output schemas are judged from the reader's side: any change
//! that is not cosmetic is RISKY.

use std::borrow::Cow;
use std::collections::BTreeSet;

use mcp_fusion_wire::{ChangeSeverity, ContractChange};
use serde_json::{Map, Value};

use ChangeSeverity::{Breaking, Cosmetic, Risky, Safe};

/// How deep the comparison follows nested schemas.
const MAX_DEPTH: usize = 64;
/// How many schema nodes one comparison visits at most (guards against `$ref` fan-out).
const MAX_NODES: usize = 20_000;
/// How many `$ref`s in a row are followed.
const MAX_REF_HOPS: usize = 32;

/// The schema that accepts anything (an absent `items` or `additionalProperties`).
static ANY: Value = Value::Bool(true);

/// Which side of the call a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Arguments: judged by whether old calls still pass.
    Input,
    /// Results: any non-cosmetic change is RISKY.
    Output,
}

/// Whose schema it is, for the descriptions (`Action "get_invoice"`, `Tool "crm"`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Owner<'a> {
    /// `Action`, `Tool`, `Prompt` or `Resource template`.
    pub kind: &'static str,
    /// The action, tool or prompt name, or the URI template.
    pub name: &'a str,
    /// What its input's properties are called: `field` (of arguments), `argument` (of a
    /// prompt), `parameter` (of a URI template).
    pub part: &'static str,
}

impl<'a> Owner<'a> {
    /// The owner of a tool's or an action's schema, whose properties are fields.
    pub(super) fn with_fields(kind: &'static str, name: &'a str) -> Owner<'a> {
        Owner { kind, name, part: "field" }
    }

    /// `Action "get_invoice"`.
    pub(super) fn title(&self) -> String {
        format!("{} \"{}\"", self.kind, self.name)
    }

    /// `Field`, `Argument`, `Parameter`.
    fn part_title(&self) -> String {
        let mut chars = self.part.chars();
        chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
    }
}

/// Appends to `out` the changes from `old` to `new`, with fields under `prefix`
/// (`inputSchema`, `actions.get_invoice`, `actions.get_invoice.outputSchema`).
pub(super) fn diff_schema(
    old: &Value,
    new: &Value,
    side: Side,
    owner: Owner<'_>,
    prefix: &str,
    out: &mut Vec<ContractChange>,
) {
    let refs_matter = old != new && (has_ref(old, 0) || has_ref(new, 0));
    let mut differ =
        Differ { old_root: old, new_root: new, side, owner, refs_matter, out, stack: Vec::new(), nodes: 0 };
    differ.node(old, new, prefix, "", 0);
}

/// Compact JSON of a value (`serde_json::to_string`).
pub(super) fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Compact JSON of a value with arrays of strings sorted (`["customer_id","id"]`).
fn compact_sorted(value: &Value) -> String {
    match value {
        Value::Array(items) => compact(&Value::Array(sorted_values(items))),
        other => compact(other),
    }
}

/// Values in a stable order: by their compact JSON.
fn sorted_values(values: &[Value]) -> Vec<Value> {
    let mut values = values.to_vec();
    values.sort_by_cached_key(compact);
    values
}

/// A value as a sentence shows it: strings in quotes as written, everything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => format!("\"{text}\""),
        other => compact(other),
    }
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() { segment.to_owned() } else { format!("{path}.{segment}") }
}

fn child_label(label: &str, name: &str) -> String {
    if label.is_empty() { name.to_owned() } else { format!("{label}.{name}") }
}

fn has_ref(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(|v| has_ref(v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| has_ref(v, depth + 1)),
        _ => false,
    }
}

/// A local reference (`#`, `#/$defs/X`, `#/definitions/X`) looked up in `root`.
fn lookup<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None;
    }
    root.pointer(fragment)
}

/// The schema with its local `$ref` chain followed: the target, with the referring schema's
/// other keywords laid over it. Also the last reference followed (for the recursion guard).
/// A reference that cannot be followed (not local, missing, cyclic) stays in place and is
/// compared as a keyword.
fn resolve<'v>(root: &'v Value, schema: &'v Value) -> (Cow<'v, Value>, Option<String>) {
    let Some(first) = schema.as_object() else { return (Cow::Borrowed(schema), None) };
    if !first.contains_key("$ref") {
        return (Cow::Borrowed(schema), None);
    }
    let mut layers: Vec<&Map<String, Value>> = vec![first];
    let mut followed: Vec<&str> = Vec::new();
    let mut leaf: Option<&Value> = None;
    while let Some(reference) = layers[layers.len() - 1].get("$ref").and_then(Value::as_str) {
        if followed.contains(&reference) || followed.len() >= MAX_REF_HOPS {
            break;
        }
        let Some(target) = lookup(root, reference) else { break };
        followed.push(reference);
        match target {
            Value::Object(map) => layers.push(map),
            other => {
                leaf = Some(other);
                break;
            }
        }
    }
    let Some(last) = followed.last().map(|r| (*r).to_owned()) else { return (Cow::Borrowed(schema), None) };
    if let Some(leaf) = leaf
        && leaf != &Value::Bool(true)
    {
        // `false` or no schema at all: what refers to it cannot make it accept more.
        return (Cow::Borrowed(leaf), Some(last));
    }
    // Innermost first, so every referring layer's own keywords override what it refers to.
    // Layer `i`'s `$ref` was followed when `i < followed.len()`; the others stay.
    let mut merged = Map::new();
    for (index, layer) in layers.iter().enumerate().rev() {
        for (key, value) in layer.iter() {
            if key == "$ref" && index < followed.len() {
                continue;
            }
            merged.insert(key.clone(), value.clone());
        }
    }
    (Cow::Owned(Value::Object(merged)), Some(last))
}

/// An object schema as a keyword map: `true` is `{}`; `false` and non-schemas are `None`.
fn keywords(schema: &Value) -> Option<Cow<'_, Map<String, Value>>> {
    match schema {
        Value::Object(map) => Some(Cow::Borrowed(map)),
        Value::Bool(true) => Some(Cow::Owned(Map::new())),
        _ => None,
    }
}

/// The `type` keyword: absent (anything), a set of names, or something unreadable.
#[derive(Debug, PartialEq, Eq)]
enum Types {
    Any,
    Set(BTreeSet<String>),
    Unreadable,
}

impl Types {
    fn of(value: Option<&Value>) -> Types {
        match value {
            None => Types::Any,
            Some(Value::String(name)) => Types::Set(BTreeSet::from([name.clone()])),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<BTreeSet<String>>>()
                .map_or(Types::Unreadable, Types::Set),
            Some(_) => Types::Unreadable,
        }
    }
}

/// Whether every type of `inner` is accepted by `outer` ("integer" counts inside "number").
fn covers(outer: &BTreeSet<String>, inner: &BTreeSet<String>) -> bool {
    inner.iter().all(|t| outer.contains(t) || (t == "integer" && outer.contains("number")))
}

/// The required names of an object schema, sorted.
fn required_of(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn names_json(names: &BTreeSet<String>) -> String {
    compact(&Value::Array(names.iter().cloned().map(Value::String).collect()))
}

fn names_list(names: &BTreeSet<String>) -> String {
    format!("[{}]", names.iter().cloned().collect::<Vec<_>>().join(", "))
}

fn is_true(value: Option<&Value>) -> bool {
    value == Some(&Value::Bool(true))
}

/// Numeric bounds: lower bounds tighten upwards, upper bounds downwards.
const LOWER_BOUNDS: [&str; 6] =
    ["minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties", "minContains"];
const UPPER_BOUNDS: [&str; 6] =
    ["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties", "maxContains"];

/// Keywords that only inform: changing them changes no validation.
const WORDS: [&str; 3] = ["description", "title", "examples"];

/// Keywords that constrain but are not analysed one by one: added or changed is BREAKING,
/// removed is SAFE.
const OTHER_CONSTRAINTS: [&str; 16] = [
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "propertyNames",
    "prefixItems",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];

/// Paired branches `(old, new)`, then the unpaired old and new indices.
type Pairing = (Vec<(usize, usize)>, Vec<usize>, Vec<usize>);

const UNIONS: [&str; 2] = ["anyOf", "oneOf"];

struct Differ<'a, 'o> {
    old_root: &'a Value,
    new_root: &'a Value,
    side: Side,
    owner: Owner<'a>,
    /// Whether equal-looking subschemas may still differ through `$ref`s into different roots.
    refs_matter: bool,
    out: &'o mut Vec<ContractChange>,
    /// The `$ref` pairs being expanded, outermost first.
    stack: Vec<(Option<String>, Option<String>)>,
    nodes: usize,
}

impl Differ<'_, '_> {
    fn emit(
        &mut self,
        severity: ChangeSeverity,
        field: String,
        description: String,
        before: Option<String>,
        after: Option<String>,
    ) {
        let severity = match self.side {
            Side::Output if severity != Cosmetic => Risky,
            _ => severity,
        };
        self.out.push(ContractChange { severity, field, description, before, after });
    }

    /// Who the sentence is about: the action or tool itself at the root, else the field.
    fn who(&self, label: &str) -> String {
        match (self.side, label.is_empty()) {
            (Side::Input, true) => self.owner.title(),
            (Side::Input, false) => format!("{} \"{label}\"", self.owner.part_title()),
            (Side::Output, true) => format!("Output of {} \"{}\"", self.owner.kind.to_lowercase(), self.owner.name),
            (Side::Output, false) => format!("Output field \"{label}\""),
        }
    }

    /// Whether two equal subschemas are equal for the caller too.
    fn same(&self, old: &Value, new: &Value) -> bool {
        old == new && (!self.refs_matter || !has_ref(old, 0))
    }

    fn node(&mut self, old: &Value, new: &Value, path: &str, label: &str, depth: usize) {
        if self.same(old, new) || depth > MAX_DEPTH || self.nodes >= MAX_NODES {
            return;
        }
        self.nodes += 1;
        let (old_root, new_root) = (self.old_root, self.new_root);
        let (old, old_ref) = resolve(old_root, old);
        let (new, new_ref) = resolve(new_root, new);
        let guarded = old_ref.is_some() || new_ref.is_some();
        if guarded {
            let key = (old_ref, new_ref);
            if self.stack.contains(&key) {
                return;
            }
            self.stack.push(key);
        }
        self.resolved(&old, &new, path, label, depth);
        if guarded {
            self.stack.pop();
        }
    }

    fn resolved(&mut self, old: &Value, new: &Value, path: &str, label: &str, depth: usize) {
        if old == new && !has_ref(old, 0) {
            return;
        }
        match (keywords(old), keywords(new)) {
            (Some(o), Some(n)) => self.object(&o, &n, path, label, depth),
            _ if old == new => {}
            (_, None) if new == &Value::Bool(false) => {
                let text = format!("{} no longer accepts any value", self.who(label));
                self.emit(Breaking, path.to_owned(), text, Some(compact(old)), Some(compact(new)));
            }
            (None, Some(_)) if old == &Value::Bool(false) => {
                let text = format!("{} now accepts values again", self.who(label));
                self.emit(Safe, path.to_owned(), text, Some(compact(old)), Some(compact(new)));
            }
            _ => {
                let text = format!("{} schema changed", self.who(label));
                self.emit(Breaking, path.to_owned(), text, Some(compact(old)), Some(compact(new)));
            }
        }
    }

    fn object(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, label: &str, depth: usize) {
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        let mut objects_done = false;
        for key in keys {
            let key = key.as_str();
            let (ov, nv) = (o.get(key), n.get(key));
            let field = join(path, key);
            match key {
                "properties" | "required" => {
                    if !objects_done {
                        objects_done = true;
                        self.properties(o, n, path, label, depth);
                    }
                }
                "additionalProperties" => self.additional(ov, nv, &field, label, depth),
                "items" => self.items(ov, nv, &field, label, depth),
                "anyOf" | "oneOf" => self.union(key, o, n, path, label, depth),
                "allOf" => self.all_of(ov, nv, &field, label, depth),
                "definitions" | "$defs" | "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "$comment" => {}
                _ if ov == nv => {}
                "type" => self.types(ov, nv, field, label),
                "enum" => self.enums(ov, nv, field, label),
                "const" => self.constant(ov, nv, field, label),
                "multipleOf" => self.multiple_of(ov, nv, field, label),
                "pattern" | "format" => self.validation_text(key, ov, nv, field, label),
                "uniqueItems" => self.unique_items(ov, nv, field, label),
                "default" => self.default(ov, nv, field, label),
                "deprecated" => self.deprecated(ov, nv, field, label),
                _ if LOWER_BOUNDS.contains(&key) => self.bound(key, true, ov, nv, field, label),
                _ if UPPER_BOUNDS.contains(&key) => self.bound(key, false, ov, nv, field, label),
                _ if OTHER_CONSTRAINTS.contains(&key) => self.other_constraint(key, ov, nv, field, label),
                _ => {
                    let what = if WORDS.contains(&key) { key.to_owned() } else { format!("\"{key}\"") };
                    let text = format!("{} {what} changed", self.who(label));
                    self.emit(Cosmetic, field, text, ov.map(compact), nv.map(compact));
                }
            }
        }
    }

    fn types(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (before, after) = (ov.map(compact_sorted), nv.map(compact_sorted));
        let (severity, text) = match (Types::of(ov), Types::of(nv)) {
            (Types::Any, Types::Set(_)) => {
                (Breaking, format!("{who} type is now restricted to {}", after.clone().unwrap_or_default()))
            }
            (Types::Set(_), Types::Any) => {
                (Safe, format!("{who} type is no longer restricted (was {})", before.clone().unwrap_or_default()))
            }
            (Types::Set(old), Types::Set(new)) => {
                let (b, a) = (before.clone().unwrap_or_default(), after.clone().unwrap_or_default());
                match (covers(&old, &new), covers(&new, &old)) {
                    (true, true) => return,
                    (true, false) => (Breaking, format!("{who} type narrowed from {b} to {a}")),
                    (false, true) => (Safe, format!("{who} type widened from {b} to {a}")),
                    (false, false) => (Breaking, format!("{who} type changed from {b} to {a}")),
                }
            }
            (Types::Any, Types::Any) => return,
            _ => (Breaking, format!("{who} type changed")),
        };
        self.emit(severity, field, text, before, after);
    }

    fn enums(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (before, after) = (ov.map(compact_sorted), nv.map(compact_sorted));
        match (ov.map(Value::as_array), nv.map(Value::as_array)) {
            (None, Some(Some(_))) => {
                let text = format!("{who} now only accepts: {}", after.clone().unwrap_or_default());
                self.emit(Breaking, field, text, before, after);
            }
            (Some(Some(_)), None) => {
                let text = format!("{who} no longer restricts its values to a fixed list");
                self.emit(Safe, field, text, before, after);
            }
            (Some(Some(old)), Some(Some(new))) => {
                let removed: Vec<Value> = old.iter().filter(|v| !new.contains(v)).cloned().collect();
                let added: Vec<Value> = new.iter().filter(|v| !old.contains(v)).cloned().collect();
                if !removed.is_empty() {
                    let text = format!("{who} no longer accepts: {}", compact_sorted(&Value::Array(removed)));
                    self.emit(Breaking, field.clone(), text, before.clone(), after.clone());
                }
                if !added.is_empty() {
                    let text = format!("{who} now also accepts: {}", compact_sorted(&Value::Array(added)));
                    self.emit(Safe, field, text, before, after);
                }
            }
            _ => self.other_constraint("enum", ov, nv, field, label),
        }
    }

    fn constant(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (severity, text) = match (ov, nv) {
            (None, Some(new)) => (Breaking, format!("{who} must now be exactly {}", shown(new))),
            (Some(old), None) => (Safe, format!("{who} no longer has to be exactly {}", shown(old))),
            (Some(old), Some(new)) => {
                (Breaking, format!("{who} must now be exactly {} (was {})", shown(new), shown(old)))
            }
            (None, None) => return,
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    fn bound(&mut self, key: &str, lower: bool, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let number = |v: Option<&Value>| v.map(Value::as_f64);
        let (before, after) = (ov.map(compact), nv.map(compact));
        let (b, a) = (before.clone().unwrap_or_default(), after.clone().unwrap_or_default());
        let (severity, text) = match (number(ov), number(nv)) {
            (None, Some(Some(_))) => (Breaking, format!("{who} now has {key} {a}")),
            (Some(Some(_)), None) => (Safe, format!("{who} no longer has {key} (was {b})")),
            (Some(Some(old)), Some(Some(new))) => {
                if old == new {
                    return;
                }
                let raised = new > old;
                let verb = if raised { "raised" } else { "lowered" };
                let severity = if raised == lower { Breaking } else { Safe };
                (severity, format!("{who} {key} {verb} from {b} to {a}"))
            }
            _ => return self.other_constraint(key, ov, nv, field, label),
        };
        self.emit(severity, field, text, before, after);
    }

    fn multiple_of(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (before, after) = (ov.map(compact), nv.map(compact));
        let (b, a) = (before.clone().unwrap_or_default(), after.clone().unwrap_or_default());
        let (severity, text) = match (ov.map(Value::as_f64), nv.map(Value::as_f64)) {
            (None, Some(Some(_))) => (Breaking, format!("{who} must now be a multiple of {a}")),
            (Some(Some(_)), None) => (Safe, format!("{who} no longer has to be a multiple of {b}")),
            (Some(Some(old)), Some(Some(new))) => {
                if old == new {
                    return;
                }
                // Every multiple of the old step is a multiple of a new step that divides it.
                let ratio = old / new;
                let divides =
                    new != 0.0 && ratio.is_finite() && ratio >= 1.0 && (ratio - ratio.round()).abs() < 1e-9 * ratio;
                if divides {
                    (Safe, format!("{who} must now be a multiple of {a} (was {b}, every old value still fits)"))
                } else {
                    (Breaking, format!("{who} must now be a multiple of {a} (was {b})"))
                }
            }
            _ => return self.other_constraint("multipleOf", ov, nv, field, label),
        };
        self.emit(severity, field, text, before, after);
    }

    /// `pattern` and `format`: added or changed is BREAKING, removed RISKY (the server stops
    /// validating what callers may rely on it validating).
    fn validation_text(&mut self, key: &str, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (severity, text) = match (key, ov, nv) {
            ("pattern", None, Some(new)) => (Breaking, format!("{who} must now match the pattern {}", shown(new))),
            ("pattern", Some(old), Some(new)) => {
                (Breaking, format!("{who} pattern changed from {} to {}", shown(old), shown(new)))
            }
            ("pattern", Some(old), None) => {
                (Risky, format!("{who} is no longer validated against the pattern {}", shown(old)))
            }
            (_, None, Some(new)) => (Breaking, format!("{who} must now be in format {}", shown(new))),
            (_, Some(old), Some(new)) => {
                (Breaking, format!("{who} format changed from {} to {}", shown(old), shown(new)))
            }
            (_, Some(old), None) => (Risky, format!("{who} is no longer validated as format {}", shown(old))),
            (_, None, None) => return,
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    fn unique_items(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let readable = |v: Option<&Value>| v.is_none_or(Value::is_boolean);
        if !readable(ov) || !readable(nv) {
            return self.other_constraint("uniqueItems", ov, nv, field, label);
        }
        let (severity, text) = match (is_true(ov), is_true(nv)) {
            (false, true) => (Breaking, format!("{who} items must now be unique")),
            (true, false) => (Safe, format!("{who} items no longer have to be unique")),
            _ => return,
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    fn default(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (severity, text) = match (ov, nv) {
            (None, Some(new)) => (Safe, format!("{who} now defaults to {}", shown(new))),
            (Some(old), None) => (Risky, format!("{who} no longer has a default (was {})", shown(old))),
            (Some(old), Some(new)) => (Risky, format!("{who} default changed from {} to {}", shown(old), shown(new))),
            (None, None) => return,
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    fn deprecated(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (severity, text) = match (is_true(ov), is_true(nv)) {
            (false, true) => (Risky, format!("{who} is now deprecated")),
            (true, false) => (Safe, format!("{who} is no longer deprecated")),
            _ => (Cosmetic, format!("{who} deprecated changed")),
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    /// A constraint keyword not analysed in detail: added or changed BREAKING, removed SAFE.
    fn other_constraint(&mut self, key: &str, ov: Option<&Value>, nv: Option<&Value>, field: String, label: &str) {
        let who = self.who(label);
        let (severity, text) = match (ov, nv) {
            (None, Some(_)) => (Breaking, format!("{who} gained the constraint \"{key}\"")),
            (Some(_), None) => (Safe, format!("{who} no longer has the constraint \"{key}\"")),
            (Some(_), Some(_)) => (Breaking, format!("{who} constraint \"{key}\" changed")),
            (None, None) => return,
        };
        self.emit(severity, field, text, ov.map(compact), nv.map(compact));
    }

    /// `properties` and `required`, together: a new required property is told once, on
    /// `required`; a removed property once, on `properties.{name}`.
    fn properties(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str, label: &str, depth: usize) {
        let (op, np) = (o.get("properties"), n.get("properties"));
        let readable = |v: Option<&Value>| v.is_none_or(Value::is_object);
        let empty = Map::new();
        let (op, np) = if readable(op) && readable(np) {
            (op.and_then(Value::as_object).unwrap_or(&empty), np.and_then(Value::as_object).unwrap_or(&empty))
        } else {
            if op != np {
                self.other_constraint("properties", op, np, join(path, "properties"), label);
            }
            (&empty, &empty)
        };
        let (or, nr) = (required_of(o), required_of(n));
        let newly_required: BTreeSet<String> = nr.difference(&or).cloned().collect();
        let removed: BTreeSet<&String> = op.keys().filter(|k| !np.contains_key(*k)).collect();
        let no_longer_required: BTreeSet<String> =
            or.difference(&nr).filter(|name| !removed.contains(name)).cloned().collect();
        let base = join(path, "properties");

        let names: BTreeSet<&String> = op.keys().chain(np.keys()).collect();
        for name in names {
            let field = join(&base, name);
            let child = child_label(label, name);
            match (op.get(name), np.get(name)) {
                (Some(old), None) => {
                    let text = format!("{} was removed", self.who(&child));
                    self.emit(Breaking, field, text, Some(compact(old)), None);
                }
                (None, Some(new)) => {
                    let (severity, text) = match self.side {
                        Side::Output => (Safe, format!("{} was added", self.who(&child))),
                        Side::Input if newly_required.contains(name) => continue,
                        Side::Input if nr.contains(name) => {
                            (Breaking, format!("Required {} \"{child}\" was added", self.owner.part))
                        }
                        Side::Input => (Safe, format!("Optional {} \"{child}\" was added", self.owner.part)),
                    };
                    self.emit(severity, field, text, None, Some(compact(new)));
                }
                (Some(old), Some(new)) => self.node(old, new, &field, &child, depth + 1),
                (None, None) => {}
            }
        }

        let field = join(path, "required");
        let present =
            |m: &Map<String, Value>, names: &BTreeSet<String>| m.contains_key("required").then(|| names_json(names));
        let (before, after) = (present(o, &or), present(n, &nr));
        let who = self.who(label);
        if !newly_required.is_empty() {
            let text = match self.side {
                Side::Input => format!("{who} now requires new {}s: {}", self.owner.part, names_list(&newly_required)),
                Side::Output => format!("{who} now always includes: {}", names_list(&newly_required)),
            };
            self.emit(Breaking, field.clone(), text, before.clone(), after.clone());
        }
        if !no_longer_required.is_empty() {
            let text = match self.side {
                Side::Input => format!("{who} no longer requires: {}", names_list(&no_longer_required)),
                Side::Output => format!("{who} no longer always includes: {}", names_list(&no_longer_required)),
            };
            self.emit(Safe, field, text, before, after);
        }
        let unreadable = |v: Option<&Value>| v.is_some_and(|v| !v.is_array());
        if (unreadable(o.get("required")) || unreadable(n.get("required"))) && o.get("required") != n.get("required") {
            self.other_constraint("required", o.get("required"), n.get("required"), join(path, "required"), label);
        }
    }

    fn additional(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str, label: &str, depth: usize) {
        #[derive(PartialEq)]
        enum Extra {
            Open,
            Closed,
            Schema,
            Unreadable,
        }
        let kind = |v: Option<&Value>| match v {
            None | Some(Value::Bool(true)) => Extra::Open,
            Some(Value::Bool(false)) => Extra::Closed,
            Some(Value::Object(_)) => Extra::Schema,
            Some(_) => Extra::Unreadable,
        };
        let who = self.who(label);
        match (kind(ov), kind(nv)) {
            (Extra::Open, Extra::Open) | (Extra::Closed, Extra::Closed) => {}
            (Extra::Open | Extra::Schema, Extra::Closed) => {
                let text = format!("{who} no longer accepts unknown {}s", self.owner.part);
                self.emit(Breaking, field.to_owned(), text, ov.map(compact), nv.map(compact));
            }
            (Extra::Closed, Extra::Open | Extra::Schema) => {
                let text = format!("{who} now accepts unknown {}s", self.owner.part);
                self.emit(Risky, field.to_owned(), text, ov.map(compact), nv.map(compact));
            }
            (Extra::Open | Extra::Schema, Extra::Open | Extra::Schema) => {
                let child = if label.is_empty() { "*".to_owned() } else { format!("{label}.*") };
                self.node(ov.unwrap_or(&ANY), nv.unwrap_or(&ANY), field, &child, depth + 1);
            }
            _ => {
                if ov != nv {
                    self.other_constraint("additionalProperties", ov, nv, field.to_owned(), label);
                }
            }
        }
    }

    fn items(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str, label: &str, depth: usize) {
        let schema = |v: Option<&Value>| v.is_none_or(|v| v.is_object() || v.is_boolean());
        if schema(ov) && schema(nv) {
            let child = format!("{label}[]");
            self.node(ov.unwrap_or(&ANY), nv.unwrap_or(&ANY), field, &child, depth + 1);
        } else if ov != nv {
            self.other_constraint("items", ov, nv, field.to_owned(), label);
        }
    }

    /// `anyOf` / `oneOf`: branches paired up (equal ones first, then ones of the same kind,
    /// then in order) and compared; a branch removed is BREAKING, a branch added SAFE. A
    /// schema without the keyword counts as a union of itself.
    fn union(
        &mut self,
        key: &str,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        path: &str,
        label: &str,
        depth: usize,
    ) {
        let (ov, nv) = (o.get(key), n.get(key));
        let field = join(path, key);
        let readable = |v: Option<&Value>| v.is_none_or(Value::is_array);
        if !readable(ov) || !readable(nv) {
            if ov != nv {
                self.other_constraint(key, ov, nv, field, label);
            }
            return;
        }
        let itself = |m: &Map<String, Value>| {
            if UNIONS.iter().any(|u| m.contains_key(*u)) {
                return Vec::new();
            }
            let mut branch = m.clone();
            for word in WORDS.iter().chain(["default", "$defs", "definitions", "deprecated"].iter()) {
                branch.shift_remove(*word);
            }
            vec![Value::Object(branch)]
        };
        let (old_real, new_real) = (ov.is_some(), nv.is_some());
        let old = ov.and_then(Value::as_array).cloned().unwrap_or_else(|| itself(o));
        let new = nv.and_then(Value::as_array).cloned().unwrap_or_else(|| itself(n));
        let (pairs, removed, added) = self.pair(&old, &new);
        for (i, j) in pairs {
            let index = if new_real { j } else { i };
            self.node(&old[i], &new[j], &join(&field, &index.to_string()), label, depth + 1);
        }
        let who = self.who(label);
        for i in removed {
            let index = if old_real { i } else { 0 };
            let text = format!("{who} no longer accepts the alternative {}", compact(&old[i]));
            self.emit(Breaking, join(&field, &index.to_string()), text, Some(compact(&old[i])), None);
        }
        for j in added {
            let index = if new_real { j } else { 0 };
            let text = format!("{who} now also accepts the alternative {}", compact(&new[j]));
            self.emit(Safe, join(&field, &index.to_string()), text, None, Some(compact(&new[j])));
        }
    }

    /// `allOf`: every branch must hold, so a branch added is BREAKING and one removed SAFE.
    fn all_of(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str, label: &str, depth: usize) {
        let readable = |v: Option<&Value>| v.is_none_or(Value::is_array);
        if !readable(ov) || !readable(nv) {
            if ov != nv {
                self.other_constraint("allOf", ov, nv, field.to_owned(), label);
            }
            return;
        }
        let old = ov.and_then(Value::as_array).cloned().unwrap_or_default();
        let new = nv.and_then(Value::as_array).cloned().unwrap_or_default();
        let (pairs, removed, added) = self.pair(&old, &new);
        for (i, j) in pairs {
            self.node(&old[i], &new[j], &join(field, &j.to_string()), label, depth + 1);
        }
        let who = self.who(label);
        for i in removed {
            let text = format!("{who} no longer has to match {}", compact(&old[i]));
            self.emit(Safe, join(field, &i.to_string()), text, Some(compact(&old[i])), None);
        }
        for j in added {
            let text = format!("{who} must now also match {}", compact(&new[j]));
            self.emit(Breaking, join(field, &j.to_string()), text, None, Some(compact(&new[j])));
        }
    }

    /// Pairs old and new branches: equal ones, then ones of the same kind (type, const,
    /// format, reference), then the rest in order. Returns the pairs, the unpaired old
    /// indices and the unpaired new indices.
    fn pair(&self, old: &[Value], new: &[Value]) -> Pairing {
        let mut old_left: Vec<usize> = (0..old.len()).collect();
        let mut new_left: Vec<usize> = (0..new.len()).collect();
        let mut pairs = Vec::new();
        let kind = |root: &Value, branch: &Value| {
            let (resolved, reference) = resolve(root, branch);
            let get = |k: &str| resolved.get(k).map(compact_sorted).unwrap_or_default();
            format!("{}|{}|{}|{}", get("type"), get("const"), get("format"), reference.unwrap_or_default())
        };
        let old_kinds: Vec<String> = old.iter().map(|b| kind(self.old_root, b)).collect();
        let new_kinds: Vec<String> = new.iter().map(|b| kind(self.new_root, b)).collect();
        let rounds: [&dyn Fn(usize, usize) -> bool; 3] = [
            &|i, j| old[i] == new[j] && old_kinds[i] == new_kinds[j],
            &|i, j| old_kinds[i] == new_kinds[j],
            &|_, _| true,
        ];
        for matches in rounds {
            let mut i = 0;
            while i < old_left.len() {
                let a = old_left[i];
                if let Some(pos) = new_left.iter().position(|&b| matches(a, b)) {
                    pairs.push((a, new_left.remove(pos)));
                    old_left.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        pairs.sort_unstable();
        (pairs, old_left, new_left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::check;
    use serde_json::json;

    fn diff(side: Side, old: &Value, new: &Value) -> Vec<ContractChange> {
        let mut out = Vec::new();
        let prefix = if side == Side::Input { "inputSchema" } else { "outputSchema" };
        diff_schema(old, new, side, Owner::with_fields("Tool", "t"), prefix, &mut out);
        out
    }

    fn input(old: Value, new: Value) -> Vec<ContractChange> {
        diff(Side::Input, &old, &new)
    }

    /// The one change between two input schemas.
    fn one(old: Value, new: Value) -> ContractChange {
        let out = input(old, new);
        assert_eq!(out.len(), 1, "{out:#?}");
        out.into_iter().next().unwrap()
    }

    /// An object schema with one property.
    fn prop(name: &str, schema: Value) -> Value {
        json!({ "type": "object", "properties": { name: schema } })
    }

    #[test]
    fn identical_schemas_have_no_changes() {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}, "required": ["a"]});
        assert!(input(schema.clone(), schema).is_empty());
        let with_refs = json!({"$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}});
        assert!(input(with_refs.clone(), with_refs).is_empty());
    }

    #[test]
    fn property_removed_is_breaking() {
        let c = one(prop("a", json!({"type": "string"})), json!({"type": "object", "properties": {}}));
        check(&c, Breaking, "inputSchema.properties.a", Some(r#"{"type":"string"}"#), None);
        assert_eq!(c.description, r#"Field "a" was removed"#);
    }

    #[test]
    fn removed_required_property_is_told_once() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}, "required": ["a", "b"]});
        let new = json!({"type": "object", "properties": {"b": {}}, "required": ["b"]});
        let c = one(old, new);
        check(&c, Breaking, "inputSchema.properties.a", Some(r#"{"type":"string"}"#), None);
    }

    #[test]
    fn optional_property_added_is_safe() {
        let c = one(json!({"type": "object", "properties": {}}), prop("note", json!({"type": "string"})));
        check(&c, Safe, "inputSchema.properties.note", None, Some(r#"{"type":"string"}"#));
        assert_eq!(c.description, r#"Optional field "note" was added"#);
    }

    #[test]
    fn required_property_added_is_breaking_on_required() {
        let old = json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
        let new = json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "customer_id": {"type": "string"}},
            "required": ["id", "customer_id"],
        });
        let c = one(old, new);
        check(&c, Breaking, "inputSchema.required", Some(r#"["id"]"#), Some(r#"["customer_id","id"]"#));
        assert_eq!(c.description, r#"Tool "t" now requires new fields: [customer_id]"#);
    }

    #[test]
    fn property_added_already_listed_as_required_is_breaking() {
        let old = json!({"type": "object", "properties": {}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let c = one(old, new);
        check(&c, Breaking, "inputSchema.properties.a", None, Some(r#"{"type":"string"}"#));
    }

    #[test]
    fn existing_field_made_required_is_breaking() {
        let props = json!({"a": {}, "b": {}, "c": {}});
        let old = json!({"properties": props, "required": ["a"]});
        let new = json!({"properties": props, "required": ["c", "a", "b"]});
        let c = one(old, new);
        check(&c, Breaking, "inputSchema.required", Some(r#"["a"]"#), Some(r#"["a","b","c"]"#));
        assert_eq!(c.description, r#"Tool "t" now requires new fields: [b, c]"#);
        // From no `required` at all: before is absent.
        let c = one(json!({"properties": props}), json!({"properties": props, "required": ["a"]}));
        check(&c, Breaking, "inputSchema.required", None, Some(r#"["a"]"#));
    }

    #[test]
    fn field_no_longer_required_is_safe() {
        let props = json!({"a": {}, "b": {}});
        let c =
            one(json!({"properties": props, "required": ["b", "a"]}), json!({"properties": props, "required": ["a"]}));
        check(&c, Safe, "inputSchema.required", Some(r#"["a","b"]"#), Some(r#"["a"]"#));
        assert_eq!(c.description, r#"Tool "t" no longer requires: [b]"#);
    }

    #[test]
    fn type_narrowed_is_breaking() {
        let c = one(prop("n", json!({"type": "number"})), prop("n", json!({"type": "integer"})));
        check(&c, Breaking, "inputSchema.properties.n.type", Some(r#""number""#), Some(r#""integer""#));
        assert_eq!(c.description, r#"Field "n" type narrowed from "number" to "integer""#);
        let c = one(prop("n", json!({"type": ["string", "null"]})), prop("n", json!({"type": "string"})));
        check(&c, Breaking, "inputSchema.properties.n.type", Some(r#"["null","string"]"#), Some(r#""string""#));
        let c = one(prop("n", json!({})), prop("n", json!({"type": "string"})));
        check(&c, Breaking, "inputSchema.properties.n.type", None, Some(r#""string""#));
    }

    #[test]
    fn type_changed_is_breaking() {
        let c = one(prop("n", json!({"type": "string"})), prop("n", json!({"type": "integer"})));
        check(&c, Breaking, "inputSchema.properties.n.type", Some(r#""string""#), Some(r#""integer""#));
        assert!(c.description.contains("changed from"), "{}", c.description);
    }

    #[test]
    fn type_widened_is_safe() {
        let c = one(prop("n", json!({"type": "integer"})), prop("n", json!({"type": "number"})));
        check(&c, Safe, "inputSchema.properties.n.type", Some(r#""integer""#), Some(r#""number""#));
        let c = one(prop("n", json!({"type": "string"})), prop("n", json!({"type": ["string", "null"]})));
        check(&c, Safe, "inputSchema.properties.n.type", Some(r#""string""#), Some(r#"["null","string"]"#));
        let c = one(prop("n", json!({"type": "string"})), prop("n", json!({})));
        check(&c, Safe, "inputSchema.properties.n.type", Some(r#""string""#), None);
        // Same set written differently: nothing to tell.
        assert!(input(prop("n", json!({"type": ["string"]})), prop("n", json!({"type": "string"}))).is_empty());
    }

    #[test]
    fn enum_value_removed_is_breaking() {
        let old = prop("currency", json!({"type": "string", "enum": ["USD", "BRL", "EUR"]}));
        let new = prop("currency", json!({"type": "string", "enum": ["USD", "EUR"]}));
        let c = one(old, new);
        check(
            &c,
            Breaking,
            "inputSchema.properties.currency.enum",
            Some(r#"["BRL","EUR","USD"]"#),
            Some(r#"["EUR","USD"]"#),
        );
        assert_eq!(c.description, r#"Field "currency" no longer accepts: ["BRL"]"#);
    }

    #[test]
    fn enum_value_added_is_safe() {
        let c = one(prop("c", json!({"enum": ["USD"]})), prop("c", json!({"enum": ["USD", "JPY"]})));
        check(&c, Safe, "inputSchema.properties.c.enum", Some(r#"["USD"]"#), Some(r#"["JPY","USD"]"#));
        assert_eq!(c.description, r#"Field "c" now also accepts: ["JPY"]"#);
    }

    #[test]
    fn enum_value_swapped_is_both() {
        let out = input(prop("c", json!({"enum": ["A", "B"]})), prop("c", json!({"enum": ["B", "C"]})));
        assert_eq!(out.len(), 2, "{out:#?}");
        check(&out[0], Breaking, "inputSchema.properties.c.enum", Some(r#"["A","B"]"#), Some(r#"["B","C"]"#));
        check(&out[1], Safe, "inputSchema.properties.c.enum", Some(r#"["A","B"]"#), Some(r#"["B","C"]"#));
    }

    #[test]
    fn enum_added_is_breaking_and_dropped_is_safe() {
        let c = one(prop("c", json!({"type": "string"})), prop("c", json!({"type": "string", "enum": ["b", "a"]})));
        check(&c, Breaking, "inputSchema.properties.c.enum", None, Some(r#"["a","b"]"#));
        let c = one(prop("c", json!({"type": "string", "enum": ["a"]})), prop("c", json!({"type": "string"})));
        check(&c, Safe, "inputSchema.properties.c.enum", Some(r#"["a"]"#), None);
    }

    #[test]
    fn const_changed_is_breaking() {
        let c = one(prop("k", json!({"const": "a"})), prop("k", json!({"const": "b"})));
        check(&c, Breaking, "inputSchema.properties.k.const", Some(r#""a""#), Some(r#""b""#));
        let c = one(prop("k", json!({})), prop("k", json!({"const": 1})));
        check(&c, Breaking, "inputSchema.properties.k.const", None, Some("1"));
        let c = one(prop("k", json!({"const": 1})), prop("k", json!({})));
        check(&c, Safe, "inputSchema.properties.k.const", Some("1"), None);
    }

    #[test]
    fn lower_bounds_raised_or_added_are_breaking_lowered_or_removed_safe() {
        for key in LOWER_BOUNDS {
            let field = format!("inputSchema.properties.v.{key}");
            let c = one(prop("v", json!({ key: 1 })), prop("v", json!({ key: 3 })));
            check(&c, Breaking, &field, Some("1"), Some("3"));
            let c = one(prop("v", json!({})), prop("v", json!({ key: 3 })));
            check(&c, Breaking, &field, None, Some("3"));
            let c = one(prop("v", json!({ key: 3 })), prop("v", json!({ key: 1 })));
            check(&c, Safe, &field, Some("3"), Some("1"));
            let c = one(prop("v", json!({ key: 3 })), prop("v", json!({})));
            check(&c, Safe, &field, Some("3"), None);
        }
        let c = one(prop("name", json!({"minLength": 1})), prop("name", json!({"minLength": 3})));
        assert_eq!(c.description, r#"Field "name" minLength raised from 1 to 3"#);
        // The same number written differently is the same bound.
        assert!(input(prop("v", json!({"minimum": 1})), prop("v", json!({"minimum": 1.0}))).is_empty());
    }

    #[test]
    fn upper_bounds_lowered_or_added_are_breaking_raised_or_removed_safe() {
        for key in UPPER_BOUNDS {
            let field = format!("inputSchema.properties.v.{key}");
            let c = one(prop("v", json!({ key: 10 })), prop("v", json!({ key: 5 })));
            check(&c, Breaking, &field, Some("10"), Some("5"));
            let c = one(prop("v", json!({})), prop("v", json!({ key: 5 })));
            check(&c, Breaking, &field, None, Some("5"));
            let c = one(prop("v", json!({ key: 5 })), prop("v", json!({ key: 10.5 })));
            check(&c, Safe, &field, Some("5"), Some("10.5"));
            let c = one(prop("v", json!({ key: 5 })), prop("v", json!({})));
            check(&c, Safe, &field, Some("5"), None);
        }
    }

    #[test]
    fn multiple_of_added_or_changed_is_breaking() {
        let c = one(prop("q", json!({})), prop("q", json!({"multipleOf": 5})));
        check(&c, Breaking, "inputSchema.properties.q.multipleOf", None, Some("5"));
        let c = one(prop("q", json!({"multipleOf": 2})), prop("q", json!({"multipleOf": 3})));
        check(&c, Breaking, "inputSchema.properties.q.multipleOf", Some("2"), Some("3"));
        let c = one(prop("q", json!({"multipleOf": 2})), prop("q", json!({})));
        check(&c, Safe, "inputSchema.properties.q.multipleOf", Some("2"), None);
        // A step that divides the old one accepts every old value.
        let c = one(prop("q", json!({"multipleOf": 0.01})), prop("q", json!({"multipleOf": 0.001})));
        check(&c, Safe, "inputSchema.properties.q.multipleOf", Some("0.01"), Some("0.001"));
    }

    #[test]
    fn pattern_added_or_changed_is_breaking_removed_risky() {
        let field = "inputSchema.properties.code.pattern";
        let c = one(
            prop("code", json!({"type": "string"})),
            prop("code", json!({"type": "string", "pattern": "^[A-Z]{3}$"})),
        );
        check(&c, Breaking, field, None, Some(r#""^[A-Z]{3}$""#));
        assert_eq!(c.description, r#"Field "code" must now match the pattern "^[A-Z]{3}$""#);
        let c = one(prop("code", json!({"pattern": "^a"})), prop("code", json!({"pattern": "^b"})));
        check(&c, Breaking, field, Some(r#""^a""#), Some(r#""^b""#));
        let c = one(prop("code", json!({"pattern": "^a"})), prop("code", json!({})));
        check(&c, Risky, field, Some(r#""^a""#), None);
    }

    #[test]
    fn format_added_or_changed_is_breaking_removed_risky() {
        let field = "inputSchema.properties.mail.format";
        let c =
            one(prop("mail", json!({"type": "string"})), prop("mail", json!({"type": "string", "format": "email"})));
        check(&c, Breaking, field, None, Some(r#""email""#));
        let c = one(prop("mail", json!({"format": "email"})), prop("mail", json!({"format": "uri"})));
        check(&c, Breaking, field, Some(r#""email""#), Some(r#""uri""#));
        let c = one(prop("mail", json!({"format": "email"})), prop("mail", json!({})));
        check(&c, Risky, field, Some(r#""email""#), None);
        assert_eq!(c.description, r#"Field "mail" is no longer validated as format "email""#);
    }

    #[test]
    fn additional_properties_closed_is_breaking_opened_risky() {
        let open = json!({"type": "object", "properties": {}});
        let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let explicit = json!({"type": "object", "properties": {}, "additionalProperties": true});
        let c = one(open.clone(), closed.clone());
        check(&c, Breaking, "inputSchema.additionalProperties", None, Some("false"));
        assert_eq!(c.description, r#"Tool "t" no longer accepts unknown fields"#);
        let c = one(explicit.clone(), closed.clone());
        check(&c, Breaking, "inputSchema.additionalProperties", Some("true"), Some("false"));
        let c = one(closed.clone(), open.clone());
        check(&c, Risky, "inputSchema.additionalProperties", Some("false"), None);
        let c = one(closed, explicit.clone());
        check(&c, Risky, "inputSchema.additionalProperties", Some("false"), Some("true"));
        assert!(input(open, explicit).is_empty());
    }

    #[test]
    fn additional_properties_schema_is_compared() {
        let old = json!({"type": "object", "additionalProperties": {"type": "number"}});
        let new = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        let c = one(old.clone(), new);
        check(&c, Breaking, "inputSchema.additionalProperties.type", Some(r#""number""#), Some(r#""integer""#));
        assert_eq!(c.description, r#"Field "*" type narrowed from "number" to "integer""#);
        // From open to a typed schema: narrowed.
        let c = one(json!({"type": "object"}), old);
        check(&c, Breaking, "inputSchema.additionalProperties.type", None, Some(r#""number""#));
    }

    #[test]
    fn unique_items_added_is_breaking_removed_safe() {
        let c =
            one(prop("tags", json!({"type": "array"})), prop("tags", json!({"type": "array", "uniqueItems": true})));
        check(&c, Breaking, "inputSchema.properties.tags.uniqueItems", None, Some("true"));
        let c = one(prop("tags", json!({"uniqueItems": true})), prop("tags", json!({"uniqueItems": false})));
        check(&c, Safe, "inputSchema.properties.tags.uniqueItems", Some("true"), Some("false"));
        assert!(input(prop("tags", json!({})), prop("tags", json!({"uniqueItems": false}))).is_empty());
    }

    #[test]
    fn default_changed_or_removed_is_risky_added_safe() {
        let field = "inputSchema.properties.limit.default";
        let c = one(prop("limit", json!({"default": 10})), prop("limit", json!({"default": 50})));
        check(&c, Risky, field, Some("10"), Some("50"));
        assert_eq!(c.description, r#"Field "limit" default changed from 10 to 50"#);
        let c = one(prop("limit", json!({"default": 10})), prop("limit", json!({})));
        check(&c, Risky, field, Some("10"), None);
        let c = one(prop("limit", json!({})), prop("limit", json!({"default": 10})));
        check(&c, Safe, field, None, Some("10"));
    }

    #[test]
    fn words_are_cosmetic() {
        for key in ["description", "title", "examples"] {
            let c =
                one(prop("a", json!({"type": "string", key: "old"})), prop("a", json!({"type": "string", key: "new"})));
            check(&c, Cosmetic, &format!("inputSchema.properties.a.{key}"), Some(r#""old""#), Some(r#""new""#));
        }
        let c = one(json!({"description": "x"}), json!({}));
        check(&c, Cosmetic, "inputSchema.description", Some(r#""x""#), None);
        // Keywords no validator reads are cosmetic too.
        let c = one(prop("a", json!({"x-ui": 1})), prop("a", json!({"x-ui": 2})));
        check(&c, Cosmetic, "inputSchema.properties.a.x-ui", Some("1"), Some("2"));
    }

    #[test]
    fn deprecation_is_risky() {
        let c = one(prop("a", json!({})), prop("a", json!({"deprecated": true})));
        check(&c, Risky, "inputSchema.properties.a.deprecated", None, Some("true"));
        let c = one(prop("a", json!({"deprecated": true})), prop("a", json!({})));
        check(&c, Safe, "inputSchema.properties.a.deprecated", Some("true"), None);
    }

    #[test]
    fn other_constraints_added_are_breaking_removed_safe() {
        let c = one(prop("a", json!({})), prop("a", json!({"not": {"const": 0}})));
        check(&c, Breaking, "inputSchema.properties.a.not", None, Some(r#"{"const":0}"#));
        let c = one(prop("a", json!({"not": {"const": 0}})), prop("a", json!({"not": {"const": 1}})));
        check(&c, Breaking, "inputSchema.properties.a.not", Some(r#"{"const":0}"#), Some(r#"{"const":1}"#));
        let c = one(prop("a", json!({"dependentRequired": {"x": ["y"]}})), prop("a", json!({})));
        check(&c, Safe, "inputSchema.properties.a.dependentRequired", Some(r#"{"x":["y"]}"#), None);
    }

    #[test]
    fn nested_objects_are_compared_field_by_field() {
        let old = prop(
            "address",
            json!({
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["street"],
            }),
        );
        let new = prop(
            "address",
            json!({
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string", "minLength": 5}},
                "required": ["street", "zip"],
            }),
        );
        let out = input(old, new);
        assert_eq!(out.len(), 2, "{out:#?}");
        let zip = out.iter().find(|c| c.field.ends_with("minLength")).unwrap();
        check(zip, Breaking, "inputSchema.properties.address.properties.zip.minLength", None, Some("5"));
        assert_eq!(zip.description, r#"Field "address.zip" now has minLength 5"#);
        let req = out.iter().find(|c| c.field.ends_with("required")).unwrap();
        check(
            req,
            Breaking,
            "inputSchema.properties.address.required",
            Some(r#"["street"]"#),
            Some(r#"["street","zip"]"#),
        );
        assert_eq!(req.description, r#"Field "address" now requires new fields: [zip]"#);
    }

    #[test]
    fn array_items_are_compared() {
        let line = |qty: Value, sku: Value| {
            prop(
                "lines",
                json!({
                    "type": "array",
                    "items": {"type": "object", "properties": {"sku": sku, "qty": qty}},
                }),
            )
        };
        let old = line(json!({"type": "integer"}), json!({"type": "string", "enum": ["a", "b"]}));
        let new = line(json!({"type": "integer", "maximum": 99}), json!({"type": "string", "enum": ["a"]}));
        let out = input(old, new);
        assert_eq!(out.len(), 2, "{out:#?}");
        check(&out[0], Breaking, "inputSchema.properties.lines.items.properties.qty.maximum", None, Some("99"));
        check(
            &out[1],
            Breaking,
            "inputSchema.properties.lines.items.properties.sku.enum",
            Some(r#"["a","b"]"#),
            Some(r#"["a"]"#),
        );
        assert_eq!(out[1].description, r#"Field "lines[].sku" no longer accepts: ["b"]"#);
        // Items constrained where they were not: narrowed.
        let c =
            one(prop("l", json!({"type": "array"})), prop("l", json!({"type": "array", "items": {"type": "string"}})));
        check(&c, Breaking, "inputSchema.properties.l.items.type", None, Some(r#""string""#));
    }

    #[test]
    fn local_refs_are_resolved() {
        let old = json!({
            "type": "object",
            "$defs": {"Money": {"type": "object", "properties": {"currency": {"enum": ["USD", "BRL"]}}}},
            "properties": {"price": {"$ref": "#/$defs/Money"}},
        });
        // Inlined now, one currency fewer.
        let new = prop("price", json!({"type": "object", "properties": {"currency": {"enum": ["USD"]}}}));
        let c = one(old.clone(), new);
        check(
            &c,
            Breaking,
            "inputSchema.properties.price.properties.currency.enum",
            Some(r#"["BRL","USD"]"#),
            Some(r#"["USD"]"#),
        );
        // Same `$ref` text on both sides, different definitions: still seen.
        let mut changed = old.clone();
        changed["$defs"]["Money"]["properties"]["currency"]["enum"] = json!(["USD", "BRL", "EUR"]);
        let c = one(old.clone(), changed);
        check(
            &c,
            Safe,
            "inputSchema.properties.price.properties.currency.enum",
            Some(r#"["BRL","USD"]"#),
            Some(r#"["BRL","EUR","USD"]"#),
        );
        // `definitions` (draft 7) and keywords next to the `$ref` count too.
        let draft7 = json!({
            "definitions": {"Money": {"type": "object", "properties": {"currency": {"enum": ["USD", "BRL"]}}}},
            "type": "object",
            "properties": {"price": {"$ref": "#/definitions/Money", "description": "d"}},
        });
        let inlined = prop(
            "price",
            json!({"type": "object", "properties": {"currency": {"enum": ["USD", "BRL"]}}, "description": "d"}),
        );
        assert!(input(draft7.clone(), inlined.clone()).is_empty(), "{:#?}", input(draft7, inlined));
    }

    #[test]
    fn cyclic_refs_stop() {
        let tree = |value: &str| {
            json!({
                "$ref": "#/$defs/Node",
                "$defs": {"Node": {
                    "type": "object",
                    "properties": {"value": {"type": value}, "next": {"$ref": "#/$defs/Node"}},
                }},
            })
        };
        let c = one(tree("number"), tree("integer"));
        check(&c, Breaking, "inputSchema.properties.value.type", Some(r#""number""#), Some(r#""integer""#));
        assert!(input(tree("string"), tree("string")).is_empty());
        // Cyclic against inlined, and references that lead nowhere but back.
        let inlined = prop("next", prop("next", json!({"type": "object"})));
        let _ = input(tree("string"), inlined.clone());
        let _ = input(inlined, tree("string"));
        let selfish = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}});
        let pingpong = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        let root = json!({"properties": {"me": {"$ref": "#"}}, "type": "object"});
        let rooted = json!({"properties": {"me": {"$ref": "#"}}, "type": "object", "minProperties": 1});
        for (a, b) in [(&selfish, &pingpong), (&pingpong, &selfish), (&root, &rooted), (&selfish, &root)] {
            let _ = input(a.clone(), b.clone());
        }
        let out = input(root, rooted);
        assert!(out.iter().any(|c| c.field == "inputSchema.minProperties"), "{out:#?}");
    }

    #[test]
    fn any_of_branches_are_paired() {
        let union = |branches: Value| prop("id", json!({ "anyOf": branches }));
        let old = union(json!([{"type": "string"}, {"type": "integer"}]));
        let c = one(old.clone(), union(json!([{"type": "string"}])));
        check(&c, Breaking, "inputSchema.properties.id.anyOf.1", Some(r#"{"type":"integer"}"#), None);
        assert_eq!(c.description, r#"Field "id" no longer accepts the alternative {"type":"integer"}"#);
        let c = one(old.clone(), union(json!([{"type": "boolean"}, {"type": "string"}, {"type": "integer"}])));
        check(&c, Safe, "inputSchema.properties.id.anyOf.0", None, Some(r#"{"type":"boolean"}"#));
        // A branch changed in place is compared inside.
        let c = one(old, union(json!([{"type": "string", "minLength": 2}, {"type": "integer"}])));
        check(&c, Breaking, "inputSchema.properties.id.anyOf.0.minLength", None, Some("2"));
        // oneOf alike.
        let c =
            one(prop("x", json!({"oneOf": [{"const": 1}]})), prop("x", json!({"oneOf": [{"const": 1}, {"const": 2}]})));
        check(&c, Safe, "inputSchema.properties.x.oneOf.1", None, Some(r#"{"const":2}"#));
    }

    #[test]
    fn single_schema_to_union_is_widening() {
        let out = input(
            prop("id", json!({"type": "string", "description": "d"})),
            prop("id", json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "d"})),
        );
        assert!(out.iter().all(|c| c.severity == Safe), "{out:#?}");
        assert!(out.iter().any(|c| c.field == "inputSchema.properties.id.anyOf.1"), "{out:#?}");
    }

    #[test]
    fn all_of_branch_added_is_breaking() {
        let c = one(
            prop("x", json!({"allOf": [{"type": "string"}]})),
            prop("x", json!({"allOf": [{"type": "string"}, {"minLength": 1}]})),
        );
        check(&c, Breaking, "inputSchema.properties.x.allOf.1", None, Some(r#"{"minLength":1}"#));
        let c = one(prop("x", json!({"allOf": [{"minLength": 1}]})), prop("x", json!({})));
        check(&c, Safe, "inputSchema.properties.x.allOf.0", Some(r#"{"minLength":1}"#), None);
    }

    #[test]
    fn boolean_schemas() {
        let c = one(prop("a", json!(true)), prop("a", json!({"type": "string"})));
        check(&c, Breaking, "inputSchema.properties.a.type", None, Some(r#""string""#));
        let c = one(prop("a", json!({"type": "string"})), prop("a", json!(false)));
        check(&c, Breaking, "inputSchema.properties.a", Some(r#"{"type":"string"}"#), Some("false"));
        let c = one(prop("a", json!(false)), prop("a", json!(true)));
        check(&c, Safe, "inputSchema.properties.a", Some("false"), Some("true"));
    }

    #[test]
    fn output_changes_are_risky_words_cosmetic() {
        let old = json!({"type": "object", "properties": {"total": {"type": "number", "description": "a"}}, "required": ["total"]});
        let new = json!({
            "type": "object",
            "properties": {"total": {"type": "integer", "description": "b"}, "tax": {"type": "number"}},
            "required": [],
        });
        let out = diff(Side::Output, &old, &new);
        let find = |field: &str| out.iter().find(|c| c.field == field).unwrap_or_else(|| panic!("{field}: {out:#?}"));
        check(
            find("outputSchema.properties.total.type"),
            Risky,
            "outputSchema.properties.total.type",
            Some(r#""number""#),
            Some(r#""integer""#),
        );
        check(
            find("outputSchema.properties.tax"),
            Risky,
            "outputSchema.properties.tax",
            None,
            Some(r#"{"type":"number"}"#),
        );
        check(find("outputSchema.required"), Risky, "outputSchema.required", Some(r#"["total"]"#), Some("[]"));
        check(
            find("outputSchema.properties.total.description"),
            Cosmetic,
            "outputSchema.properties.total.description",
            Some(r#""a""#),
            Some(r#""b""#),
        );
        assert_eq!(out.len(), 4, "{out:#?}");
        let removed = diff(
            Side::Output,
            &new,
            &json!({"type": "object", "properties": {"total": {"type": "integer", "description": "b"}}, "required": []}),
        );
        assert_eq!(removed.len(), 1);
        check(&removed[0], Risky, "outputSchema.properties.tax", Some(r#"{"type":"number"}"#), None);
        assert_eq!(removed[0].description, r#"Output field "tax" was removed"#);
    }

    #[test]
    fn garbage_does_not_panic() {
        let garbage = [
            json!(null),
            json!(1),
            json!("string"),
            json!([1, {"type": "object"}]),
            json!(false),
            json!(true),
            json!({"type": 5}),
            json!({"type": ["string", 1]}),
            json!({"properties": [1, 2], "required": "a"}),
            json!({"properties": {"a": 5, "b": "x"}, "required": [1, "b"]}),
            json!({"enum": "a", "const": null, "minLength": "x", "maximum": [1], "multipleOf": 0}),
            json!({"items": 3, "additionalProperties": "no", "anyOf": {}, "oneOf": 2, "allOf": "x"}),
            json!({"items": [{"type": "string"}], "uniqueItems": "yes", "pattern": 3, "format": null}),
            json!({"$ref": "#/nowhere"}),
            json!({"$ref": 7}),
            json!({"$ref": "http://example.com/schema"}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": 5}}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": true}, "type": "string"}),
            json!({"properties": {"me": {"$ref": "#"}}, "anyOf": [{"$ref": "#"}], "items": {"$ref": "#"}}),
            json!({"additionalProperties": {"$ref": "#"}, "allOf": [{"$ref": "#"}, {"$ref": "#"}]}),
            json!({"multipleOf": 2, "minimum": 1e308, "maximum": -1e308}),
        ];
        for old in &garbage {
            for new in &garbage {
                let first = diff(Side::Input, old, new);
                assert_eq!(first, diff(Side::Input, old, new));
                let _ = diff(Side::Output, old, new);
                if old == new && !has_ref(old, 0) {
                    assert!(first.is_empty(), "{old} {new}: {first:#?}");
                }
            }
        }
        // An unreadable change is still told.
        let c = one(json!({"type": 5}), json!({"type": 6}));
        check(&c, Breaking, "inputSchema.type", Some("5"), Some("6"));
        let c = one(json!("a"), json!("b"));
        check(&c, Breaking, "inputSchema", Some(r#""a""#), Some(r#""b""#));
    }

    #[test]
    fn fan_out_through_refs_is_bounded() {
        // Each definition refers twice to the next: 2^40 paths if followed naively.
        let mut defs = Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/D{}", i + 1);
            defs.insert(format!("D{i}"), json!({"properties": {"l": {"$ref": next}, "r": {"$ref": next}}}));
        }
        defs.insert("D40".into(), json!({"type": "string"}));
        let old = json!({"$ref": "#/$defs/D0", "$defs": defs.clone()});
        defs.insert("D40".into(), json!({"type": "integer"}));
        let new = json!({"$ref": "#/$defs/D0", "$defs": defs});
        let out = input(old, new);
        assert!(!out.is_empty());
        assert!(out.len() <= MAX_NODES, "{}", out.len());
    }
}
