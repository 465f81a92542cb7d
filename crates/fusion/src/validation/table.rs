//! Every JSON Schema keyword with the sentence it gets, run through the real checker: each
//! row is a test of its exact sentence, and the table in `docs/validation.md` is generated
//! from the rows, so the page cannot drift from the code. Run with `UPDATE_VALIDATION_DOC=1`
//! to rewrite the page's table after changing a sentence.

use jsonschema::error::ValidationErrorKind;
use mcp_fusion_wire::{FieldPath, FieldProblem};
use serde_json::{Value, json};

use super::Checker;
use crate::input::DecodeError;

/// One keyword: a schema, what was sent, the line we write, and the reference
/// implementation's line (TypeScript MCP Fusion on Zod) where it has an equivalent.
struct Row {
    keyword: &'static str,
    schema: Value,
    sent: Value,
    ours: &'static str,
    reference: Option<&'static str>,
    /// Built from the error kind directly: the validator raises it under other drafts only
    /// (content keywords, `additionalItems`) or on conditions a test cannot provoke cheaply.
    kind: Option<fn() -> ValidationErrorKind>,
}

fn row(keyword: &'static str, schema: Value, sent: Value, ours: &'static str, reference: Option<&'static str>) -> Row {
    Row { keyword, schema, sent, ours, reference, kind: None }
}

