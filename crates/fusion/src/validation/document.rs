//! The schema a checker validates against, with what finding one's way in it takes: where each
//! `$ref` leads, where each embedded resource (`$id`) sits, and which sub-schemas apply to the
//! same value as a schema does (its in-place applicators). The validator reports a keyword's
//! place relative to the resource that holds it; this turns that into a place in the document.

use std::collections::{HashMap, HashSet};

use jsonschema::error::ValidationError as SchemaError;
use referencing::{Draft, Registry};
use serde_json::Value;

/// The most schemas one in-place closure visits: no real schema comes near, and a hostile one
/// (an `allOf` ladder of references) stops there.
const MAX_MEMBERS: usize = 512;
/// The deepest the walk through a document goes.
const MAX_DEPTH: usize = 128;

/// How a sub-schema relates to the schema that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// It describes another value: a property's, an item's (`properties`, `items`, …).
    Position,
    /// It applies to the same value (`allOf`, `anyOf`, `oneOf`, `then`, `else`,
    /// `dependentSchemas`).
    InPlace,
    /// It applies to the same value, but whether the value passes it is not simply required:
    /// `not` inverts it, `if` only chooses, `contains` counts. A stricter schema there may let
    /// more through.
    Inverted,
    /// It applies to nothing by itself (`$defs`): only where a reference leads to it.
    Detached,
}

/// The keywords whose values are sub-schemas, with their role; `Many` holds an array of
/// schemas, `Map` an object of them.
const KEYWORDS: &[(&str, Shape, Role)] = &[
    ("properties", Shape::Map, Role::Position),
    ("patternProperties", Shape::Map, Role::Position),
    ("additionalProperties", Shape::One, Role::Position),
    ("unevaluatedProperties", Shape::One, Role::Position),
    ("items", Shape::OneOrMany, Role::Position),
    ("prefixItems", Shape::Many, Role::Position),
    ("additionalItems", Shape::One, Role::Position),
    ("unevaluatedItems", Shape::One, Role::Position),
    ("allOf", Shape::Many, Role::InPlace),
    ("anyOf", Shape::Many, Role::InPlace),
    ("oneOf", Shape::Many, Role::InPlace),
    ("then", Shape::One, Role::InPlace),
    ("else", Shape::One, Role::InPlace),
    ("dependentSchemas", Shape::Map, Role::InPlace),
    ("not", Shape::One, Role::Inverted),
    ("if", Shape::One, Role::Inverted),
    ("contains", Shape::One, Role::Inverted),
    ("propertyNames", Shape::One, Role::Inverted),
    ("$defs", Shape::Map, Role::Detached),
    ("definitions", Shape::Map, Role::Detached),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    One,
    Many,
    OneOrMany,
    Map,
}

/// A sub-schema: where it is, and how it relates to its parent.
#[derive(Debug, Clone)]
pub(crate) struct Child {
    pub keyword: &'static str,
    /// The property name or the index under the keyword, if it holds several.
    pub key: Option<String>,
    pub pointer: String,
    pub role: Role,
}

/// The schema as validated, with its references followed once.
#[derive(Debug)]
pub(crate) struct Document {
    root: Value,
    /// Where each `$ref` leads, by the pointer of the schema that holds it. A reference that
    /// leaves the document (a meta-schema, a remote resource) or a `$dynamicRef` (whose target
    /// depends on how the value was reached) has none.
    targets: HashMap<String, String>,
    /// The pointers of the schemas holding a reference, followed or not.
    references: HashSet<String>,
    /// Where each resource (the root, each `$id`) sits, by its absolute URI.
    resources: HashMap<String, String>,
}

impl Document {
    /// Indexes `root`: its resources and where its references lead.
    pub(crate) fn new(root: Value) -> Document {
        let mut document =
            Document { root, targets: HashMap::new(), references: HashSet::new(), resources: HashMap::new() };
        document.index();
        document
    }

    /// The root schema, given back.
    pub(crate) fn into_root(self) -> Value {
        self.root
    }

    /// The schema at `pointer`.
    pub(crate) fn at(&self, pointer: &str) -> Option<&Value> {
        self.root.pointer(pointer)
    }

