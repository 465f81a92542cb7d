//! Lockfiles of any bytes, and contract diffs of arbitrary schemas.
//!
//! As text, the input is a lockfile (seeds are real ones): reading it never panics, and one
//! that reads writes back to text that reads as the same lockfile. As entropy, it builds two
//! lockfiles — tools, prompts and resource templates — whose schemas lean on the keywords the
//! diff looks into: diffing them never panics, each diffed with itself has no change, and each
//! written reads back the same.

#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion_contract::{
    ActionContract, ArgumentContract, Contracts, Lockfile, PromptContract, PromptContracts, ResourceTemplateContract,
    ResourceTemplateContracts, ToolContract, diff_lockfiles,
};
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

fn optional_schema(u: &mut Unstructured<'_>) -> Result<Option<Value>> {
    Ok(if u.arbitrary()? { Some(schema(u)?) } else { None })
}

fn prompts(u: &mut Unstructured<'_>) -> Result<PromptContracts> {
    let mut prompts = BTreeMap::new();
    for _ in 0..u.int_in_range(0..=2usize)? {
        let name = if u.arbitrary()? { u.choose(&["dunning_letter", "summary"])?.to_string() } else { string(u)? };
        let mut arguments = Vec::new();
        for _ in 0..u.int_in_range(0..=3usize)? {
            arguments.push(ArgumentContract {
                name: if u.arbitrary()? { u.choose(&["id", "tone"])?.to_string() } else { string(u)? },
                title: optional_text(u)?,
                description: optional_text(u)?,
                required: u.arbitrary()?,
            });
        }
        let contract = PromptContract {
            name: name.clone(),
            title: optional_text(u)?,
            description: optional_text(u)?,
            arguments,
            input_schema: optional_schema(u)?,
        };
        prompts.insert(name, contract);
    }
    Ok(prompts)
}

fn templates(u: &mut Unstructured<'_>) -> Result<ResourceTemplateContracts> {
    let mut templates = BTreeMap::new();
    for _ in 0..u.int_in_range(0..=2usize)? {
        let uri = if u.arbitrary()? {
            u.choose(&["billing://invoices/{id}", "docs://{page}"])?.to_string()
        } else {
            string(u)?
        };
        let contract = ResourceTemplateContract {
            uri_template: uri.clone(),
            name: string(u)?,
            title: optional_text(u)?,
            description: optional_text(u)?,
            mime_type: optional_text(u)?,
            annotations: annotations(u)?,
            input_schema: optional_schema(u)?,
        };
        templates.insert(uri, contract);
    }
    Ok(templates)
}

fn lockfile(u: &mut Unstructured<'_>) -> Result<Lockfile> {
    Ok(Lockfile::new(contracts(u)?).with_prompts(prompts(u)?).with_resource_templates(templates(u)?))
}

fn assert_no_change_with_itself(lockfile: &Lockfile) {
    let diff = diff_lockfiles(lockfile, lockfile);
    assert!(diff.is_empty(), "{lockfile:#?}\n{diff:#?}");
}

/// `lockfile` written reads back, and writes the same bytes again; the lockfile read back.
fn assert_reads_back(lockfile: &Lockfile) -> Lockfile {
    let written = lockfile.to_canonical_json();
    let again = Lockfile::parse(&written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(again.to_canonical_json(), written);
    again
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(lockfile) = Lockfile::parse(text)
    {
        // Read from text, it is already as a reader sees it: it reads back equal.
        assert_eq!(assert_reads_back(&lockfile), lockfile);
        assert_no_change_with_itself(&lockfile);
    }

    let mut u = Unstructured::new(data);
    let (Ok(old), Ok(new)) = (lockfile(&mut u), lockfile(&mut u)) else { return };
    for lockfile in [&old, &new] {
        assert_no_change_with_itself(lockfile);
        // Built in code, it may hold what a reader normalizes (a `null` schema reads as none):
        // what it reads back as is the same contracts to a diff.
        assert!(diff_lockfiles(lockfile, &assert_reads_back(lockfile)).is_empty());
    }
    let _ = diff_lockfiles(&old, &new).to_json();
    let _ = diff_lockfiles(&new, &old).to_json();
});
