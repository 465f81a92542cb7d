//! A YAML document read as the JSON value an OpenAPI importer reads.
//!
//! YAML is read with `yaml_serde` straight into a `serde_json::Value`, so the document is never
//! held twice, and three of YAML's ways differ from JSON's on the way in: every mapping key
//! becomes the text it was written as (`200:` is the response code `"200"`, not a number),
//! merge keys (`<<: *defaults`) are applied as YAML 1.1 defines them, and each alias is copied
//! where it is used, within a bound: a few lines of anchors naming anchors (a "billion laughs")
//! would otherwise expand to gigabytes.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::rest::MAX_DOCUMENT_BYTES;

/// How many values a YAML document may hold once its aliases are copied: about as many as
/// the largest JSON document read holds.
pub(crate) const MAX_YAML_VALUES: usize = 4_000_000;

/// How many bytes of text (keys and strings) a YAML document may hold once its aliases are
/// copied.
pub(crate) const MAX_YAML_TEXT: usize = 4 * MAX_DOCUMENT_BYTES;

/// Why a YAML document was not read: the parser's sentence, with its line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct YamlError(String);

/// The JSON value the YAML document in `bytes` holds.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, YamlError> {
    let mut budget = Budget { values: 0, text: 0 };
    let deserializer = yaml_serde::Deserializer::from_slice(bytes);
    ValueSeed { budget: &mut budget }.deserialize(deserializer).map_err(|error| {
        let said = error.to_string();
        // The parser's own bound on aliases (100 uses per event of the document) says only
        // that it was reached.
        if said.starts_with("repetition limit exceeded") {
            return YamlError(format!(
                "its aliases are used more than 100 times for each part of the document, as an alias bomb does ({said})"
            ));
        }
        YamlError(said)
    })
}

/// What has been built so far, against [`MAX_YAML_VALUES`] and [`MAX_YAML_TEXT`].
struct Budget {
    values: usize,
    text: usize,
}

impl Budget {
    fn value<E: de::Error>(&mut self) -> Result<(), E> {
        self.values += 1;
        if self.values > MAX_YAML_VALUES {
            return Err(E::custom(format!(
                "the document holds more than {MAX_YAML_VALUES} values once its aliases are copied, as an alias bomb does"
            )));
        }
        Ok(())
    }

    fn text<E: de::Error>(&mut self, text: &str) -> Result<(), E> {
        self.text += text.len();
        if self.text > MAX_YAML_TEXT {
            return Err(E::custom(format!(
                "the document holds more than {MAX_YAML_TEXT} bytes of text once its aliases are copied, as an alias bomb does"
            )));
        }
        Ok(())
    }
}