    /// Where the keyword an error comes from sits in the document. Past a reference into an
    /// embedded resource (`$id`), the validator's schema path is relative to that resource;
    /// the absolute location names the resource and the place in it.
    pub(crate) fn locate(&self, error: &SchemaError<'_>) -> String {
        let relative = error.schema_path().as_str();
        let Some(uri) = error.absolute_keyword_location() else { return relative.to_owned() };
        let text = uri.as_str();
        let (base, _) = text.split_once('#').unwrap_or((text, ""));
        let fragment = uri.fragment().map(|f| f.decode().to_string_lossy().into_owned()).unwrap_or_default();
        match self.resources.get(base) {
            Some(resource) if fragment.is_empty() || fragment.starts_with('/') => format!("{resource}{fragment}"),
            _ => relative.to_owned(),
        }
    }

    /// Where the reference of the schema at `pointer` leads, when it stays in the document.
    pub(crate) fn target(&self, pointer: &str) -> Option<&str> {
        self.targets.get(pointer).map(String::as_str)
    }

    /// The schemas that apply to the same value as the one at `pointer`, itself first:
    /// through `allOf`, `anyOf`, `oneOf`, `then`, `else`, `dependentSchemas` and references.
    /// `None` when a reference on the way cannot be followed, so what applies is not known.
    pub(crate) fn members(&self, pointer: &str) -> Option<Vec<String>> {
        self.members_where(pointer, &mut |_, _| true)
    }

    /// As [`members`](Document::members), following only the in-place children `follow`
    /// accepts (given the schema holding them and the child).
    pub(crate) fn members_where(
        &self,
        pointer: &str,
        follow: &mut dyn FnMut(&Value, &Child) -> bool,
    ) -> Option<Vec<String>> {
        let mut seen = HashSet::new();
        let mut order = Vec::new();
        let mut queue = vec![pointer.to_owned()];
        while let Some(current) = queue.pop() {
            if !seen.insert(current.clone()) {
                continue;
            }
            if seen.len() > MAX_MEMBERS {
                return None;
            }
            let schema = self.at(&current)?;
            if self.references.contains(&current) {
                queue.push(self.target(&current)?.to_owned());
            }
            let mut children: Vec<Child> = children(schema, &current)
                .into_iter()
                .filter(|child| child.role == Role::InPlace && follow(schema, child))
                .collect();
            children.reverse();
            queue.extend(children.into_iter().map(|child| child.pointer));
            order.push(current);
        }
        Some(order)
    }

    /// Walks the document once with the resolver the validator uses, recording resources and
    /// where references lead.
    fn index(&mut self) {
        let mut places = HashMap::new();
        pointers(&self.root, String::new(), 0, &mut places);
        let mut found = Found::default();
        references(&self.root, "", 0, &mut found.references);
        self.references = std::mem::take(&mut found.references);
        let resource = Draft::Draft202012.create_resource_ref(&self.root);
        let base = resource.id().unwrap_or("json-schema:///").trim_end_matches('#').to_owned();
        let Ok(registry) = Registry::new().draft(Draft::Draft202012).add(&base, resource).and_then(|r| r.prepare())
        else {
            return;
        };
        let Ok(uri) = referencing::uri::from_str(&base) else { return };
        let resolver = registry.resolver(uri);
        visit(&self.root, "", &resolver, &places, 0, &mut found);
        self.targets = found.targets;
        self.resources = found.resources;
        self.resources.insert(base, String::new());
    }
}

#[derive(Default)]
struct Found {
    targets: HashMap<String, String>,
    references: HashSet<String>,
    resources: HashMap<String, String>,
}

/// The keywords that lead elsewhere.
const REFERENCES: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// The pointers of the schemas holding a reference.
fn references(schema: &Value, pointer: &str, depth: usize, out: &mut HashSet<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    if REFERENCES.iter().any(|keyword| schema.get(*keyword).is_some_and(Value::is_string)) {
        out.insert(pointer.to_owned());
    }
    for child in children(schema, pointer) {
        if let Some(value) = child_value(schema, &child) {
            references(value, &child.pointer, depth + 1, out);
        }
    }
}

/// The pointer of every value of the document, by its address.
fn pointers(value: &Value, pointer: String, depth: usize, out: &mut HashMap<*const Value, String>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                pointers(child, format!("{pointer}/{}", escape(key)), depth + 1, out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointers(child, format!("{pointer}/{index}"), depth + 1, out);
            }
        }
        _ => {}
    }
    out.insert(value as *const Value, pointer);
}