fn rows() -> Vec<Row> {
    let currency = json!({"type": "string", "enum": ["EUR", "USD", "BRL"]});
    let id = json!({"type": "string", "pattern": "^inv_[a-z0-9_]+$", "examples": ["inv_2026_0001"]});
    vec![
        row(
            "type",
            json!({"properties": {"n": {"type": "integer"}}}),
            json!({"n": "x"}),
            "n: Invalid type. You sent: 'x'. Expected an integer.",
            Some("Expected number, received string. You sent: 'x'. Expected type: number."),
        ),
        row(
            "required (enum)",
            json!({"properties": {"currency": currency}, "required": ["currency"]}),
            json!({}),
            "currency: Missing required field. You sent: (missing). Expected one of 'EUR', 'USD', 'BRL'.",
            Some("Required. You sent: (missing). Expected type: string."),
        ),
        row(
            "required (format)",
            json!({"properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]}),
            json!({}),
            "email: Missing required field. You sent: (missing). Expected a valid email address, like name@example.com.",
            Some("Required. You sent: (missing). Expected type: string."),
        ),
        row(
            "required (pattern, example)",
            json!({"properties": {"id": id}, "required": ["id"]}),
            json!({}),
            "id: Missing required field. You sent: (missing). Expected a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_…'.",
            Some("Required. You sent: (missing). Expected type: string."),
        ),
        row(
            "required (pattern, example, description)",
            json!({"properties": {"id": {"type": "string", "pattern": "^inv_[a-z0-9_]+$", "examples": ["inv_2026_0001"], "description": "The invoice id, like `inv_2026_0001`."}}, "required": ["id"]}),
            json!({}),
            "id: Missing required field. You sent: (missing). Expected a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_…': the invoice id.",
            Some("Required. You sent: (missing). Expected type: string."),
        ),
        row(
            "required (bounds, description)",
            json!({"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many invoices per page."}}, "required": ["limit"]}),
            json!({}),
            "limit: Missing required field. You sent: (missing). Expected an integer from 1 to 100: how many invoices per page.",
            Some("Required. You sent: (missing). Expected type: number."),
        ),
        row(
            "dependentRequired",
            json!({"properties": {"card": {"type": "string"}, "cvc": {"type": "string", "pattern": "^[0-9]{3}$"}}, "dependentRequired": {"card": ["cvc"]}}),
            json!({"card": "4242"}),
            "cvc: Missing field, required because 'card' is sent. You sent: (missing). Expected a string matching the pattern /^[0-9]{3}$/.",
            None,
        ),
        row(
            "additionalProperties (spelling)",
            json!({"properties": {"name": {"type": "string"}}, "additionalProperties": false}),
            json!({"nmae": "Bob"}),
            "nmae: Unrecognized key 'nmae' (did you mean 'name'?). You sent: 'Bob'. Expected only known fields; rename it to 'name' or remove it.",
            Some("Unrecognized key(s) in object: 'nmae'. You sent: (missing). Remove unrecognized fields: 'nmae'."),
        ),
        row(
            "additionalProperties (meaning)",
            json!({"properties": {"limit": {"type": "integer", "description": "How many invoices per page, 1 to 100."}, "cursor": {"type": "string", "description": "The cursor of the next page."}}, "additionalProperties": false}),
            json!({"page_size": 2}),
            "page_size: Unrecognized key 'page_size' (did you mean 'limit'?). You sent: 2. Expected only known fields; provide the value as 'limit' instead.",
            Some(
                "Unrecognized key(s) in object: 'page_size'. You sent: (missing). Remove unrecognized fields: 'page_size'.",
            ),
        ),
        row(
            "additionalProperties (no match)",
            json!({"properties": {"limit": {"type": "integer", "description": "How many invoices per page, 1 to 100."}, "status": {"type": "string"}}, "additionalProperties": false}),
            json!({"zzz": true}),
            "zzz: Unrecognized key 'zzz'. You sent: true. Expected only the known fields 'limit' (how many invoices per page, 1 to 100), 'status'; remove it.",
            Some("Unrecognized key(s) in object: 'zzz'. You sent: (missing). Remove unrecognized fields: 'zzz'."),
        ),
        row(
            "unevaluatedProperties",
            json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
            json!({"a": 1, "b": 2}),
            "b: Unrecognized key 'b'. You sent: 2. Expected only the known fields 'a'; remove it.",
            None,
        ),
        row(
            "propertyNames",
            json!({"properties": {"tags": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}}}),
            json!({"tags": {"Urgent": true}}),
            "tags: Invalid key. You sent: 'Urgent'. Expected every key to be a string matching the pattern /^[a-z]+$/.",
            None,
        ),
        row(
            "enum",
            json!({"properties": {"currency": currency}}),
            json!({"currency": "eur"}),
            "currency: Invalid value. You sent: 'eur'. Expected one of 'EUR', 'USD', 'BRL'.",
            Some(
                "Invalid enum value. Expected 'EUR' | 'USD' | 'BRL', received 'eur'. You sent: 'eur'. Valid options: 'EUR', 'USD', 'BRL'.",
            ),
        ),
        row(
            "const",
            json!({"properties": {"v": {"const": 2}}}),
            json!({"v": 3}),
            "v: Invalid value. You sent: 3. Expected exactly 2.",
            Some("Invalid literal value, expected 2. You sent: 3. Expected exactly: 2."),
        ),
        row(
            "format",
            json!({"properties": {"email": {"type": "string", "format": "email"}}}),
            json!({"email": "not-an-email"}),
            "email: Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com.",
            Some("Invalid email. You sent: 'not-an-email'. Expected: a valid email address (e.g. user@example.com)."),
        ),
        row(
            "format (date)",
            json!({"properties": {"due": {"type": "string", "format": "date"}}}),
            json!({"due": "31/01/2026"}),
            "due: Invalid date format. You sent: '31/01/2026'. Expected a date as YYYY-MM-DD, like 2026-01-31.",
            Some("Invalid date. You sent: '31/01/2026'."),
        ),
        row(
            "pattern",
            json!({"properties": {"id": id}}),
            json!({"id": "INV-1"}),
            "id: Does not match the required pattern. You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_2026_0001'.",
            Some("Invalid. You sent: 'INV-1'. Value does not match the required pattern."),
        ),
        row(
            "minLength",
            json!({"properties": {"reason": {"type": "string", "minLength": 1}}}),
            json!({"reason": ""}),
            "reason: Too short. You sent: ''. Expected at least 1 character.",
            Some("String must contain at least 1 character(s). You sent: ''. Minimum length: 1 character."),
        ),
        row(
            "maxLength",
            json!({"properties": {"code": {"type": "string", "maxLength": 4}}}),
            json!({"code": "ABCDEFG"}),
            "code: Too long. You sent: 'ABCDEFG'. Expected at most 4 characters.",
            Some("String must contain at most 4 character(s). You sent: 'ABCDEFG'. Maximum length: 4 characters."),
        ),
        row(
            "minimum",
            json!({"properties": {"amount": {"type": "integer", "minimum": 1}}}),
            json!({"amount": 0}),
            "amount: Too small. You sent: 0. Expected at least 1.",
            Some("Number must be greater than or equal to 1. You sent: 0. Must be >= 1."),
        ),
        row(
            "maximum (a u32)",
            json!({"properties": {"n": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295u64}}}),
            json!({"n": 5_000_000_000u64}),
            "n: Too big. You sent: 5000000000. Expected at most 4294967295.",
            Some("Number must be less than or equal to 4294967295. You sent: 5000000000. Must be <= 4294967295."),
        ),
        row(
            "exclusiveMinimum",
            json!({"properties": {"p": {"type": "number", "exclusiveMinimum": 0}}}),
            json!({"p": 0}),
            "p: Too small. You sent: 0. Expected a number greater than 0.",
            Some("Number must be greater than 0. You sent: 0. Must be > 0."),
        ),
        row(
            "exclusiveMaximum",
            json!({"properties": {"p": {"type": "number", "exclusiveMaximum": 100}}}),
            json!({"p": 100}),
            "p: Too big. You sent: 100. Expected a number less than 100.",
            Some("Number must be less than 100. You sent: 100. Must be < 100."),
        ),
        row(
            "multipleOf",
            json!({"properties": {"q": {"type": "number", "multipleOf": 0.5}}}),
            json!({"q": 0.7}),
            "q: Not a multiple of 0.5. You sent: 0.7. Expected a multiple of 0.5.",
            Some("Number must be a multiple of 0.5. You sent: 0.7."),
        ),
        row(
            "minItems",
            json!({"properties": {"items": {"type": "array", "minItems": 1}}}),
            json!({"items": []}),
            "items: Too few items. You sent: array(0). Expected at least 1 item.",
            Some("Array must contain at least 1 element(s). You sent: array(0). Minimum 1 item."),
        ),
        row(
            "maxItems",
            json!({"properties": {"items": {"type": "array", "maxItems": 3}}}),
            json!({"items": [1, 2, 3, 4]}),
            "items: Too many items. You sent: array(4). Expected at most 3 items.",
            Some("Array must contain at most 3 element(s). You sent: array(4). Maximum 3 items."),
        ),
        row(
            "uniqueItems",
            json!({"properties": {"tags": {"type": "array", "uniqueItems": true}}}),
            json!({"tags": ["a", "a"]}),
            "tags: Items are not unique. You sent: array(2). Expected every item to be different.",
            None,
        ),
        row(
            "minProperties",
            json!({"properties": {"meta": {"type": "object", "minProperties": 1}}}),
            json!({"meta": {}}),
            "meta: Too few properties. You sent: {}. Expected at least 1 property.",
            None,
        ),
        row(
            "maxProperties",
            json!({"properties": {"meta": {"type": "object", "maxProperties": 1}}}),
            json!({"meta": {"a": 1, "b": 2}}),
            "meta: Too many properties. You sent: {\"a\":1,\"b\":2}. Expected at most 1 property.",
            None,
        ),
        row(
            "anyOf / oneOf (none)",
            json!({"properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}),
            json!({"v": 1.5}),
            "v: Matches none of the allowed shapes. You sent: 1.5. Expected one of: a string; an integer.",
            Some("Invalid input. You sent: 1.5. Value didn't match any of the expected formats."),
        ),
        row(
            "oneOf (several)",
            json!({"properties": {"v": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}),
            json!({"v": 3}),
            "v: Matches more than one of the allowed shapes. You sent: 3. Expected a value matching exactly one of them.",
            None,
        ),
        row(
            "not",
            json!({"properties": {"role": {"type": "string", "not": {"const": "root"}}}}),
            json!({"role": "root"}),
            "role: Not allowed here. You sent: 'root'. Expected anything but exactly 'root'.",
            None,
        ),
        row(
            "not (writeOnly)",
            json!({"properties": {"password": {"type": "string", "writeOnly": true, "not": {"const": "hunter2"}}}}),
            json!({"password": "hunter2"}),
            "password: Not allowed here. You sent: (redacted). Expected another value than the one the schema forbids.",
            None,
        ),
        row(
            "contains",
            json!({"properties": {"roles": {"type": "array", "contains": {"const": "owner"}}}}),
            json!({"roles": ["guest"]}),
            "roles: No item matches. You sent: array(1). Expected at least 1 item that is exactly 'owner'.",
            None,
        ),
        row(
            "minContains",
            json!({"properties": {"roles": {"type": "array", "contains": {"const": "owner"}, "minContains": 2}}}),
            json!({"roles": ["owner", "guest"]}),
            "roles: Too few items match. You sent: array(2). Expected at least 2 items that are exactly 'owner'.",
            None,
        ),
        row(
            "maxContains",
            json!({"properties": {"roles": {"type": "array", "contains": {"const": "owner"}, "maxContains": 1}}}),
            json!({"roles": ["owner", "owner"]}),
            "roles: Too many items match. You sent: array(2). Expected at most 1 item that is exactly 'owner'.",
            None,
        ),
        row(
            "prefixItems",
            json!({"properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}}}),
            json!({"point": [1, "2"]}),
            "point.1: Invalid type. You sent: '2'. Expected 2 (a number, without the quotes).",
            None,
        ),
        row(
            "items: false (after prefixItems)",
            json!({"properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}}}),
            json!({"point": [1, 2, 3]}),
            "point: More items than the schema describes. You sent: array(3). Expected at most 2 items.",
            None,
        ),
        row(
            "unevaluatedItems",
            json!({"properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}], "unevaluatedItems": false}}}),
            json!({"point": [1, 2, 3]}),
            "point: More items than the schema describes. You sent: array(3). Expected at most 1 item.",
            None,
        ),
        row(
            "dependentSchemas",
            json!({"properties": {"card": {}, "cvc": {}}, "dependentSchemas": {"card": {"properties": {"cvc": {"type": "string", "minLength": 3}}, "required": ["cvc"]}}}),
            json!({"card": "4242", "cvc": "1"}),
            "cvc: Too short (because 'card' is sent). You sent: '1'. Expected at least 3 characters.",
            None,
        ),
        row(
            "if / then",
            json!({"properties": {"kind": {"enum": ["card", "sepa"]}, "number": {"type": "string"}}, "if": {"properties": {"kind": {"const": "card"}}, "required": ["kind"]}, "then": {"required": ["number"]}}),
            json!({"kind": "card"}),
            "number: Missing required field (because 'kind' is 'card'). You sent: (missing). Expected a string.",
            None,
        ),
        row(
            "if / else",
            json!({"properties": {"kind": {"enum": ["card", "sepa"]}, "iban": {"type": "string"}}, "if": {"properties": {"kind": {"const": "card"}}, "required": ["kind"]}, "else": {"properties": {"iban": {"minLength": 15}}}}),
            json!({"kind": "sepa", "iban": "DE12"}),
            "iban: Too short (because 'kind' is not 'card'). You sent: 'DE12'. Expected at least 15 characters.",
            None,
        ),
        row(
            "false (a property)",
            json!({"properties": {"legacy": false}}),
            json!({"legacy": 1}),
            "legacy: This field is not accepted. You sent: 1. Expected the field left out.",
            None,
        ),
        row(
            "type (what a missing field would say)",
            json!({"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many invoices per page."}}}),
            json!({"limit": "ten"}),
            "limit: Invalid type. You sent: 'ten'. Expected an integer from 1 to 100: how many invoices per page.",
            None,
        ),
        row(
            "type (the right value, mistyped)",
            json!({"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100}, "code": {"type": "string"}}}),
            json!({"limit": "25", "code": 42}),
            "code: Invalid type. You sent: 42. Expected '42' (a string, in quotes).\nlimit: Invalid type. You sent: '25'. Expected 25 (an integer, without the quotes).",
            None,
        ),
        row(
            "type (mistyped, and out of range)",
            json!({"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100}}}),
            json!({"limit": "500"}),
            "limit: Invalid type. You sent: '500'. Expected an integer from 1 to 100.",
            None,
        ),
        row(
            "type (null for an optional field)",
            json!({"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many invoices per page."}}}),
            json!({"limit": null}),
            "limit: This field does not take null. You sent: null. Expected the field left out (it is optional), or an integer from 1 to 100: how many invoices per page.",
            None,
        ),
        row(
            "required (a usize)",
            json!({"properties": {"n": {"type": "integer", "format": "uint", "minimum": 0, "maximum": 18_446_744_073_709_551_615u64}}, "required": ["n"]}),
            json!({}),
            "n: Missing required field. You sent: (missing). Expected a non-negative integer.",
            None,
        ),
        row(
            "required (no schema of its own)",
            json!({"required": ["id"]}),
            json!({}),
            "id: Missing required field. You sent: (missing). Expected any value.",
            None,
        ),
        row(
            "required (a union: FastMCP's `str | int | None`)",
            json!({"properties": {"key": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}, "required": ["key"]}),
            json!({}),
            "key: Missing required field. You sent: (missing). Expected one of: a string; an integer.",
            None,
        ),
        row(
            "required (a union: FastMCP's `Optional[str]`, required)",
            json!({"properties": {"note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "A note."}}, "required": ["note"]}),
            json!({}),
            "note: Missing required field. You sent: (missing). Expected a string: a note.",
            None,
        ),
        row(
            "required (a union: Zod's `z.union`)",
            json!({"properties": {"target": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}]}}, "required": ["target"]}),
            json!({}),
            "target: Missing required field. You sent: (missing). Expected one of: a string; an object with the required field 'id'.",
            None,
        ),
        row(
            "required (a union: Zod's `z.discriminatedUnion`)",
            json!({"properties": {"payment": {"oneOf": [{"type": "object", "properties": {"kind": {"type": "string", "const": "card"}, "last4": {"type": "string"}}, "required": ["kind", "last4"]}, {"type": "object", "properties": {"kind": {"type": "string", "const": "pix"}, "key": {"type": "string"}}, "required": ["kind", "key"]}]}}, "required": ["payment"]}),
            json!({}),
            "payment: Missing required field. You sent: (missing). Expected one of: an object with the required fields 'kind', 'last4'; an object with the required fields 'kind', 'key'.",
            None,
        ),
        row(
            "required (a union of types)",
            json!({"properties": {"id": {"type": ["string", "integer"]}}, "required": ["id"]}),
            json!({}),
            "id: Missing required field. You sent: (missing). Expected a string or an integer.",
            None,
        ),
        row(
            "$ref",
            json!({"$defs": {"Address": {"properties": {"zip": {"type": "string", "description": "The postal code."}}, "required": ["zip"]}}, "properties": {"address": {"$ref": "#/$defs/Address"}}}),
            json!({"address": {}}),
            "address.zip: Missing required field. You sent: (missing). Expected a string: the postal code.",
            None,
        ),
        row(
            "unevaluatedProperties (behind $ref)",
            json!({"$defs": {"Address": {"properties": {"zip": {"type": "string"}, "city": {"type": "string"}}}}, "properties": {"address": {"$ref": "#/$defs/Address", "unevaluatedProperties": false}}}),
            json!({"address": {"zip": "1010", "zipp": "1011"}}),
            "address.zipp: Unrecognized key 'zipp'. You sent: '1011'. Expected only the known fields 'zip', 'city'; remove it.",
            None,
        ),
        row(
            "unevaluatedProperties (allOf)",
            json!({"allOf": [{"properties": {"foo": {"type": "string"}}, "required": ["foo"]}, {"properties": {"bar": {"type": "integer"}}}], "unevaluatedProperties": false}),
            json!({"foo": "a", "baz": 1}),
            "baz: Unrecognized key 'baz' (did you mean 'bar'?). You sent: 1. Expected only known fields; rename it to 'bar' or remove it.",
            None,
        ),
        row(
            "additionalProperties (patternProperties)",
            json!({"patternProperties": {"^x-": {}}, "additionalProperties": false}),
            json!({"y": 1}),
            "y: Unrecognized key 'y'. You sent: 1. Expected only keys matching /^x-/; remove it.",
            None,
        ),
        row(
            "propertyNames: false",
            json!({"properties": {"meta": {"propertyNames": false}}}),
            json!({"meta": {"a": 1}}),
            "meta.a: Unrecognized key 'a'. You sent: 1. Expected no fields here; remove it.",
            None,
        ),
        row(
            "oneOf (a discriminator picks the branch)",
            json!({"properties": {"pet": {"oneOf": [
                {"properties": {"kind": {"const": "cat"}, "meows": {"type": "integer"}}, "required": ["kind"]},
                {"properties": {"kind": {"const": "dog"}, "barks": {"type": "boolean"}}, "required": ["kind", "barks"]}
            ], "unevaluatedProperties": false}}}),
            json!({"pet": {"kind": "dog", "meows": 2}}),
            "pet.barks: Missing required field. You sent: (missing). Expected a boolean.\npet.meows: Unrecognized key 'meows'. You sent: 2. Expected only the known fields 'kind', 'barks'; remove it.",
            None,
        ),
        row(
            "oneOf (an unknown discriminator value)",
            json!({"properties": {"pet": {"oneOf": [
                {"properties": {"kind": {"const": "cat"}, "meows": {"type": "integer"}}, "required": ["kind"]},
                {"properties": {"kind": {"const": "dog"}, "barks": {"type": "boolean"}}, "required": ["kind"]}
            ]}}}),
            json!({"pet": {"kind": "cow"}}),
            "pet.kind: Invalid value. You sent: 'cow'. Expected one of 'cat', 'dog'.",
            None,
        ),
        row(
            "anyOf (the closest branch)",
            json!({"properties": {"shape": {"anyOf": [
                {"properties": {"radius": {"type": "number"}}, "required": ["radius"]},
                {"properties": {"side": {"type": "number"}, "unit": {"type": "string"}}, "required": ["side", "unit"]}
            ]}}}),
            json!({"shape": {"radius": "big"}}),
            "shape: Matches none of the allowed shapes. You sent: {\"radius\":\"big\"}. Expected an object with the required field 'radius' (the closest: fix what the other lines say), or else an object with the required fields 'side', 'unit'.\nshape.radius: Invalid type. You sent: 'big'. Expected a number.",
            None,
        ),
        row(
            "not (anything)",
            json!({"properties": {"v": {"not": {}}}}),
            json!({"v": 1}),
            "v: Not allowed here. You sent: 1. Expected no value at all: the schema refuses every value here.",
            None,
        ),
        row(
            "false (in allOf)",
            json!({"properties": {"v": {"allOf": [false]}}}),
            json!({"v": 1}),
            "v: No value is accepted here. You sent: 1. Expected no value at all: the schema refuses every value at this place.",
            None,
        ),
        row(
            "const (an array)",
            json!({"properties": {"v": {"const": [1, 2]}}}),
            json!({"v": [1]}),
            "v: Invalid value. You sent: array(1). Expected exactly [1,2].",
            None,
        ),
        row(
            "minContains (written 2.0)",
            json!({"properties": {"roles": {"contains": {"const": "owner"}, "minContains": 2.0}}}),
            json!({"roles": ["owner"]}),
            "roles: Too few items match. You sent: array(1). Expected at least 2 items that are exactly 'owner'.",
            None,
        ),
        row(
            "maxContains (an empty array)",
            json!({"properties": {"roles": {"contains": {"const": "owner"}, "maxContains": 1}}}),
            json!({"roles": []}),
            "roles: No item matches. You sent: array(0). Expected at least 1 item that is exactly 'owner'.",
            None,
        ),
        row(
            "contains (no type)",
            json!({"properties": {"n": {"contains": {"multipleOf": 3}}}}),
            json!({"n": [2, 4]}),
            "n: No item matches. You sent: array(2). Expected at least 1 item that is a multiple of 3.",
            None,
        ),
        Row {
            kind: Some(|| ValidationErrorKind::ContentEncoding { content_encoding: "base64".into() }),
            ..row(
                "contentEncoding",
                json!({"properties": {"blob": {"type": "string", "contentEncoding": "base64"}}}),
                json!({"blob": "!!"}),
                "blob: Not valid base64. You sent: '!!'. Expected a string in base64 encoding.",
                None,
            )
        },
        Row {
            kind: Some(|| ValidationErrorKind::ContentMediaType { content_media_type: "application/json".into() }),
            ..row(
                "contentMediaType",
                json!({"properties": {"doc": {"type": "string", "contentMediaType": "application/json"}}}),
                json!({"doc": "{oops"}),
                "doc: Not valid application/json content. You sent: '{oops'. Expected a string holding application/json.",
                None,
            )
        },
        Row {
            kind: Some(|| ValidationErrorKind::AdditionalItems { limit: 2 }),
            ..row(
                "additionalItems",
                json!({"properties": {"pair": {"type": "array", "additionalItems": false}}}),
                json!({"pair": [1, 2, 3]}),
                "pair: More items than the schema describes. You sent: array(3). Expected at most 2 items.",
                None,
            )
        },
        Row {
            kind: Some(|| ValidationErrorKind::RegexEngineFailure { message: "backtrack limit".into() }),
            ..row(
                "pattern (not checkable)",
                json!({"properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}),
                json!({"s": "aaaa!"}),
                "s: Could not be checked against the required pattern. You sent: 'aaaa!'. Expected a shorter or simpler string matching the pattern /^(a+)+$/.",
                None,
            )
        },
        Row {
            kind: Some(|| ValidationErrorKind::Custom { keyword: "x-even".into(), message: "3 is odd".into() }),
            ..row(
                "a custom keyword",
                json!({"properties": {"n": {"type": "integer", "x-even": true}}}),
                json!({"n": 3}),
                "n: Fails the schema's 'x-even' rule. You sent: 3. Expected a value that satisfies 'x-even': true.",
                None,
            )
        },
    ]
}

/// The line the checker writes for a row.
fn line_of(row: &Row) -> String {
    let checker = Checker::new(row.schema.as_object().expect("an object schema"), Vec::new(), super::Formats::Asserted)
        .expect("it compiles");
    let problems = match row.kind {
        None => checker.check(&row.sent),
        Some(kind) => {
            let (field, value) = row.sent.as_object().and_then(|o| o.iter().next()).expect("one field");
            let path = FieldPath::root().key(field.as_str());
            let pointer = format!("/properties/{field}/{}", row.keyword);
            let problem = checker.keyword_problem(&kind(), &pointer, value, &path);
            vec![FieldProblem::new(&path, &problem, &checker.sent(&path, Some(value)))]
        }
    };
    assert!(!problems.is_empty(), "{}: no problem", row.keyword);
    problems.iter().map(|p| format!("{}: {}", p.name, p.text)).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_keyword_has_its_own_sentence() {
    let wrong: Vec<String> = rows()
        .iter()
        .filter(|row| line_of(row) != row.ours)
        .map(|row| format!("{}:\n  written: {}\n  table:   {}", row.keyword, line_of(row), row.ours))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_value_the_type_refuses_is_said_from_the_schema() {
    let schema = json!({"properties": {"code": {"type": "string", "description": "An uppercase code, like `AB`."}}});
    let checker = Checker::new(schema.as_object().unwrap(), Vec::new(), super::Formats::Asserted).unwrap();
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Input {
        code: Upper,
    }
    #[derive(Debug)]
    struct Upper;
    impl<'de> serde::Deserialize<'de> for Upper {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Upper, D::Error> {
            let text = String::deserialize(d)?;
            Err(serde::de::Error::custom(format!("not uppercase: {text} (a secret the decoder quotes)")))
        }
    }
    let sent = json!({"code": "ab"});
    let error = DecodeError::decode::<Input>(&sent).unwrap_err();
    assert!(error.message().contains("a secret the decoder quotes"));
    let problems = checker.decode_problem(&error, &sent);
    assert_eq!(
        format!("{}: {}", problems[0].name, problems[0].text),
        "code: Not accepted by the action. You sent: 'ab'. Expected a value the action accepts: a string (an uppercase code, like `AB`)."
    );
}

/// The generated table, as it stands in `docs/validation.md` between its markers.
fn table() -> String {
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', "<br>");
    let mut out =
        String::from("| keyword | schema | sent | our sentence | the reference's sentence |\n|---|---|---|---|---|\n");
    for row in rows() {
        let ours = line_of(&row);
        out.push_str(&format!(
            "| `{}` | `{}` | `{}` | {} | {} |\n",
            row.keyword,
            cell(&row.schema.to_string()),
            cell(&row.sent.to_string()),
            cell(&ours),
            row.reference.map(cell).unwrap_or_else(|| "—".into()),
        ));
    }
    out
}

#[test]
fn the_documented_table_is_the_one_the_code_writes() {
    const START: &str = "<!-- keyword table: generated -->\n";
    const END: &str = "<!-- end of keyword table -->";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/validation.md");
    let page = std::fs::read_to_string(path).expect("docs/validation.md exists");
    let (before, rest) = page.split_once(START).expect("the page has the start marker");
    let (_, after) = rest.split_once(END).expect("the page has the end marker");
    let generated = format!("{before}{START}{}{END}{after}", table());
    if std::env::var_os("UPDATE_VALIDATION_DOC").is_some() {
        std::fs::write(path, &generated).expect("the page is writable");
        return;
    }
    assert!(
        page == generated,
        "docs/validation.md's keyword table differs from what the code writes: run \
         `UPDATE_VALIDATION_DOC=1 cargo test -p mcp-fusion --lib table` and commit the page"
    );
}
