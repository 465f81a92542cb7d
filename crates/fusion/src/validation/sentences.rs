//! From the validator's errors to the problems the model reads: one kind of problem per JSON
//! Schema keyword, each written from the schema and the value — never from the validator's
//! own message, which quotes the value whole (a sensitive one too).

use jsonschema::ValidationError as SchemaError;
use jsonschema::error::ValidationErrorKind;
use mcp_fusion_wire::{Bound, Condition, Expectation, FieldPath, FieldProblem, ProblemKind, Sent, Shape};
use serde_json::{Number, Value};

use super::describe::{expectation, shape};
use super::expectation::constant_values;
use super::suggest::names;
use super::{Checker, instance_path, parent_pointer};

impl Checker {
    /// The problems a list of errors found together stands for (the validator's, or those of
    /// the branch of a union that was chosen), appended to `out`.
    pub(super) fn problems(&self, errors: &[SchemaError<'_>], root: &Value, out: &mut Vec<FieldProblem>) {
        let typed: Vec<String> = errors
            .iter()
            .filter(|e| matches!(e.kind(), ValidationErrorKind::Type { .. }))
            .map(|e| e.instance_path().as_str().to_owned())
            .collect();
        for error in errors {
            // A value of the wrong type also fails its `enum` or `const`: the type's line says
            // the allowed values.
            let restates =
                matches!(error.kind(), ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. });
            if restates && typed.iter().any(|t| t == error.instance_path().as_str()) {
                continue;
            }
            self.map_error(error, root, errors, out);
        }
    }