fn visit(
    schema: &Value,
    pointer: &str,
    resolver: &referencing::Resolver<'_>,
    places: &HashMap<*const Value, String>,
    depth: usize,
    found: &mut Found,
) {
    let Value::Object(object) = schema else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(resolver) = resolver.in_subresource(Draft::Draft202012.create_resource_ref(schema)) else { return };
    if object.get("$id").is_some_and(Value::is_string) && depth > 0 {
        found.resources.insert(resolver.base_uri().as_str().trim_end_matches('#').to_owned(), pointer.to_owned());
    }
    // A `$dynamicRef` leads where the value was reached from: it is left unfollowed.
    if let Some(reference) = object.get("$ref").and_then(Value::as_str)
        && let Ok(resolved) = resolver.lookup(reference)
        && let Some(target) = places.get(&(resolved.contents() as *const Value))
    {
        found.targets.insert(pointer.to_owned(), target.clone());
    }
    for child in children(schema, pointer) {
        if let Some(value) = child_value(schema, &child) {
            visit(value, &child.pointer, &resolver, places, depth + 1, found);
        }
    }
}

/// The value of `child` inside `schema`, its parent.
fn child_value<'v>(schema: &'v Value, child: &Child) -> Option<&'v Value> {
    let under = schema.get(child.keyword)?;
    match &child.key {
        None => Some(under),
        Some(key) => match under {
            Value::Array(items) => items.get(key.parse::<usize>().ok()?),
            Value::Object(map) => map.get(key),
            _ => None,
        },
    }
}

/// The sub-schemas of `schema` (at `pointer`), in the schema's order of keywords.
pub(crate) fn children(schema: &Value, pointer: &str) -> Vec<Child> {
    let Value::Object(object) = schema else { return Vec::new() };
    let mut out = Vec::new();
    for (keyword, value) in object {
        let Some((keyword, shape, role)) = KEYWORDS.iter().find(|(k, _, _)| k == keyword) else { continue };
        let here = format!("{pointer}/{}", escape(keyword));
        let schema_like = |v: &Value| v.is_object() || v.is_boolean();
        match (shape, value) {
            (Shape::One | Shape::OneOrMany, v) if schema_like(v) => {
                out.push(Child { keyword, key: None, pointer: here, role: *role })
            }
            (Shape::Many | Shape::OneOrMany, Value::Array(items)) => {
                for (index, _) in items.iter().enumerate().filter(|(_, item)| schema_like(item)) {
                    let pointer = format!("{here}/{index}");
                    out.push(Child { keyword, key: Some(index.to_string()), pointer, role: *role });
                }
            }
            (Shape::Map, Value::Object(map)) => {
                for (key, _) in map.iter().filter(|(_, item)| schema_like(item)) {
                    let pointer = format!("{here}/{}", escape(key));
                    out.push(Child { keyword, key: Some(key.clone()), pointer, role: *role });
                }
            }
            _ => {}
        }
    }
    out
}

/// A key as a JSON pointer segment (`/` is `~1`, `~` is `~0`).
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_and_resources_are_followed() {
        let document = Document::new(json!({
            "$defs": {"a": {"type": "integer"}},
            "properties": {
                "n": {"$ref": "#/$defs/a"},
                "v": {"$id": "urn:x:1", "$defs": {"b": {"type": "string"}}, "properties": {"s": {"$ref": "#/$defs/b"}}}
            }
        }));
        assert_eq!(document.target("/properties/n"), Some("/$defs/a"));
        assert_eq!(document.target("/properties/v/properties/s"), Some("/properties/v/$defs/b"));
        assert_eq!(document.members("/properties/n").unwrap(), ["/properties/n", "/$defs/a"]);
        // A reference that leaves the document is not followed: what applies is unknown.
        let far = Document::new(json!({"properties": {"far": {"$ref": "https://example.com/schema.json"}}}));
        assert_eq!(far.target("/properties/far"), None);
        assert_eq!(far.members("/properties/far"), None);
    }

    #[test]
    fn in_place_members_in_order() {
        let document = Document::new(json!({
            "allOf": [{"properties": {"a": {}}}, {"$ref": "#/$defs/b"}],
            "not": {"properties": {"c": {}}},
            "$defs": {"b": {"oneOf": [{"required": ["x"]}, {"required": ["y"]}]}}
        }));
        assert_eq!(
            document.members("").unwrap(),
            ["", "/allOf/0", "/allOf/1", "/$defs/b", "/$defs/b/oneOf/0", "/$defs/b/oneOf/1"]
        );
    }

    #[test]
    fn errors_in_embedded_resources_are_placed_in_the_document() {
        let schema = json!({
            "properties": {"value": {"$id": "urn:suite:x:1", "$defs": {"a": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/a"}}}}
        });
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let document = Document::new(schema);
        let instance = json!({"value": {"n": "x"}});
        let error = validator.iter_errors(&instance).next().unwrap();
        assert_eq!(document.locate(&error), "/properties/value/$defs/a/type");
    }
}
