//! The strict subset of JSON Schema — what OpenAI's strict function calling (Structured Outputs)
//! and Anthropic's strict tool use both accept — written as rules, and the demo's published input
//! schemas checked against them with `strict_schemas` on (grouped and flat) and off.
//!
//! Where the providers differ, a rule keeps what both accept. Each rule names its source:
//! - OpenAI: <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>
//! - Anthropic: <https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations>
//!   and `#schema-complexity-limits` on the same page; strict tool use shares them
//!   (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use>).

use std::collections::BTreeSet;
use std::fmt::Display;

use crate::support;

use billing_server::Options;
use serde_json::{Map, Value, json};
use support::in_process::build;

/// The keywords both providers document; any other keyword is a finding. Left out on purpose:
/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` and `maxItems`
/// (OpenAI supports them, Anthropic does not); `minLength` and `maxLength` (Anthropic does not
/// support them, OpenAI lists neither); `allOf` (Anthropic with limits, OpenAI not); `default`
/// (Anthropic only); `not`, `if`, `then`, `else`, `dependentRequired`, `dependentSchemas` (OpenAI
/// names them unsupported); `oneOf`, `patternProperties`, `propertyNames`, `minProperties`,
/// `maxProperties`, `unevaluatedProperties`, `prefixItems`, `contains`, `uniqueItems`,
/// `unevaluatedItems`, `title`, `examples`, `$schema` (neither page lists them).
const KEYWORDS: &[&str] = &[
    // OpenAI and Anthropic (both pages above): types, objects, arrays, enums, unions; every
    // example on both pages describes its fields with `description`.
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    // OpenAI lists `format` and `pattern` for strings and `minItems` for arrays; Anthropic lists
    // formats, `pattern` with a regex subset, and `minItems` of 0 or 1 (checked below).
    "format",
    "pattern",
    "minItems",
    // Anthropic lists `const`; OpenAI counts "const values" in its string-size limit.
    "const",
    // OpenAI: "Definitions are supported" (`$defs`, `$ref: "#/$defs/…"`); Anthropic: `$ref`,
    // `$def` and `definitions`, external `$ref` not supported.
    "$ref",
    "$defs",
    "definitions",
];

/// OpenAI lists string, number, boolean, integer, object, array (and null in unions, as its
/// examples show); Anthropic all seven basic types. Both pages above.
const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean", "null"];

/// The string formats of both lists: OpenAI's (date-time, time, date, duration, email, hostname,
/// ipv4, ipv6, uuid) and Anthropic's (the same and `uri`, which OpenAI lacks). Both pages above.
const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Each object or array schema is a level, the root the first; at most this many.
/// OpenAI: "up to 5000 object properties total, with up to 10 levels of nesting"
/// (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>; earlier
/// revisions said 100 properties and 5 levels). Arrays are counted too, to err on the safe side.
const MAX_NESTING: usize = 10;
/// OpenAI, same sentence and page.
const MAX_PROPERTIES: usize = 5_000;
/// OpenAI: property names, definition names, enum values and const values "cannot exceed 120,000
/// characters" (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>).
const MAX_CHARS: usize = 120_000;
/// OpenAI: "up to 1000 enum values across all enum properties", and a string enum of more than
/// 250 values holds at most 15,000 characters
/// (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>).
const MAX_ENUM_VALUES: usize = 1_000;
const LARGE_ENUM: usize = 250;
const LARGE_ENUM_CHARS: usize = 15_000;
/// Anthropic, per request across all strict schemas: at most 20 strict tools, 24 optional
/// parameters and 16 parameters with union types (`anyOf` or a type list)
/// (<https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits>).
const MAX_STRICT_TOOLS: usize = 20;
const MAX_OPTIONAL: usize = 24;
const MAX_UNIONS: usize = 16;

/// What a schema spends of the limits counted across a whole request or schema.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    properties: usize,
    enum_values: usize,
    chars: usize,
    optional: usize,
    unions: usize,
}

/// One finding per way `schema` leaves the strict subset, each led by the JSON path it concerns
/// (`properties.limit: "minimum" is not in the strict subset`), `root` for the schema itself.
fn strict_findings(schema: &Value) -> Vec<String> {
    Walk::run(schema).findings
}

/// What one request breaks that declares every schema of `schemas` as a strict tool: Anthropic
/// counts its limits across all of a request's strict schemas, and a client may well send every
/// tool a server lists.
fn request_findings(schemas: &[&Value]) -> Vec<String> {
    let mut findings = Vec::new();
    let total = schemas.iter().map(|schema| Walk::run(schema).counts).fold(Counts::default(), |sum, counts| Counts {
        optional: sum.optional + counts.optional,
        unions: sum.unions + counts.unions,
        ..sum
    });
    // Anthropic: strict tools, optional and union-typed parameters per request
    // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits).
    if schemas.len() > MAX_STRICT_TOOLS {
        findings.push(format!("request: {} strict tools, more than {MAX_STRICT_TOOLS}", schemas.len()));
    }
    if total.optional > MAX_OPTIONAL {
        findings.push(format!("request: {} optional parameters, more than {MAX_OPTIONAL}", total.optional));
    }
    if total.unions > MAX_UNIONS {
        findings.push(format!("request: {} parameters with union types, more than {MAX_UNIONS}", total.unions));
    }
    findings
}

struct Walk<'a> {
    root: &'a Value,
    findings: Vec<String>,
    counts: Counts,
}

impl<'a> Walk<'a> {
    fn run(root: &'a Value) -> Walk<'a> {
        let mut walk = Walk { root, findings: Vec::new(), counts: Counts::default() };
        walk.root();
        walk
    }

    fn finding(&mut self, path: &str, what: impl Display) {
        let path = if path.is_empty() { "root" } else { path };
        self.findings.push(format!("{path}: {what}"));
    }

    fn root(&mut self) {
        let root = self.root;
        let Some(map) = root.as_object() else {
            self.finding("", "the schema is not a JSON object");
            return;
        };
        // OpenAI: "Root objects must not be anyOf and must be an object"
        // (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
        if map.get("type") != Some(&json!("object")) {
            self.finding("", r#"the root must be "type": "object""#);
        }
        if map.contains_key("anyOf") {
            self.finding("", "the root must not be anyOf");
        }
        self.schema(root, "");
        for key in ["$defs", "definitions"] {
            let Some(definitions) = map.get(key) else { continue };
            let Some(definitions) = definitions.as_object() else {
                self.finding(key, "must map names to schemas");
                continue;
            };
            for (name, definition) in definitions {
                self.counts.chars += name.chars().count();
                self.schema(definition, &at(key, name));
            }
        }
        self.recursion();
        self.limits();
    }

    /// The rules of one schema, and of those nested in it.
    fn schema(&mut self, node: &Value, path: &str) {
        let Some(map) = node.as_object() else {
            // Both pages describe every schema as an object with a type; `true` / `false`
            // schemas appear on neither.
            self.finding(path, "is not a schema object");
            return;
        };
        for key in map.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                self.finding(path, format!("{key:?} is not in the strict subset"));
            } else if (key == "$defs" || key == "definitions") && !path.is_empty() {
                // OpenAI's and Anthropic's examples keep definitions at the root and refer to
                // them as `#/$defs/…`; see `resolve`.
                self.finding(path, format!("{key:?} belongs at the root"));
            }
        }
        if let Some(description) = map.get("description")
            && !description.is_string()
        {
            self.finding(path, "description must be a string");
        }
        let types = self.types(map, path);
        let is = |wanted: &str| types.iter().any(|t| t == wanted);
        if ["type", "anyOf", "$ref", "enum", "const"].iter().all(|key| !map.contains_key(*key)) {
            // A schema without a type accepts anything, which neither provider's subset can
            // express: every supported form on both pages names a type, a union or values.
            self.finding(path, "declares no type");
        }
        // Type-specific keywords on the type they belong to: OpenAI lists them per type
        // ("Supported string properties", "Supported array properties"), Anthropic as string
        // formats and array minItems; objects are what additionalProperties applies to (both).
        for (key, wanted) in [
            ("properties", "object"),
            ("required", "object"),
            ("additionalProperties", "object"),
            ("items", "array"),
            ("minItems", "array"),
            ("format", "string"),
            ("pattern", "string"),
        ] {
            if map.contains_key(key) && !is(wanted) {
                self.finding(path, format!("{key:?} needs \"type\": {wanted:?}"));
            }
        }
        if is("object") || map.contains_key("properties") {
            self.object(map, path);
        }
        if is("array") && !map.contains_key("items") {
            // An array without `items` holds anything; see "declares no type" above.
            self.finding(path, r#"an array needs "items""#);
        }
        if let Some(items) = map.get("items") {
            self.schema(items, &at(path, "items"));
        }
        // Anthropic: array `minItems` "only values 0 and 1 supported"
        // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations).
        if let Some(min) = map.get("minItems")
            && !matches!(min.as_u64(), Some(0 | 1))
        {
            self.finding(path, format!("minItems {min} is not 0 or 1"));
        }
        // OpenAI and Anthropic: `format` only from both lists (pages above).
        if let Some(format) = map.get("format")
            && !format.as_str().is_some_and(|format| FORMATS.contains(&format))
        {
            self.finding(path, format!("format {format} is not one both providers support"));
        }
        if let Some(pattern) = map.get("pattern") {
            match pattern.as_str() {
                Some(pattern) => {
                    for what in regex_findings(pattern) {
                        self.finding(path, format!("pattern {pattern:?} uses {what}"));
                    }
                }
                None => self.finding(path, "pattern must be a string"),
            }
        }
        self.values(map, path);
        if let Some(branches) = map.get("anyOf") {
            // OpenAI: "For anyOf, the nested schemas must each be a valid JSON Schema per this
            // subset" (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
            match branches.as_array() {
                Some(branches) if !branches.is_empty() => {
                    for (index, branch) in branches.iter().enumerate() {
                        self.schema(branch, &at(path, &format!("anyOf[{index}]")));
                    }
                }
                _ => self.finding(path, "anyOf must list schemas"),
            }
        }
        if let Some(reference) = map.get("$ref") {
            self.reference(map, reference, path);
        }
    }

    /// The types `type` names, checked; counts a union.
    fn types(&mut self, map: &Map<String, Value>, path: &str) -> Vec<String> {
        // Anthropic counts every parameter "that use[s] anyOf or type arrays" against its union
        // limit (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits).
        if map.contains_key("anyOf") || map.get("type").is_some_and(Value::is_array) {
            self.counts.unions += 1;
        }
        let names: Vec<String> = match map.get("type") {
            None => return Vec::new(),
            Some(Value::String(name)) => vec![name.clone()],
            Some(Value::Array(list)) => {
                let names: Vec<String> = list.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect();
                let non_null = names.iter().filter(|t| *t != "null").count();
                // OpenAI shows type lists only as one type and "null", its way to an optional
                // field; Anthropic as `["string", "null"]` (both pages above).
                if names.len() != list.len() || list.len() != 2 || non_null != 1 {
                    self.finding(path, format!("type {} is not one type and \"null\"", Value::Array(list.clone())));
                }
                names
            }
            Some(other) => {
                self.finding(path, format!("type {other} is neither a name nor a list of names"));
                return Vec::new();
            }
        };
        for name in &names {
            if !TYPES.contains(&name.as_str()) {
                self.finding(path, format!("type {name:?} is not supported"));
            }
        }
        names
    }

    fn object(&mut self, map: &Map<String, Value>, path: &str) {
        // OpenAI: "additionalProperties: false must always be set in objects"; Anthropic:
        // `additionalProperties` "must be set to false for objects" (pages above).
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None => self.finding(path, "additionalProperties must be false, and is missing"),
            Some(other) => self.finding(path, format!("additionalProperties must be false, not {other}")),
        }
        let empty = Map::new();
        let properties = match map.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => {
                self.finding(path, "properties must map names to schemas");
                &empty
            }
        };
        let required: BTreeSet<&str> = match map.get("required") {
            None => BTreeSet::new(),
            Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
                names.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                self.finding(path, "required must list property names");
                BTreeSet::new()
            }
        };
        for (name, property) in properties {
            self.counts.properties += 1;
            self.counts.chars += name.chars().count();
            // OpenAI: "All fields must be required", an optional one emulated "by using a union
            // type with null" (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
            // Anthropic counts each "parameter not listed in required" against 24 per request
            // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits).
            if !required.contains(name.as_str()) {
                self.counts.optional += 1;
                self.finding(path, format!("required does not list {name:?}: every property must be required"));
            }
            self.schema(property, &at(&at(path, "properties"), name));
        }
        // With additionalProperties false, a required name that is no property can never be
        // satisfied.
        for name in required {
            if !properties.contains_key(name) {
                self.finding(path, format!("required names {name:?}, which is not a property"));
            }
        }
    }

    /// `enum` and `const`.
    fn values(&mut self, map: &Map<String, Value>, path: &str) {
        if let Some(values) = map.get("enum") {
            let Some(values) = values.as_array().filter(|values| !values.is_empty()) else {
                self.finding(path, "enum must list values");
                return;
            };
            self.counts.enum_values += values.len();
            let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            let chars: usize = strings.iter().map(|value| value.chars().count()).sum();
            self.counts.chars += chars;
            // Anthropic: `enum` of "strings, numbers, bools, or nulls only - no complex types"
            // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations).
            for value in values {
                if value.is_object() || value.is_array() {
                    self.finding(path, format!("enum value {value} is not a string, number, boolean or null"));
                }
            }
            // OpenAI: a string enum of more than 250 values holds at most 15,000 characters
            // (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
            if strings.len() > LARGE_ENUM && chars > LARGE_ENUM_CHARS {
                self.finding(
                    path,
                    format!("enum of {} strings holds {chars} characters, more than {LARGE_ENUM_CHARS}", strings.len()),
                );
            }
        }
        if let Some(Value::String(value)) = map.get("const") {
            self.counts.chars += value.chars().count();
        }
    }

    fn reference(&mut self, map: &Map<String, Value>, reference: &Value, path: &str) {
        let Some(reference) = reference.as_str() else {
            self.finding(path, "$ref must be a string");
            return;
        };
        if !reference.starts_with('#') {
            // Anthropic: "External $ref" not supported
            // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations).
            self.finding(path, format!("$ref {reference:?} is external"));
        } else if self.resolve(reference).is_none() {
            self.finding(path, format!("$ref {reference:?} names no definition of this schema"));
        }
        // OpenAI refuses a `$ref` beside other keywords, which is why its own SDK inlines such a
        // reference before sending it ("we can't use `$ref`s if there are also other properties
        // defined", https://github.com/openai/openai-python/blob/main/src/openai/lib/_pydantic.py).
        if map.len() > 1 {
            self.finding(path, "$ref must stand alone");
        }
    }

    /// The schema a local `$ref` names: the root (`#`) or one of its definitions, the two forms
    /// OpenAI's page shows (`#`, `#/$defs/…`); Anthropic names `$defs` and `definitions`.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        if reference == "#" {
            return Some(self.root);
        }
        let rest = reference.strip_prefix("#/")?;
        let (key, name) = rest.split_once('/')?;
        if !(key == "$defs" || key == "definitions") || name.contains('/') {
            return None;
        }
        self.root.get(key)?.get(name.replace("~1", "/").replace("~0", "~"))
    }

    /// Anthropic: "Recursive schemas" not supported
    /// (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations),
    /// though OpenAI allows them: a `$ref` chain back to where it started is a finding.
    fn recursion(&mut self) {
        let mut starts = vec![("#".to_owned(), String::new())];
        for key in ["$defs", "definitions"] {
            if let Some(definitions) = self.root.get(key).and_then(Value::as_object) {
                for name in definitions.keys() {
                    let pointer = format!("#/{key}/{}", name.replace('~', "~0").replace('/', "~1"));
                    starts.push((pointer, at(key, name)));
                }
            }
        }
        for (start, path) in starts {
            let mut seen = BTreeSet::new();
            let mut next = vec![start.clone()];
            while let Some(pointer) = next.pop() {
                let mut references = Vec::new();
                if let Some(schema) = self.resolve(&pointer) {
                    references_in(schema, &mut references);
                }
                if references.contains(&start) {
                    self.finding(&path, "refers back to itself through $ref: a recursive schema");
                    break;
                }
                next.extend(references.into_iter().filter(|reference| seen.insert(reference.clone())));
            }
        }
    }

    /// The limits on the schema as a whole.
    fn limits(&mut self) {
        let depth = self.nesting(self.root, &mut Vec::new());
        // OpenAI: nesting, properties, characters and enum values
        // (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
        if depth > MAX_NESTING {
            self.finding("", format!("{depth} levels of nesting, more than {MAX_NESTING}"));
        }
        let Counts { properties, enum_values, chars, optional, unions } = self.counts;
        if properties > MAX_PROPERTIES {
            self.finding("", format!("{properties} object properties, more than {MAX_PROPERTIES}"));
        }
        if chars > MAX_CHARS {
            self.finding("", format!("{chars} characters of names and values, more than {MAX_CHARS}"));
        }
        if enum_values > MAX_ENUM_VALUES {
            self.finding("", format!("{enum_values} enum values, more than {MAX_ENUM_VALUES}"));
        }
        // Anthropic: a single schema over a per-request limit is over it in any request
        // (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits).
        if optional > MAX_OPTIONAL {
            self.finding("", format!("{optional} optional parameters, more than {MAX_OPTIONAL}"));
        }
        if unions > MAX_UNIONS {
            self.finding("", format!("{unions} parameters with union types, more than {MAX_UNIONS}"));
        }
    }

    /// The levels of nesting from `node` down: each object or array schema is one, and a `$ref`
    /// counts as the definition it names (a cycle stops there; it is a finding of its own).
    fn nesting(&self, node: &Value, following: &mut Vec<String>) -> usize {
        let Some(map) = node.as_object() else { return 0 };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let Some(target) = self.resolve(reference).filter(|_| !following.iter().any(|r| r == reference)) else {
                return 0;
            };
            following.push(reference.to_owned());
            let depth = self.nesting(target, following);
            following.pop();
            return depth;
        }
        let container = ["object", "array"].iter().any(|wanted| match map.get("type") {
            Some(Value::String(name)) => name == wanted,
            Some(Value::Array(names)) => names.iter().any(|name| name == wanted),
            _ => false,
        }) || map.contains_key("properties")
            || map.contains_key("items");
        let properties = map.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values());
        let branches = map.get("anyOf").and_then(Value::as_array).into_iter().flatten();
        let below = properties
            .chain(map.get("items"))
            .chain(branches)
            .map(|child| self.nesting(child, following))
            .max()
            .unwrap_or(0);
        below + usize::from(container)
    }
}

