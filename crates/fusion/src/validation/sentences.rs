//! From the validator's errors to the problems the model reads: one kind of problem per JSON
//! Schema keyword, each written from the schema and the value — never from the validator's
//! own message, which quotes the value whole (a sensitive one too).

use jsonschema::ValidationError as SchemaError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use mcp_fusion_wire::{Bound, Condition, FieldPath, FieldProblem, ProblemKind, Sent, Suggestion};
use serde_json::{Number, Value};

use super::expectation::{constant_values, describe_schema, expectation_of};
use super::suggest::{known_fields, suggest};
use super::{Checker, instance_path, parent_pointer};

impl Checker {
    /// The problems one validator error stands for, appended to `out`.
    pub(super) fn map_error(&self, error: &SchemaError<'_>, root: &Value, out: &mut Vec<FieldProblem>) {
        let path = instance_path(error, root);
        let schema_path = error.schema_path().as_str();
        let instance = error.instance();
        let (path, kind, sent) = match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                (path.clone().key(name), self.missing(name, error, instance), Sent::missing())
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                return self.unrecognized(&path, unexpected, error, out);
            }
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                match self.union(error, context, root, out) {
                    Some(kind) => (path.clone(), kind, self.sent(&path, Some(instance))),
                    None => return,
                }
            }
            ValidationErrorKind::PropertyNames { error: key_error } => {
                let key_path = key_error.schema_path().as_str();
                let rule = self.keyword_problem(key_error.kind(), key_path, key_error.instance(), &path);
                let sent = if self.is_sensitive(&path) { Sent::redacted() } else { Sent::value(key_error.instance()) };
                (path, ProblemKind::InvalidKey { rule: Box::new(rule) }, sent)
            }
            other => match (other, self.described_items(schema_path)) {
                // An item past the ones `prefixItems` describes: said once, of the array.
                (ValidationErrorKind::FalseSchema, Some(max)) => {
                    let array = path.parent();
                    let sent = self.sent(&array, super::value_at_path(root, &array));
                    (array, ProblemKind::UnexpectedItems { max }, sent)
                }
                _ => {
                    let kind = self.keyword_problem(other, schema_path, instance, &path);
                    (path.clone(), kind, self.sent(&path, Some(instance)))
                }
            },
        };
        let kind = match self.condition(schema_path) {
            Some(condition) => ProblemKind::Because { condition, problem: Box::new(kind) },
            None => kind,
        };
        out.push(FieldProblem::new(&path, &kind, &sent));
    }

    /// A required property that was not sent, with what its schema asks for; when
    /// `dependentRequired` asks for it, which field made it required.
    fn missing(&self, name: &str, error: &SchemaError<'_>, instance: &Value) -> ProblemKind {
        let schema_path = error.schema_path().as_str();
        let object = parent_pointer(schema_path);
        let mut expected = self.property_schema(object, name).map(expectation_of).unwrap_or_default();
        // A key sent that is pointed at this field says where the value goes; what the field
        // is for, in other words, would only be more names to choose between.
        if self.pointed_at(object, name, instance) {
            expected.description = None;
        }
        if schema_path.ends_with("/dependentRequired") {
            let present = self
                .schema_at(schema_path)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .find(|(field, needs)| {
                    instance.get(field.as_str()).is_some()
                        && needs.as_array().is_some_and(|needs| needs.iter().any(|n| n == name))
                })
                .map(|(field, _)| field.clone());
            if let Some(present) = present {
                return ProblemKind::MissingBecause { present, expected };
            }
        }
        ProblemKind::Missing { expected }
    }

    /// Whether a key of `instance` that the object schema at `pointer` does not know would be
    /// suggested as the field `name`.
    fn pointed_at(&self, pointer: &str, name: &str, instance: &Value) -> bool {
        let Some(object) = self.schema_at(pointer) else { return false };
        let Some(properties) = object.get("properties").and_then(Value::as_object) else { return false };
        let Some(sent) = instance.as_object() else { return false };
        let mut unknown = sent.iter().filter(|(key, _)| !properties.contains_key(key.as_str())).peekable();
        // The fields' words are read from their descriptions: only when a key needs them.
        if unknown.peek().is_none() {
            return false;
        }
        let fields = known_fields(object);
        let missing = missing_required(object, instance);
        unknown.any(|(key, value)| match suggest(key, Some(value), &fields, &missing) {
            Some(Suggestion::Spelling(field)) => field == name,
            Some(Suggestion::Meaning(field)) => field.name == name,
            Some(Suggestion::Either(fields)) => fields.iter().any(|field| field.name == name),
            None => false,
        })
    }

    /// The schema of property `name` of the object schema at `pointer`, or of the object that
    /// holds the conditional sub-schema at `pointer` (`then: {required: [..]}` names a field
    /// the outer object describes).
    fn property_schema(&self, pointer: &str, name: &str) -> Option<&Value> {
        let mut pointer = pointer;
        loop {
            if let Some(schema) = self.schema_at(pointer).and_then(|s| s.get("properties")).and_then(|p| p.get(name)) {
                return Some(schema);
            }
            if pointer.is_empty() {
                return None;
            }
            pointer = parent_pointer(pointer);
        }
    }

    /// One problem per key the schema does not know, each with the known field it most likely
    /// means.
    fn unrecognized(
        &self,
        path: &FieldPath,
        unexpected: &[String],
        error: &SchemaError<'_>,
        out: &mut Vec<FieldProblem>,
    ) {
        let object = self.schema_at(parent_pointer(error.schema_path().as_str())).unwrap_or(&Value::Null);
        let fields = known_fields(object);
        let missing = missing_required(object, error.instance());
        for key in unexpected {
            let field = path.clone().key(key.as_str());
            let value = error.instance().get(key.as_str());
            let kind = ProblemKind::UnrecognizedKey {
                key: key.clone(),
                suggestion: suggest(key, value, &fields, &missing),
                known: fields.iter().map(|field| field.known()).collect(),
            };
            out.push(FieldProblem::new(&field, &kind, &self.sent(&field, value)));
        }
    }

    /// The problem of a value that matches none of a union's branches, or `None` when the
    /// branch's own errors were reported instead.
    fn union(
        &self,
        error: &SchemaError<'_>,
        context: &[Vec<SchemaError<'_>>],
        root: &Value,
        out: &mut Vec<FieldProblem>,
    ) -> Option<ProblemKind> {
        let branches = self.schema_at(error.schema_path().as_str()).and_then(Value::as_array);
        // `Option<T>` is `anyOf: [T, null]`: for a non-null value, T's own errors say more.
        if let Some(branches) = branches
            && !error.instance().is_null()
            && let [only] = non_null_branches(branches).as_slice()
        {
            for error in &context[*only] {
                self.map_error(error, root, out);
            }
            return None;
        }
        // A Rust enum whose variants carry docs becomes `oneOf` of `const`s: it is a list of
        // allowed values, and reads best as one.
        if let Some(allowed) = branches.and_then(|b| b.iter().map(constant_values).collect::<Option<Vec<_>>>()) {
            return Some(ProblemKind::InvalidValue { allowed: allowed.concat() });
        }
        let options = branches.map(|b| b.iter().map(describe_schema).collect()).unwrap_or_default();
        Some(ProblemKind::InvalidUnion { options })
    }

    /// The problem of a keyword about the value alone. One arm per keyword: the list is long
    /// because the schema language is, and each arm is a line or two.
    pub(super) fn keyword_problem(
        &self,
        kind: &ValidationErrorKind,
        schema_path: &str,
        instance: &Value,
        path: &FieldPath,
    ) -> ProblemKind {
        let here = || self.schema_at(parent_pointer(schema_path)).cloned().unwrap_or_default();
        match kind {
            ValidationErrorKind::Type { kind } => {
                let mut expected: Vec<String> = match kind {
                    TypeKind::Single(t) => vec![t.to_string()],
                    TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
                };
                // `null` beside another type is an optional field: leaving it out says "none".
                if expected.len() > 1 {
                    expected.retain(|t| t != "null");
                }
                ProblemKind::InvalidType { expected }
            }
            ValidationErrorKind::Format { format } => ProblemKind::InvalidFormat { format: format.clone() },
            ValidationErrorKind::Pattern { pattern } => {
                ProblemKind::PatternMismatch { pattern: pattern.clone(), example: expectation_of(&here()).example }
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. } | ValidationErrorKind::RegexEngineFailure { .. } => {
                let pattern = here().get("pattern").and_then(Value::as_str).unwrap_or_default().to_owned();
                ProblemKind::PatternUnchecked { pattern }
            }
            ValidationErrorKind::MinLength { limit } => ProblemKind::TooSmall(Bound::Characters(*limit)),
            ValidationErrorKind::MaxLength { limit } => ProblemKind::TooBig(Bound::Characters(*limit)),
            ValidationErrorKind::MinItems { limit } => ProblemKind::TooSmall(Bound::Items(*limit)),
            ValidationErrorKind::MaxItems { limit } => ProblemKind::TooBig(Bound::Items(*limit)),
            ValidationErrorKind::MinProperties { limit } => ProblemKind::TooSmall(Bound::Properties(*limit)),
            ValidationErrorKind::MaxProperties { limit } => ProblemKind::TooBig(Bound::Properties(*limit)),
            ValidationErrorKind::Minimum { limit: Value::Number(limit) } => {
                number_bound(limit, false, ProblemKind::TooSmall)
            }
            ValidationErrorKind::ExclusiveMinimum { limit: Value::Number(limit) } => {
                number_bound(limit, true, ProblemKind::TooSmall)
            }
            ValidationErrorKind::Maximum { limit: Value::Number(limit) } => {
                number_bound(limit, false, ProblemKind::TooBig)
            }
            ValidationErrorKind::ExclusiveMaximum { limit: Value::Number(limit) } => {
                number_bound(limit, true, ProblemKind::TooBig)
            }
            ValidationErrorKind::Enum { options } => {
                ProblemKind::InvalidValue { allowed: options.as_array().cloned().unwrap_or_default() }
            }
            ValidationErrorKind::Constant { expected_value } => {
                ProblemKind::InvalidValue { allowed: vec![Value::clone(expected_value)] }
            }
            ValidationErrorKind::MultipleOf { multiple_of } => match Number::from_f64(*multiple_of) {
                Some(factor) => ProblemKind::NotMultipleOf { factor },
                None => rule(schema_path, &here()),
            },
            ValidationErrorKind::UniqueItems => ProblemKind::DuplicateItems,
            ValidationErrorKind::OneOfMultipleValid { .. } => ProblemKind::AmbiguousUnion,
            // A property whose schema is `false` may not be sent at all.
            ValidationErrorKind::FalseSchema => ProblemKind::Custom {
                problem: "This field is not accepted".into(),
                expected: "the field removed".into(),
            },
            // What `not` forbids is said, unless saying it would repeat a sensitive value.
            ValidationErrorKind::Not { schema } => {
                ProblemKind::Forbidden { shape: (!self.is_sensitive(path)).then(|| describe_schema(schema)) }
            }
            ValidationErrorKind::Contains => self.contains(schema_path),
            ValidationErrorKind::UnevaluatedItems { unexpected } => {
                let sent = instance.as_array().map_or(0, Vec::len);
                ProblemKind::UnexpectedItems { max: sent.saturating_sub(unexpected.len()) as u64 }
            }
            ValidationErrorKind::AdditionalItems { limit } => ProblemKind::UnexpectedItems { max: *limit as u64 },
            ValidationErrorKind::ContentEncoding { content_encoding } => {
                ProblemKind::InvalidEncoding { encoding: content_encoding.clone() }
            }
            ValidationErrorKind::FromUtf8 { .. } => ProblemKind::InvalidContent { media_type: "UTF-8 text".into() },
            ValidationErrorKind::ContentMediaType { content_media_type } => {
                ProblemKind::InvalidContent { media_type: content_media_type.clone() }
            }
            ValidationErrorKind::Custom { keyword, .. } => ProblemKind::SchemaRule {
                keyword: keyword.clone(),
                rule: here().get(keyword).cloned().unwrap_or_default(),
            },
            // Anything else: the keyword and what the schema says for it, never the message.
            _ => rule(schema_path, &here()),
        }
    }

    /// `contains` found too few matching items, or `maxContains` too many.
    fn contains(&self, schema_path: &str) -> ProblemKind {
        let array = self.schema_at(parent_pointer(schema_path)).cloned().unwrap_or_default();
        let shape = array.get("contains").map_or_else(|| "as the schema describes".to_owned(), describe_schema);
        match schema_path.rsplit('/').next() {
            Some("maxContains") => ProblemKind::TooManyMatching {
                max: array.get("maxContains").and_then(Value::as_u64).unwrap_or(0),
                shape,
            },
            Some("minContains") => ProblemKind::TooFewMatching {
                min: array.get("minContains").and_then(Value::as_u64).unwrap_or(1),
                shape,
            },
            _ => ProblemKind::TooFewMatching { min: 1, shape },
        }
    }

    /// How many items the array schema holding the `items` at `schema_path` describes, when
    /// that `items` is `false` after `prefixItems`.
    fn described_items(&self, schema_path: &str) -> Option<u64> {
        let parent = schema_path.strip_suffix("/items")?;
        let prefix = self.schema_at(parent)?.get("prefixItems")?.as_array()?;
        Some(prefix.len() as u64)
    }

    /// Why a conditional sub-schema applied, when the error comes from one: the innermost
    /// `dependentSchemas`, `then` or `else` on its schema path.
    fn condition(&self, schema_path: &str) -> Option<Condition> {
        if !["/then/", "/else/", "/dependentSchemas/"].iter().any(|keyword| schema_path.contains(keyword)) {
            return None;
        }
        let segments: Vec<&str> = schema_path.split('/').collect();
        let at = segments.iter().rposition(|s| matches!(*s, "then" | "else" | "dependentSchemas"))?;
        let owner = segments[..at].join("/");
        match segments[at] {
            "dependentSchemas" => Some(Condition::Sent { field: unescape_pointer(segments.get(at + 1)?) }),
            branch => {
                let facts = self.schema_at(&owner).and_then(|s| s.get("if")).map(if_facts).unwrap_or_default();
                Some(Condition::If { holds: branch == "then", facts })
            }
        }
    }
}

