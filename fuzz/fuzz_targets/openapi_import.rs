//! Any bytes as an OpenAPI document: the gateway's import reads them as tools or refuses them
//! with an error, never panics, never loops, and every tool it makes is one MCP can list. A
//! Swagger 2.0 document is converted first, as the gateway does, and the conversion never panics
//! either.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fusion_gateway::openapi::{MAX_OPERATIONS, import};
use mcp_fusion_gateway::swagger::{convert, is_swagger_2};

fuzz_target!(|data: &[u8]| {
    let Ok(document) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let document = match document.get("swagger") {
        Some(version) if document.get("openapi").is_none() && is_swagger_2(version) => {
            let Ok(converted) = convert(&document) else { return };
            assert_eq!(converted["openapi"], "3.0.3");
            converted
        }
        _ => document,
    };
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
