//! Any bytes as an OpenAPI document: the gateway's import reads them as tools or refuses them
//! with an error, never panics, never loops, and every tool it makes is one MCP can list.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fusion_gateway::openapi::{MAX_OPERATIONS, import};

fuzz_target!(|data: &[u8]| {
    let Ok(document) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(imported) = import(&document) else { return };
    let operations = imported.operations;
    assert!(!operations.is_empty() && operations.len() <= MAX_OPERATIONS);
    let mut names = std::collections::HashSet::new();
    for operation in &operations {
        let name = &operation.name;
        assert!(!name.is_empty() && name.len() <= 64, "{name:?}");
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name:?}");
        assert!(names.insert(name.clone()), "{name:?} twice");
        assert_eq!(operation.input_schema.get("type"), Some(&serde_json::json!("object")));
        // Each parameter is its own field of the input.
        let mut fields = std::collections::HashSet::new();
        for parameter in &operation.parameters {
            assert!(fields.insert(parameter.field.clone()), "{:?} twice", parameter.field);
        }
    }
});