/// What an `if` asks as plain field-and-value facts (`properties` with a `const` or a
/// one-value `enum`), when that is all it asks; empty otherwise.
/// The required fields of the object schema `object` that `instance` does not hold.
fn missing_required<'a>(object: &'a Value, instance: &Value) -> Vec<&'a str> {
    let required = object.get("required").and_then(Value::as_array).into_iter().flatten();
    required.filter_map(Value::as_str).filter(|name| instance.get(*name).is_none()).collect()
}

fn if_facts(condition: &Value) -> Vec<(String, Value)> {
    let Some(object) = condition.as_object() else { return Vec::new() };
    let plain = object.keys().all(|k| matches!(k.as_str(), "properties" | "required" | "type"));
    let Some(properties) = object.get("properties").and_then(Value::as_object).filter(|_| plain) else {
        return Vec::new();
    };
    let mut facts = Vec::new();
    for (field, schema) in properties {
        match constant_values(schema).as_deref() {
            Some([value])
                if schema.as_object().is_some_and(|s| {
                    s.keys().all(|k| matches!(k.as_str(), "const" | "enum" | "type" | "description"))
                }) =>
            {
                facts.push((field.clone(), value.clone()));
            }
            _ => return Vec::new(),
        }
    }
    facts
}

/// The keyword at the end of `schema_path`, and the schema's value for it.
fn rule(schema_path: &str, schema: &Value) -> ProblemKind {
    let keyword = unescape_pointer(schema_path.rsplit('/').next().unwrap_or_default());
    let rule = schema.get(&keyword).cloned().unwrap_or_default();
    ProblemKind::SchemaRule { keyword, rule }
}

/// A JSON pointer segment as the key it names (`~1` is `/`, `~0` is `~`).
fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn non_null_branches(branches: &[Value]) -> Vec<usize> {
    branches
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) != Some("null"))
        .map(|(i, _)| i)
        .collect()
}

fn number_bound(limit: &Number, exclusive: bool, kind: fn(Bound) -> ProblemKind) -> ProblemKind {
    kind(Bound::Number { limit: limit.clone(), exclusive })
}