    /// The problems one validator error stands for, appended to `out`; `siblings` are the
    /// errors found with it.
    fn map_error(
        &self,
        error: &SchemaError<'_>,
        root: &Value,
        siblings: &[SchemaError<'_>],
        out: &mut Vec<FieldProblem>,
    ) {
        let path = instance_path(error, root);
        let pointer = self.document.locate(error);
        let instance = error.instance();
        let (path, kind, sent) = match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                (path.clone().key(name), self.missing(name, &pointer, instance), Sent::missing())
            }
            // `additionalProperties` sees its own schema's properties only.
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let keys: Vec<&String> = unexpected.iter().collect();
                return self.unrecognized(&path, &keys, Known::Own(parent_pointer(&pointer)), instance, out);
            }
            ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                return self.unevaluated(error, &path, unexpected, &pointer, siblings, root, out);
            }
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                match self.union(&pointer, &path, instance, context, root, out) {
                    Some(kind) => (path.clone(), kind, self.sent(&path, Some(instance))),
                    None => return,
                }
            }
            // `propertyNames: false`: the object may hold no key at all.
            ValidationErrorKind::FalseSchema if pointer.ends_with("/propertyNames") => {
                let keys: Vec<&String> = instance.as_object().map(|o| o.keys().collect()).unwrap_or_default();
                return self.unrecognized(&path, &keys, Known::Nothing, instance, out);
            }
            ValidationErrorKind::PropertyNames { error: key_error } => {
                let key_pointer = self.document.locate(key_error);
                let rule = self.keyword_problem(key_error.kind(), &key_pointer, key_error.instance(), &path);
                let sent = if self.hides_value(&path) { Sent::redacted() } else { Sent::value(key_error.instance()) };
                (path, ProblemKind::InvalidKey { rule: Box::new(rule) }, sent)
            }
            ValidationErrorKind::FalseSchema if self.described_items(&pointer).is_some() => {
                // An item past the ones `prefixItems` describes: said once, of the array.
                let max = self.described_items(&pointer).unwrap_or_default();
                let array = path.parent();
                let sent = self.sent(&array, super::value_at_path(root, &array));
                (array, ProblemKind::UnexpectedItems { max }, sent)
            }
            ValidationErrorKind::Type { kind } => {
                let mut expected = expectation(&self.document, parent_pointer(&pointer));
                if expected.types.is_empty() {
                    expected.types = match kind {
                        jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
                        jsonschema::error::TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
                    };
                }
                let kind = if instance.is_null() && self.is_optional(&path, root) {
                    ProblemKind::NullForOptional { expected }
                } else {
                    // A sensitive value's other spelling would say it; a value-free one's
                    // sentence says only that there is one.
                    let retyped = match self.is_sensitive(&path) {
                        true => None,
                        false => self.retyped(&expected.types, instance, &path, root),
                    };
                    match retyped {
                        Some(retyped) if self.value_free => ProblemKind::RetypedWithoutValue { expected, retyped },
                        retyped => ProblemKind::InvalidType { expected, retyped },
                    }
                };
                (path.clone(), kind, self.sent(&path, Some(instance)))
            }
            other => {
                let kind = self.keyword_problem(other, &pointer, instance, &path);
                (path.clone(), kind, self.sent(&path, Some(instance)))
            }
        };
        let kind = match self.condition(&pointer) {
            Some(condition) => ProblemKind::Because { condition, problem: Box::new(kind) },
            None => kind,
        };
        out.push(FieldProblem::new(&path, &kind, &sent));
    }

    /// A required property that was not sent, with what its schema asks for; when
    /// `dependentRequired` asks for it, which field made it required.
    fn missing(&self, name: &str, pointer: &str, instance: &Value) -> ProblemKind {
        let object = parent_pointer(pointer);
        let mut expected =
            self.property_pointer(object, name).map(|p| expectation(&self.document, &p)).unwrap_or_default();
        // A key sent that is pointed at this field says where the value goes; what the field
        // is for, in other words, would only be more names to choose between.
        if self.pointed_at(object, name, instance) {
            expected.description = None;
        }
        if pointer.ends_with("/dependentRequired") {
            let present = self
                .schema_at(pointer)
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

    /// The schema of property `name` of the object schema at `pointer` (through what applies
    /// with it), or of an object that holds the sub-schema at `pointer` (`then: {required:
    /// [..]}` names a field the outer object describes).
    fn property_pointer(&self, pointer: &str, name: &str) -> Option<String> {
        let mut pointer = pointer;
        loop {
            let found = self.fields_at(pointer, None).into_iter().find(|(field, _)| field == name);
            if let Some((_, at)) = found {
                return Some(at);
            }
            if pointer.is_empty() {
                return None;
            }
            pointer = parent_pointer(pointer);
        }
    }

    /// Whether the field at `path` may be left out: no schema of the object that holds it
    /// requires it.
    fn is_optional(&self, path: &FieldPath, root: &Value) -> bool {
        let Some(mcp_fusion_wire::Segment::Key(key)) = path.segments().last() else { return false };
        let parent = path.parent();
        if !super::value_at_path(root, &parent).is_some_and(Value::is_object) {
            return false;
        }
        let along = self.pointers_along(&parent);
        if along.len() != parent.len() + 1 {
            return false;
        }
        let object = along.last().map(String::as_str).unwrap_or_default();
        let members = self.document.members(object).unwrap_or_else(|| vec![object.to_owned()]);
        let required = members.iter().filter_map(|m| self.schema_at(m)?.get("required")?.as_array()).flatten();
        !required.into_iter().any(|r| r == key)
    }

    /// Whether a key of `instance` that the object schema at `pointer` does not know would be
    /// suggested as the field `name`.
    fn pointed_at(&self, pointer: &str, name: &str, instance: &Value) -> bool {
        let Some(sent) = instance.as_object() else { return false };
        let fields = self.fields_at(pointer, Some(instance));
        let mut unknown = sent.keys().filter(|key| !fields.iter().any(|(field, _)| field == *key)).peekable();
        // The fields' words are read from their descriptions: only when a key needs them.
        if unknown.peek().is_none() {
            return false;
        }
        let fields = self.known_fields(&fields);
        let missing = self.missing_required(pointer, instance);
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        unknown.any(|key| {
            super::suggest::suggest(key, sent.get(key.as_str()), &fields, &missing, instance)
                .is_some_and(|suggestion| names(&suggestion, name))
        })
    }

    /// One problem per key the object does not know, each with the known field it most
    /// likely means.
    fn unrecognized(
        &self,
        path: &FieldPath,
        unexpected: &[&String],
        known: Known<'_>,
        instance: &Value,
        out: &mut Vec<FieldProblem>,
    ) {
        let (fields, patterns, missing) = match known {
            Known::Own(pointer) => {
                let schema = self.schema_at(pointer);
                let names = |keyword: &str| -> Vec<String> {
                    let map = schema.and_then(|s| s.get(keyword)).and_then(Value::as_object);
                    map.map(|m| m.keys().cloned().collect()).unwrap_or_default()
                };
                let escape = super::document::escape;
                let fields = names("properties")
                    .into_iter()
                    .map(|n| (n.clone(), format!("{pointer}/properties/{}", escape(&n))))
                    .collect();
                (fields, names("patternProperties"), self.missing_required(pointer, instance))
            }
            Known::Applying(pointer) => {
                let patterns = self
                    .document
                    .members(pointer)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|m| self.schema_at(m)?.get("patternProperties")?.as_object())
                    .flat_map(|p| p.keys().cloned())
                    .collect();
                (self.fields_at(pointer, Some(instance)), patterns, self.missing_required(pointer, instance))
            }
            Known::Nothing => (Vec::new(), Vec::new(), Vec::new()),
        };
        let known = self.known_fields(&fields);
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        for key in unexpected {
            let field = path.clone().key(key.as_str());
            let value = instance.get(key.as_str());
            let kind = ProblemKind::UnrecognizedKey {
                key: (*key).clone(),
                suggestion: super::suggest::suggest(key, value, &known, &missing, instance),
                known: known.iter().map(|field| field.known()).collect(),
                patterns: patterns.clone(),
            };
            out.push(FieldProblem::new(&field, &kind, &self.sent(&field, value)));
        }
    }

    /// Keys nothing applying to the object evaluated. When the object failed otherwise too,
    /// the validator counts as unevaluated the keys of the schemas that failed, which the
    /// schema does name: only keys it names nowhere are said then, and when a union at the
    /// object failed, it says the keys its chosen branch does not know.
    #[allow(clippy::too_many_arguments)]
    fn unevaluated(
        &self,
        error: &SchemaError<'_>,
        path: &FieldPath,
        unexpected: &[String],
        pointer: &str,
        siblings: &[SchemaError<'_>],
        root: &Value,
        out: &mut Vec<FieldProblem>,
    ) {
        let object = parent_pointer(pointer);
        let same_place = |e: &SchemaError<'_>| instance_path(e, root) == *path;
        let union_failed = siblings.iter().any(|e| {
            matches!(e.kind(), ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. })
                && same_place(e)
                && parent_pointer(&self.document.locate(e)) == object
        });
        if union_failed {
            return;
        }
        let rendered = path.to_string();
        let crowded = siblings.iter().any(|e| {
            !std::ptr::eq(e, error) && {
                let other = instance_path(e, root).to_string();
                other == rendered || rendered == "(root)" || other.starts_with(&format!("{rendered}."))
            }
        });
        let instance = error.instance();
        let keys: Vec<&String> = unexpected.iter().filter(|key| !crowded || !self.admits(object, key)).collect();
        self.unrecognized(path, &keys, Known::Applying(object), instance, out);
    }

    /// The problem of a value that matches none of a union's branches, or `None` when the
    /// problems of the branch it meant were reported instead: the one a discriminator picks
    /// (`kind: "cat"`), or the one `Option<T>` has.
    fn union(
        &self,
        pointer: &str,
        path: &FieldPath,
        instance: &Value,
        context: &[Vec<SchemaError<'_>>],
        root: &Value,
        out: &mut Vec<FieldProblem>,
    ) -> Option<ProblemKind> {
        // A union the document does not hold (in a meta-schema) is known by its errors alone.
        let branches = self.schema_at(pointer).and_then(Value::as_array).cloned();
        let known = branches.is_some();
        let branches = branches.unwrap_or_else(|| vec![Value::Object(Default::default()); context.len()]);
        let non_null: Vec<usize> =
            (0..branches.len()).filter(|i| branches[*i].get("type").and_then(Value::as_str) != Some("null")).collect();
        // `Option<T>` is `anyOf: [T, null]`: for a non-null value, T's own errors say more.
        if !instance.is_null()
            && let [only] = non_null.as_slice()
        {
            self.problems(&context[*only], root, out);
            return None;
        }
        // A Rust enum whose variants carry docs becomes `oneOf` of `const`s: it is a list of
        // allowed values, and reads best as one.
        if known && let Some(allowed) = branches.iter().map(constant_values).collect::<Option<Vec<_>>>() {
            return Some(ProblemKind::InvalidValue { allowed: allowed.concat() });
        }
        if let Some(object) = instance.as_object()
            && let Some(discriminator) = self.discriminator(pointer, &non_null)
        {
            let field = path.clone().key(discriminator.name.as_str());
            let allowed = discriminator.values.iter().flat_map(|(_, values)| values.clone()).collect();
            match object.get(&discriminator.name) {
                Some(value) => match discriminator.branch_of(value) {
                    Some(chosen) => {
                        self.problems(&context[chosen], root, out);
                        self.foreign_keys(pointer, chosen, path, instance, out);
                    }
                    None => out.push(FieldProblem::new(
                        &field,
                        &ProblemKind::InvalidValue { allowed },
                        &self.sent(&field, Some(value)),
                    )),
                },
                None => {
                    let expected = Expectation { allowed, ..Expectation::default() };
                    out.push(FieldProblem::new(&field, &ProblemKind::Missing { expected }, &Sent::missing()));
                }
            }
            return None;
        }
        let shapes = |except: Option<usize>| {
            let shape_of = |i: usize| match known {
                true => shape(&self.document, &format!("{pointer}/{i}")),
                false => shape_of_errors(&context[i], path, root),
            };
            non_null.iter().filter(|i| Some(**i) != except).map(|i| shape_of(*i)).collect()
        };
        // Without a discriminator, the branch that names most of the keys sent and then has the
        // fewest problems, when one is closest and takes this kind of value.
        let unnamed = |branch: usize| match instance.as_object().filter(|_| known) {
            Some(sent) => {
                let fields = self.fields_at(&format!("{pointer}/{branch}"), Some(instance));
                sent.keys().filter(|key| !fields.iter().any(|(name, _)| name == *key)).count()
            }
            None => 0,
        };
        let costs: Vec<(usize, (usize, usize))> = non_null
            .iter()
            .filter(|i| !context[**i].iter().any(|e| refuses_the_kind(e, path, root)))
            .map(|i| (*i, (unnamed(*i), context[*i].len())))
            .collect();
        let fewest = costs.iter().map(|(_, cost)| *cost).min();
        let closest: Vec<usize> = costs.iter().filter(|(_, cost)| Some(*cost) == fewest).map(|(i, _)| *i).collect();
        if let [closest] = closest.as_slice() {
            self.problems(&context[*closest], root, out);
            self.foreign_keys(pointer, *closest, path, instance, out);
            let closest_shape = match known {
                true => shape(&self.document, &format!("{pointer}/{closest}")),
                false => shape_of_errors(&context[*closest], path, root),
            };
            return Some(ProblemKind::ClosestUnion { closest: closest_shape, others: shapes(Some(*closest)) });
        }
        Some(ProblemKind::InvalidUnion { options: shapes(None) })
    }

    /// The keys of `instance` the chosen branch of the union at `pointer` does not know, when
    /// the object is closed to unknown keys: a field of another branch (`barks` for a cat) is
    /// one.
    fn foreign_keys(
        &self,
        pointer: &str,
        chosen: usize,
        path: &FieldPath,
        instance: &Value,
        out: &mut Vec<FieldProblem>,
    ) {
        let object = parent_pointer(pointer);
        let closed = self.schema_at(object).and_then(|s| s.get("unevaluatedProperties")) == Some(&Value::Bool(false));
        let Some(sent) = instance.as_object().filter(|_| closed) else { return };
        let keep = format!("{pointer}/{chosen}");
        let Some(members) = self.document.members_where(object, &mut |_, child| {
            !(child.pointer.starts_with(&format!("{pointer}/")) && child.pointer != keep)
        }) else {
            return;
        };
        let schemas: Vec<&Value> = members.iter().filter_map(|m| self.schema_at(m)).collect();
        if schemas
            .iter()
            .any(|s| s.get("patternProperties").is_some() || s.get("additionalProperties").is_some_and(|a| a != false))
        {
            return;
        }
        let said: Vec<String> = out.iter().map(|problem| problem.name.clone()).collect();
        let foreign: Vec<&String> = sent
            .keys()
            .filter(|key| !schemas.iter().any(|s| s.get("properties").and_then(|p| p.get(key.as_str())).is_some()))
            .filter(|key| !said.contains(&path.clone().key(key.as_str()).to_string()))
            .collect();
        if !foreign.is_empty() {
            self.unrecognized(path, &foreign, Known::Applying(&keep), instance, out);
        }
    }

    /// The problem of a keyword about the value alone. One arm per keyword: the list is long
    /// because the schema language is, and each arm is a line or two.
    pub(super) fn keyword_problem(
        &self,
        kind: &ValidationErrorKind,
        pointer: &str,
        instance: &Value,
        path: &FieldPath,
    ) -> ProblemKind {
        let here = || self.schema_at(parent_pointer(pointer)).cloned().unwrap_or_default();
        match kind {
            ValidationErrorKind::Type { .. } => ProblemKind::InvalidType {
                expected: expectation(&self.document, parent_pointer(pointer)),
                retyped: None,
            },
            ValidationErrorKind::Format { format } => ProblemKind::InvalidFormat { format: format.clone() },
            ValidationErrorKind::Pattern { pattern } => ProblemKind::PatternMismatch {
                pattern: pattern.clone(),
                example: expectation(&self.document, parent_pointer(pointer)).example,
            },
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
            // The schema's own number, as written (`0.1`, not the float the validator holds).
            ValidationErrorKind::MultipleOf { multiple_of } => {
                match here()
                    .get("multipleOf")
                    .and_then(Value::as_number)
                    .cloned()
                    .or_else(|| Number::from_f64(*multiple_of))
                {
                    Some(factor) => ProblemKind::NotMultipleOf { factor },
                    None => rule(pointer, &here()),
                }
            }
            ValidationErrorKind::UniqueItems => ProblemKind::DuplicateItems,
            ValidationErrorKind::OneOfMultipleValid { .. } => ProblemKind::AmbiguousUnion,
            // A property whose schema is `false` may not be sent at all; elsewhere, nothing
            // passes.
            ValidationErrorKind::FalseSchema => {
                let field = parent_pointer(pointer).rsplit('/').next() == Some("properties");
                ProblemKind::NothingAllowed { field }
            }
            // What `not` forbids is said, unless saying it would repeat a sensitive value.
            ValidationErrorKind::Not { .. } => {
                ProblemKind::Forbidden { shape: (!self.hides_value(path)).then(|| shape(&self.document, pointer)) }
            }
            ValidationErrorKind::Contains => self.contains(pointer, instance),
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
            _ => rule(pointer, &here()),
        }
    }

    /// `contains` found too few matching items, or `maxContains` too many. The counts may be
    /// written as floats (`2.0`). The validator reports both on one keyword: which bound was
    /// broken is told by counting the matching items, when the item schema stands alone.
    fn contains(&self, pointer: &str, instance: &Value) -> ProblemKind {
        let holder = parent_pointer(pointer);
        let array = self.schema_at(holder).cloned().unwrap_or_default();
        let count = |keyword: &str| array.get(keyword).and_then(Value::as_f64).map(|n| n.max(0.0) as u64);
        let (min, max) = (count("minContains").unwrap_or(1), count("maxContains"));
        let shape = shape(&self.document, &format!("{holder}/contains"));
        let matching = array.get("contains").filter(|c| !c.to_string().contains("\"$ref\"")).and_then(|item| {
            let validator = jsonschema::draft202012::new(item).ok()?;
            Some(instance.as_array()?.iter().filter(|v| validator.is_valid(v)).count() as u64)
        });
        match (matching, max) {
            (Some(found), Some(max)) if found > max => ProblemKind::TooManyMatching { max, shape },
            (Some(_), _) | (None, None) => ProblemKind::TooFewMatching { min, shape },
            (None, Some(max)) => ProblemKind::MatchingBetween { min, max, shape },
        }
    }

    /// How many items the array schema holding the `items` at `pointer` describes, when that
    /// `items` is `false` after `prefixItems`.
    fn described_items(&self, pointer: &str) -> Option<u64> {
        let parent = pointer.strip_suffix("/items")?;
        let prefix = self.schema_at(parent)?.get("prefixItems")?.as_array()?;
        Some(prefix.len() as u64)
    }

    /// Why a conditional sub-schema applied, when the error comes from one: the innermost
    /// `dependentSchemas`, `then` or `else` on its schema path.
    fn condition(&self, pointer: &str) -> Option<Condition> {
        if !["/then/", "/else/", "/dependentSchemas/"].iter().any(|keyword| pointer.contains(keyword)) {
            return None;
        }
        let segments: Vec<&str> = pointer.split('/').collect();
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

/// Which fields an unknown key is told about.
enum Known<'p> {
    /// Those of the object schema at the pointer itself (`additionalProperties` sees no more).
    Own(&'p str),
    /// Those of everything applying at the pointer.
    Applying(&'p str),
    /// None: the object may hold no key.
    Nothing,
}

/// Whether a branch's error says it takes another kind of value than the one at `path` (a
/// string where an object was sent), so it is no candidate for what the caller meant.
fn refuses_the_kind(error: &SchemaError<'_>, path: &FieldPath, root: &Value) -> bool {
    let here = instance_path(error, root) == *path;
    here && matches!(
        error.kind(),
        ValidationErrorKind::Type { .. }
            | ValidationErrorKind::FalseSchema
            | ValidationErrorKind::Constant { .. }
            | ValidationErrorKind::Enum { .. }
    )
}

/// What a branch the document does not hold (one of a meta-schema's) accepts, as far as its
/// errors about the value itself say: the type or the values it wanted.
fn shape_of_errors(errors: &[SchemaError<'_>], path: &FieldPath, root: &Value) -> Shape {
    let mut shape = Shape::default();
    for error in errors.iter().filter(|e| instance_path(e, root) == *path) {
        match error.kind() {
            ValidationErrorKind::Type { kind } => {
                shape.value.types = match kind {
                    jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
                    jsonschema::error::TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
                };
            }
            ValidationErrorKind::Enum { options } => {
                shape.value.allowed = options.as_array().cloned().unwrap_or_default()
            }
            ValidationErrorKind::Constant { expected_value } => {
                shape.value.allowed = vec![Value::clone(expected_value)]
            }
            _ => {}
        }
    }
    shape
}

/// What an `if` asks as plain field-and-value facts (`properties` with a `const` or a
/// one-value `enum`), when that is all it asks; empty otherwise.
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

/// The keyword at the end of `pointer`, and the schema's value for it.
fn rule(pointer: &str, schema: &Value) -> ProblemKind {
    let keyword = unescape_pointer(pointer.rsplit('/').next().unwrap_or_default());
    let rule = schema.get(&keyword).cloned().unwrap_or_default();
    ProblemKind::SchemaRule { keyword, rule }
}

/// A JSON pointer segment as the key it names (`~1` is `/`, `~0` is `~`).
fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn number_bound(limit: &Number, exclusive: bool, kind: fn(Bound) -> ProblemKind) -> ProblemKind {
    kind(Bound::Number { limit: limit.clone(), exclusive })
}