/// The `$ref`s of `schema` and of the schemas nested in it, definitions aside.
fn references_in(schema: &Value, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else { return };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        out.push(reference.to_owned());
    }
    let properties = map.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values());
    let branches = map.get("anyOf").and_then(Value::as_array).into_iter().flatten();
    for child in properties.chain(map.get("items")).chain(branches) {
        references_in(child, out);
    }
}

/// What `pattern` uses of the regex features Anthropic does not support: "Backreferences to
/// groups", "Lookahead/lookbehind assertions", "Word boundaries: \b, \B"
/// (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations).
fn regex_findings(pattern: &str) -> BTreeSet<&'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut found = BTreeSet::new();
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                // Inside a class, `\b` is a backspace and digits are no backreference.
                if !in_class {
                    match (chars.get(i + 1), chars.get(i + 2)) {
                        (Some('1'..='9'), _) | (Some('k'), Some('<')) => {
                            found.insert("a backreference");
                        }
                        (Some('b' | 'B'), _) => {
                            found.insert("a word boundary");
                        }
                        _ => {}
                    }
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                let next: String = chars[i + 1..].iter().take(3).collect();
                if ["?=", "?!", "?<=", "?<!"].iter().any(|opening| next.starts_with(opening)) {
                    found.insert("a lookaround");
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// `key` below `path`, dot-separated.
fn at(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// The `{properties, required, additionalProperties: false}` object of `properties`, every one
/// required.
fn object(properties: Value) -> Value {
    let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The findings of the root object whose one property `x` is `property`.
fn findings_of(property: Value) -> Vec<String> {
    strict_findings(&object(json!({ "x": property })))
}

fn assert_finds(schema: &Value, expected: &str) {
    let findings = strict_findings(schema);
    assert!(findings.iter().any(|finding| finding == expected), "expected {expected:?} among {findings:#?}");
}

#[test]
fn a_conforming_schema_with_a_nullable_optional_field_has_no_findings() {
    let schema = json!({
        "type": "object",
        "description": "Arguments of `list`.",
        "properties": {
            "status": {"type": "string", "enum": ["open", "paid"], "description": "Which invoices."},
            "count": {"type": ["integer", "null"], "description": "How many; null for all."},
        },
        "required": ["status", "count"],
        "additionalProperties": false,
    });
    assert_eq!(strict_findings(&schema), Vec::<String>::new());
}

#[test]
fn everything_both_providers_document_passes() {
    let schema = json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "due": {"type": ["string", "null"], "format": "date"},
            "id": {"type": "string", "pattern": "^inv_[a-z0-9_]+(-[0-9]{1,4})?$"},
            "kind": {"const": "invoice"},
            "status": {"type": ["string", "null"], "enum": ["open", "paid", null]},
            "lines": {
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "#/$defs/line"},
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "flag": {"type": "boolean"},
            "rate": {"type": "number"},
        },
        "required": ["email", "due", "id", "kind", "status", "lines", "note", "flag", "rate"],
        "additionalProperties": false,
        "$defs": {
            "line": {
                "type": "object",
                "properties": {"cents": {"type": "integer"}},
                "required": ["cents"],
                "additionalProperties": false,
            },
        },
    });
    assert_eq!(strict_findings(&schema), Vec::<String>::new());
}

#[test]
fn the_root_is_an_object_and_no_union() {
    assert_finds(&json!({"type": "array", "items": {"type": "string"}}), r#"root: the root must be "type": "object""#);
    let union = json!({"anyOf": [object(json!({})), object(json!({"a": {"type": "string"}}))]});
    assert_finds(&union, "root: the root must not be anyOf");
    assert_finds(
        &json!({"type": ["object", "null"], "additionalProperties": false}),
        r#"root: the root must be "type": "object""#,
    );
}

#[test]
fn every_object_is_closed() {
    assert_finds(
        &json!({"type": "object", "properties": {}}),
        "root: additionalProperties must be false, and is missing",
    );
    assert_finds(
        &json!({"type": "object", "properties": {}, "additionalProperties": true}),
        "root: additionalProperties must be false, not true",
    );
    let nested =
        object(json!({"inner": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}}));
    assert_finds(&nested, r#"properties.inner: additionalProperties must be false, not {"type":"string"}"#);
}

#[test]
fn every_property_is_required() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a", "ghost"],
        "additionalProperties": false,
    });
    assert_finds(&schema, r#"root: required does not list "b": every property must be required"#);
    assert_finds(&schema, r#"root: required names "ghost", which is not a property"#);
    let nested = object(
        json!({"items": {"type": "array", "items": {"type": "object", "properties": {"c": {"type": "integer"}}, "additionalProperties": false}}}),
    );
    assert_finds(&nested, r#"properties.items.items: required does not list "c": every property must be required"#);
}

#[test]
fn keywords_outside_the_intersection_are_findings() {
    assert_eq!(
        findings_of(json!({"type": "integer", "minimum": 1})),
        [r#"properties.x: "minimum" is not in the strict subset"#]
    );
    for (keyword, value) in [
        ("maximum", json!(9)),
        ("exclusiveMinimum", json!(0)),
        ("exclusiveMaximum", json!(9)),
        ("multipleOf", json!(2)),
        ("minLength", json!(1)),
        ("maxLength", json!(9)),
        ("maxItems", json!(9)),
        ("uniqueItems", json!(true)),
        ("contains", json!({"type": "string"})),
        ("default", json!("a")),
        ("allOf", json!([{"type": "string"}])),
        ("oneOf", json!([{"type": "string"}])),
        ("not", json!({"type": "null"})),
        ("if", json!({"type": "string"})),
        ("then", json!({"type": "string"})),
        ("else", json!({"type": "string"})),
        ("dependentRequired", json!({})),
        ("dependentSchemas", json!({})),
        ("patternProperties", json!({})),
        ("propertyNames", json!({"pattern": "^a"})),
        ("minProperties", json!(1)),
        ("maxProperties", json!(9)),
        ("unevaluatedProperties", json!(false)),
        ("unevaluatedItems", json!(false)),
        ("prefixItems", json!([])),
        ("title", json!("X")),
        ("examples", json!(["a"])),
    ] {
        let mut property = json!({"type": "string"});
        property[keyword] = value;
        assert!(
            findings_of(property).contains(&format!("properties.x: {keyword:?} is not in the strict subset")),
            "{keyword} passed"
        );
    }
    let mut schema = object(json!({}));
    schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    assert_finds(&schema, r#"root: "$schema" is not in the strict subset"#);
}

#[test]
fn types_are_the_supported_ones() {
    assert_finds(&object(json!({"x": {"type": "date"}})), r#"properties.x: type "date" is not supported"#);
    assert_finds(
        &object(json!({"x": {"type": ["string", "integer"]}})),
        r#"properties.x: type ["string","integer"] is not one type and "null""#,
    );
    assert_finds(&object(json!({"x": {"description": "anything"}})), "properties.x: declares no type");
    assert_finds(&object(json!({"x": true})), "properties.x: is not a schema object");
    assert_finds(&object(json!({"x": {"type": "array"}})), r#"properties.x: an array needs "items""#);
    assert_finds(
        &object(json!({"x": {"type": "integer", "format": "date"}})),
        r#"properties.x: "format" needs "type": "string""#,
    );
}

#[test]
fn formats_are_those_both_support() {
    for format in ["uri", "int64", "uint32", "regex"] {
        assert_eq!(
            findings_of(json!({"type": "string", "format": format})),
            [format!("properties.x: format {format:?} is not one both providers support")]
        );
    }
    for format in FORMATS {
        assert_eq!(findings_of(json!({"type": "string", "format": format})), Vec::<String>::new());
    }
}

#[test]
fn arrays_need_at_most_one_item() {
    let array = |min: Value| json!({"type": "array", "items": {"type": "string"}, "minItems": min});
    assert_eq!(findings_of(array(json!(0))), Vec::<String>::new());
    assert_eq!(findings_of(array(json!(1))), Vec::<String>::new());
    assert_eq!(findings_of(array(json!(2))), ["properties.x: minItems 2 is not 0 or 1"]);
}

#[test]
fn patterns_use_no_backreference_lookaround_or_word_boundary() {
    for (pattern, what) in [
        (r"^(a)\1$", "a backreference"),
        (r"^(?<q>a)\k<q>$", "a backreference"),
        (r"^a(?=b)", "a lookaround"),
        (r"^a(?!b)", "a lookaround"),
        (r"(?<=a)b$", "a lookaround"),
        (r"(?<!a)b$", "a lookaround"),
        (r"\bword\b", "a word boundary"),
        (r"a\Bb", "a word boundary"),
    ] {
        assert_eq!(
            findings_of(json!({"type": "string", "pattern": pattern})),
            [format!("properties.x: pattern {pattern:?} uses {what}")]
        );
    }
    for pattern in [r"^inv_[a-z0-9_]+$", r"^\d{4}-\d{2}$", r"^(?:a|b)+$", r"^(?<name>a)$", r"[\b]", r"\\b", r"^\(?=$"] {
        assert_eq!(findings_of(json!({"type": "string", "pattern": pattern})), Vec::<String>::new(), "{pattern}");
    }
}

#[test]
fn enums_hold_only_scalars() {
    assert_finds(
        &object(json!({"x": {"enum": ["a", {"b": 1}]}})),
        r#"properties.x: enum value {"b":1} is not a string, number, boolean or null"#,
    );
    assert_finds(
        &object(json!({"x": {"enum": [[1]]}})),
        "properties.x: enum value [1] is not a string, number, boolean or null",
    );
    assert_eq!(findings_of(json!({"enum": ["a", 1, 2.5, true, null]})), Vec::<String>::new());
}

#[test]
fn references_are_local_and_not_recursive() {
    assert_finds(
        &object(json!({"x": {"$ref": "https://example.com/s.json"}})),
        r#"properties.x: $ref "https://example.com/s.json" is external"#,
    );
    assert_finds(
        &object(json!({"x": {"$ref": "#/$defs/missing"}})),
        r##"properties.x: $ref "#/$defs/missing" names no definition of this schema"##,
    );
    let mut beside = object(json!({"x": {"$ref": "#/$defs/a", "description": "An a."}}));
    beside["$defs"] = json!({"a": {"type": "string"}});
    assert_finds(&beside, "properties.x: $ref must stand alone");

    let mut node = object(json!({"next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}));
    node["$defs"] = json!({"node": object(json!({"next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}))});
    assert_finds(&node, "$defs.node: refers back to itself through $ref: a recursive schema");
    let tree = object(json!({"children": {"type": "array", "items": {"$ref": "#"}}}));
    assert_finds(&tree, "root: refers back to itself through $ref: a recursive schema");
    let mut nested = object(json!({}));
    nested["properties"]["x"] = json!({"type": "object", "properties": {}, "additionalProperties": false, "$defs": {}});
    nested["required"] = json!(["x"]);
    assert_finds(&nested, r#"properties.x: "$defs" belongs at the root"#);
}

/// `levels` objects, each the one property of the one above it.
fn nested(levels: usize) -> Value {
    (1..levels).fold(object(json!({})), |inner, _| object(json!({ "inner": inner })))
}

#[test]
fn nesting_stops_at_ten_levels() {
    assert_eq!(strict_findings(&nested(MAX_NESTING)), Vec::<String>::new());
    assert_eq!(strict_findings(&nested(MAX_NESTING + 1)), ["root: 11 levels of nesting, more than 10"]);
    // A reference counts as the definition it names.
    let mut through = nested(MAX_NESTING - 1);
    through["$defs"] = json!({"leaf": object(json!({"a": {"type": "array", "items": {"type": "string"}}}))});
    let mut innermost = &mut through;
    while innermost["properties"].get("inner").is_some() {
        innermost = &mut innermost["properties"]["inner"];
    }
    innermost["properties"] = json!({"leaf": {"$ref": "#/$defs/leaf"}});
    innermost["required"] = json!(["leaf"]);
    assert_eq!(strict_findings(&through), ["root: 11 levels of nesting, more than 10"]);
}

#[test]
fn sizes_stay_within_the_documented_limits() {
    let many = |count: usize, property: Value| {
        object(Value::Object((0..count).map(|n| (format!("p{n}"), property.clone())).collect()))
    };
    let string = json!({"type": "string"});
    assert_eq!(strict_findings(&many(MAX_PROPERTIES, string.clone())), Vec::<String>::new());
    assert_eq!(strict_findings(&many(MAX_PROPERTIES + 1, string)), ["root: 5001 object properties, more than 5000"]);

    let nullable = json!({"type": ["string", "null"]});
    assert_eq!(strict_findings(&many(MAX_UNIONS, nullable.clone())), Vec::<String>::new());
    assert_eq!(
        strict_findings(&many(MAX_UNIONS + 1, nullable)),
        ["root: 17 parameters with union types, more than 16"]
    );

    let values: Vec<String> = (0..=MAX_ENUM_VALUES).map(|n| format!("v{n}")).collect();
    assert_eq!(findings_of(json!({"enum": values})), ["root: 1001 enum values, more than 1000"]);
    let long: Vec<String> = (0..=LARGE_ENUM).map(|n| format!("{n:0>60}")).collect();
    assert_eq!(
        findings_of(json!({"type": "string", "enum": long})),
        ["properties.x: enum of 251 strings holds 15060 characters, more than 15000"]
    );
    let name = "n".repeat(MAX_CHARS + 1);
    let mut long_name = object(json!({}));
    long_name["properties"][&name] = json!({"type": "string"});
    long_name["required"] = json!([name]);
    assert_eq!(strict_findings(&long_name), ["root: 120001 characters of names and values, more than 120000"]);

    let optional = json!({"type": "object", "properties": (0..=MAX_OPTIONAL).map(|n| (format!("p{n}"), json!({"type": "string"}))).collect::<Map<_, _>>(), "additionalProperties": false});
    assert!(strict_findings(&optional).contains(&"root: 25 optional parameters, more than 24".to_owned()));
}

#[test]
fn a_request_stays_within_anthropics_limits_across_its_tools() {
    let tool = object(json!({"a": {"type": ["string", "null"]}}));
    assert_eq!(request_findings(&[&tool; MAX_UNIONS]), Vec::<String>::new());
    assert_eq!(request_findings(&[&tool; MAX_UNIONS + 1]), ["request: 17 parameters with union types, more than 16"]);
    let plain = object(json!({"a": {"type": "string"}}));
    assert_eq!(request_findings(&[&plain; MAX_STRICT_TOOLS]), Vec::<String>::new());
    assert_eq!(request_findings(&[&plain; MAX_STRICT_TOOLS + 1]), ["request: 21 strict tools, more than 20"]);
    let loose = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(request_findings(&[&loose; 13]), ["request: 26 optional parameters, more than 24"]);
}

/// The demo's tools as a client lists them, each with its `inputSchema`.
async fn published(options: Options) -> Vec<(String, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let client = build(&dir.path().join("billing.db"), &options).await;
    let tools =
        client.tools().into_iter().map(|tool| (tool.name.into_owned(), Value::Object((*tool.input_schema).clone())));
    tools.collect()
}

/// Every finding of every tool, led by the tool's name, and those of one request with them all.
fn all_findings(tools: &[(String, Value)]) -> Vec<String> {
    let mut findings: Vec<String> = tools
        .iter()
        .flat_map(|(name, schema)| strict_findings(schema).into_iter().map(move |finding| format!("{name}: {finding}")))
        .collect();
    findings.extend(request_findings(&tools.iter().map(|(_, schema)| schema).collect::<Vec<_>>()));
    findings
}

#[tokio::test]
async fn the_grouped_tool_publishes_the_strict_subset() {
    let tools = published(Options { strict_schemas: true, flat: false, ..Default::default() }).await;
    assert!(!tools.is_empty());
    let findings = all_findings(&tools);
    assert!(findings.is_empty(), "schemas outside the strict subset:\n{}", findings.join("\n"));
}

#[tokio::test]
async fn the_flat_tools_publish_the_strict_subset() {
    let tools = published(Options { strict_schemas: true, flat: true, ..Default::default() }).await;
    assert!(tools.len() > 1, "one tool per action: {:?}", tools.iter().map(|(name, _)| name).collect::<Vec<_>>());
    let findings = all_findings(&tools);
    assert!(findings.is_empty(), "schemas outside the strict subset:\n{}", findings.join("\n"));
}

#[tokio::test]
async fn without_strict_schemas_the_demo_leaves_the_subset() {
    for flat in [false, true] {
        let tools = published(Options { strict_schemas: false, flat, ..Default::default() }).await;
        let findings = all_findings(&tools);
        println!("flat: {flat}\n{}", findings.join("\n"));
        assert!(!findings.is_empty(), "flat: {flat}: the full schemas pass the strict rules");
    }
}

/// A forwarder that is never called: the test reads what the mount lists.
struct Unreached;

impl mcp_fusion::handoff::Forward for Unreached {
    fn call(
        &self,
        _tool: &str,
        _arguments: rmcp::model::JsonObject,
        _call: std::sync::Arc<mcp_fusion::CallInfo>,
    ) -> futures_util::future::BoxFuture<'static, Result<rmcp::model::CallToolResult, mcp_fusion::handoff::ForwardError>>
    {
        Box::pin(std::future::ready(Err(mcp_fusion::handoff::ForwardError::NoSuchTool("unreached".into()))))
    }
}

/// Third-party tools as their servers list them — `@modelcontextprotocol/server-memory` and
/// `server-filesystem`, and `mcp-server-time`, at the versions `tests/gateway/heal` pins —
/// mounted with strict schemas: every one has a strict form, and the rules find nothing in it.
#[test]
fn third_party_tools_mounted_strict_pass_the_rules() {
    let listed: Map<String, Value> =
        serde_json::from_str(include_str!("third_party_tools.json")).expect("the fixture is JSON");
    let server = mcp_fusion::FusionServer::builder::<()>("gateway", "1").strict_schemas(true).build(()).unwrap();
    for (namespace, tools) in &listed {
        let tools: Vec<rmcp::model::Tool> = serde_json::from_value(tools.clone()).expect("tools");
        let forward: std::sync::Arc<dyn mcp_fusion::handoff::Forward> = std::sync::Arc::new(Unreached);
        let state = mcp_fusion::handoff::MountState::Ready { tools, forward };
        server.set_mount(&mcp_fusion::handoff::Mount::new(namespace.as_str()), state).unwrap();
    }
    let tools = server.tools();
    assert_eq!(tools.len(), 25);
    let schemas: Vec<Value> = tools.iter().map(|tool| Value::Object((*tool.input_schema).clone())).collect();
    for (tool, schema) in tools.iter().zip(&schemas) {
        let findings = strict_findings(schema);
        assert!(findings.is_empty(), "{}: {findings:#?}\n{schema:#}", tool.name);
    }
    // Per request, Anthropic counts optional and union-typed parameters over every strict tool:
    // each server's tools fit in one request (all 25 together would pass 20 strict tools).
    for namespace in ["memory.", "time.", "fs."] {
        let of_server: Vec<&Value> =
            schemas.iter().zip(&tools).filter(|(_, tool)| tool.name.starts_with(namespace)).map(|(s, _)| s).collect();
        assert!(request_findings(&of_server).is_empty(), "{namespace}: {:?}", request_findings(&of_server));
    }
}