/// Builds one value, counting it against the budget.
struct ValueSeed<'b> {
    budget: &'b mut Budget,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        self.budget.value()?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.budget.value()?;
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.budget.value()?;
        Ok(Value::Number(value.into()))
    }

    // An integer past 64 bits (OpenAI's `minimum: -9223372036854776000`) is read as JSON reads
    // it: the nearest double.
    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        self.visit_f64(value as f64)
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        self.visit_f64(value as f64)
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        self.budget.value()?;
        // JSON has no infinity or NaN: YAML's `.inf` and `.nan` stay the words they are.
        Ok(Number::from_f64(value).map_or_else(|| Value::String(value.to_string()), Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        self.budget.value()?;
        self.budget.text(value)?;
        Ok(Value::String(value.to_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.budget.value()?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.budget.value()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ValueSeed { budget: self.budget })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.budget.value()?;
        let mut object = Map::new();
        let mut merged = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed { budget: self.budget })? {
            let value = map.next_value_seed(ValueSeed { budget: self.budget })?;
            if key == "<<" {
                merged.push(value);
            } else {
                object.insert(key, value);
            }
        }
        // A merge key's mappings fill in what the mapping does not say itself, the first
        // mapping of a list first (YAML 1.1's merge type, as OpenAPI documents use it).
        for merge in merged {
            let mappings = match merge {
                Value::Object(mapping) => vec![mapping],
                Value::Array(list) => list
                    .into_iter()
                    .map(|item| match item {
                        Value::Object(mapping) => Ok(mapping),
                        _ => Err(de::Error::custom("a merge key (<<) lists something other than a mapping")),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(de::Error::custom("a merge key (<<) names something other than a mapping")),
            };
            for mapping in mappings {
                for (key, value) in mapping {
                    object.entry(key).or_insert(value);
                }
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // A value with a tag of its own (`!include x`, `!!binary ...`): the value as written,
        // without the tag, which JSON has no place for.
        let (_tag, variant) = data.variant::<String>()?;
        variant.newtype_variant_seed(self)
    }
}

/// Reads a mapping key as the text it was written as, whatever YAML type it would have.
struct KeySeed<'b> {
    budget: &'b mut Budget,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a mapping key that is text, a number or a word, not a list or a mapping")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<String, E> {
        self.budget.text(value)?;
        Ok(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_the_text_written_and_scalars_keep_their_yaml_types() {
        let document = parse(
            b"openapi: 3.1.0\ninfo: {title: Dates, version: 1.0}\npaths:\n  /days:\n    get:\n      responses:\n        200: {description: ok}\n        4XX: {description: no}\nx-when: 2024-01-01\nx-keys: {true: yes, 1.50: f, ~: n, 0x10: h}\nx-inf: .inf\n",
        )
        .unwrap();
        assert_eq!(document["paths"]["/days"]["get"]["responses"]["200"], json!({"description": "ok"}));
        assert_eq!(document["paths"]["/days"]["get"]["responses"]["4XX"], json!({"description": "no"}));
        assert_eq!(document["openapi"], "3.1.0");
        assert_eq!(document["info"]["version"], json!(1.0));
        assert_eq!(document["x-when"], "2024-01-01");
        assert_eq!(document["x-keys"], json!({"true": "yes", "1.50": "f", "~": "n", "0x10": "h"}));
        assert_eq!(document["x-inf"], "inf");
        // Past 64 bits, as JSON reads the same text.
        let wide = parse(b"minimum: -9223372036854776000\nmaximum: 18446744073709551616\n").unwrap();
        let json: Value =
            serde_json::from_str(r#"{"minimum": -9223372036854776000, "maximum": 18446744073709551616}"#).unwrap();
        assert_eq!(wide, json);
    }

    #[test]
    fn anchors_aliases_and_merge_keys_resolve() {
        let document = parse(
            b"defaults: &defaults\n  type: string\n  maxLength: 10\nlimits: &limits {minLength: 1}\nname:\n  <<: *defaults\n  maxLength: 20\nboth:\n  <<: [*defaults, *limits]\n  format: email\nsame: *limits\n",
        )
        .unwrap();
        assert_eq!(document["name"], json!({"type": "string", "maxLength": 20}));
        assert_eq!(document["both"], json!({"type": "string", "maxLength": 10, "minLength": 1, "format": "email"}));
        assert_eq!(document["same"], json!({"minLength": 1}));
        assert!(parse(b"a: &x 1\nb:\n  <<: *x\n").unwrap_err().to_string().contains("merge key"));
    }

    #[test]
    fn a_billion_laughs_fails_quickly_with_a_sentence() {
        // Nine levels of ten aliases each: 10^9 strings from 400 bytes.
        let mut bomb =
            String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for pair in names.windows(2) {
            let (from, to) = (pair[0], pair[1]);
            bomb.push_str(&format!("{to}: &{to} [{}]\n", vec![format!("*{from}"); 10].join(",")));
        }
        let started = Instant::now();
        let error = parse(bomb.as_bytes()).unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
        assert_eq!(
            error,
            "its aliases are used more than 100 times for each part of the document, as an alias bomb does (repetition limit exceeded)"
        );

        // One wide anchor used many times, which the parser's own count of aliases lets by.
        let wide = format!("a: &a [{}]\nb: [{}]\n", vec!["1"; 100_000].join(","), vec!["*a"; 100_000].join(","));
        let started = Instant::now();
        let error = parse(wide.as_bytes()).unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
        assert!(error.contains("more than 4000000 values once its aliases are copied"), "{error}");

        // One long text used many times.
        let long = format!("a: &a {}\nb: [{}]\n", "x".repeat(1 << 20), vec!["*a"; 100].join(","));
        let error = parse(long.as_bytes()).unwrap_err().to_string();
        assert!(error.contains("bytes of text once its aliases are copied"), "{error}");
    }

    #[test]
    fn errors_say_line_and_column() {
        let error = parse(b"openapi: 3.0.0\npaths:\n  /a: [1\n  b: 2\n").unwrap_err().to_string();
        assert!(error.contains("line"), "{error}");
        let error = parse(b"? [a, b]\n: 1\n").unwrap_err().to_string();
        assert!(error.contains("line 1"), "{error}");
    }

    /// A YAML OpenAPI 3.1 document, read and imported as the gateway mounts it.
    #[test]
    fn a_yaml_openapi_document_mounts_as_tools() {
        let document = b"openapi: 3.1.0
info: {title: Files, version: 2024-01-01}
servers: [{url: 'https://files.example.com'}]
components:
  parameters:
    id: &id {name: id, in: path, required: true, schema: {type: string}}
paths:
  /files/{id}:
    get:
      operationId: getFile
      parameters: [{$ref: '#/components/parameters/id'}]
      responses:
        200: {description: The file.}
    delete:
      operationId: deleteFile
      parameters: [*id]
      responses: {204: {description: Gone.}}
";
        let (openapi, imported) = crate::rest::parse_and_import("files.yaml", document).unwrap();
        let operations = imported.operations;
        assert_eq!(openapi["info"]["version"], "2024-01-01");
        assert_eq!(openapi["paths"]["/files/{id}"]["get"]["responses"]["200"], json!({"description": "The file."}));
        let names: Vec<&str> = operations.iter().map(|operation| operation.name.as_str()).collect();
        assert_eq!(names, ["getFile", "deleteFile"]);
        assert_eq!(operations[1].input_schema["required"], json!(["id"]));
    }

    #[test]
    fn a_document_neither_json_nor_yaml_is_told_why() {
        let error = crate::rest::parse_and_import("api.json", b"{\"openapi\": \"3.1.0\",, }").unwrap_err();
        assert!(
            error.starts_with(
                "the OpenAPI document api.json is neither JSON (key must be a string at line 1 column 21)"
            ),
            "{error}"
        );
        let error = crate::rest::parse_and_import("api.yaml", b"openapi: 3.1.0\npaths: {\n  a: [\n").unwrap_err();
        assert!(error.starts_with("the OpenAPI document api.yaml is neither JSON nor YAML ("), "{error}");
        assert!(error.contains("line"), "{error}");
    }
}
