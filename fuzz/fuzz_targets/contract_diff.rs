//! Lockfiles of any bytes, and contract diffs of arbitrary schemas.
//!
//! As text, the input is a lockfile (seeds are real ones): reading it never panics, and one
//! that reads writes back to text that reads as the same lockfile. As entropy, it builds two
//! sets of contracts whose schemas lean on the keywords the diff looks into: diffing them
//! never panics, and each set diffed with itself has no change.

#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion_contract::{ActionContract, Contracts, Lockfile, ToolContract, diff_contracts};
use mcp_fusion_fuzz::{object, string, value};
use serde_json::{Map, Value};

const WORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "default",
    "description",
    "title",
    "examples",
    "deprecated",
    "writeOnly",
    "readOnlyHint",
    "destructiveHint",
    "action",
    "string",
    "object",
    "integer",
    "null",
];

fn schema(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(if u.ratio(1, 8)? { value(u, WORDS, 0)? } else { Value::Object(object(u, WORDS, 0)?) })
}

fn annotations(u: &mut Unstructured<'_>) -> Result<Map<String, Value>> {
    object(u, WORDS, 3)
}

fn optional_text(u: &mut Unstructured<'_>) -> Result<Option<String>> {
    Ok(if u.arbitrary()? { Some(string(u)?) } else { None })
}

fn contracts(u: &mut Unstructured<'_>) -> Result<Contracts> {
    let mut contracts = BTreeMap::new();
    for _ in 0..u.int_in_range(0..=3usize)? {
        let name = if u.arbitrary()? { u.choose(&["billing", "crm"])?.to_string() } else { string(u)? };
        let mut actions = BTreeMap::new();
        for _ in 0..u.int_in_range(0..=3usize)? {
            let action = if u.arbitrary()? { u.choose(&["get", "list", "pay"])?.to_string() } else { string(u)? };
            let contract = ActionContract {
                description: optional_text(u)?,
                input_schema: schema(u)?,
                output_schema: if u.arbitrary()? { Some(schema(u)?) } else { None },
                annotations: annotations(u)?,
            };
            actions.insert(action, contract);
        }
        let contract = ToolContract {
            name: name.clone(),
            title: optional_text(u)?,
            description: optional_text(u)?,
            input_schema: schema(u)?,
            output_schema: if u.arbitrary()? { Some(schema(u)?) } else { None },
            annotations: annotations(u)?,
            actions,
        };
        contracts.insert(name, contract);
    }
    Ok(contracts)
}

fn assert_no_change_with_itself(contracts: &Contracts) {
    let diff = diff_contracts(contracts, contracts);
    assert!(diff.is_empty(), "{contracts:#?}\n{diff:#?}");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(lockfile) = Lockfile::parse(text)
    {
        let written = lockfile.to_canonical_json();
        let again = Lockfile::parse(&written).unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert_eq!(again, lockfile, "{written}");
        assert_no_change_with_itself(&lockfile.contracts);
    }

    let mut u = Unstructured::new(data);
    let (Ok(old), Ok(new)) = (contracts(&mut u), contracts(&mut u)) else { return };
    assert_no_change_with_itself(&old);
    assert_no_change_with_itself(&new);
    let _ = diff_contracts(&old, &new).to_json();
    let _ = diff_contracts(&new, &old).to_json();
});
