//! The check that keeps the crate's modules in their layers: every `crate::` path of a
//! top-level module names a module of a lower layer, as `docs/layers.md` draws them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers as drawn: module → layer.
fn drawn() -> BTreeMap<String, usize> {
    let table = include_str!("../docs/layers.md");
    let mut layers = BTreeMap::new();
    for row in table.lines().filter(|line| line.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(layer) = cells[1].parse::<usize>() else { continue };
        for module in cells[2].split('`').skip(1).step_by(2) {
            assert!(layers.insert(module.to_owned(), layer).is_none(), "{module} is drawn in two layers");
        }
    }
    layers
}

/// The top-level modules and the files of each, read from `src`.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            let mut files = Vec::new();
            collect(&path, &mut files);
            if !files.is_empty() {
                modules.entry(name).or_insert_with(Vec::new).extend(files);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") && name != "lib" && name != "layers" {
            modules.entry(name).or_insert_with(Vec::new).push(path);
        }
    }
    modules
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The crate-root names `lib.rs` re-exports (`pub use server::FusionServer`), with their
/// module, so `crate::FusionServer` counts as a use of `server`.
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(at) = statement.rfind("pub use ") else { continue };
        let path = &statement[at + "pub use ".len()..];
        let Some((module, rest)) = path.split_once("::") else { continue };
        let rest = rest.trim_start_matches('{').trim_end_matches('}');
        for item in rest.split(',') {
            let item = item.trim();
            let name = item.rsplit("::").next().unwrap_or(item);
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    names
}

/// The library code of a file: comments dropped, and the test module at its end.
fn library_code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or(text);
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The first segment of each path after `crate::`, braces of a `use crate::{a, b::c}` opened.
fn used_segments(code: &str) -> Vec<String> {
    let mut used = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let mut segment = String::new();
            let mut top = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => top.push(std::mem::take(&mut segment)),
                    _ if depth == 1 => segment.push(c),
                    _ => {}
                }
            }
            top.push(segment);
            used.extend(top.iter().map(|item| first_segment(item.trim())));
        } else {
            used.push(first_segment(after));
        }
        rest = after;
    }
    used.retain(|segment| !segment.is_empty());
    used
}

fn first_segment(path: &str) -> String {
    path.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

#[test]
fn every_module_uses_only_the_layers_below_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = drawn();
    let modules = modules(&src);
    let roots = root_names(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut wrong = Vec::new();
    for (module, files) in &modules {
        let Some(&layer) = layers.get(module) else {
            wrong.push(format!(
                "`{module}` is in no layer: add it to docs/layers.md, in the lowest layer its uses allow"
            ));
            continue;
        };
        for file in files {
            let code = library_code(&fs::read_to_string(file).unwrap());
            for segment in used_segments(&code) {
                let target = roots.get(&segment).unwrap_or(&segment);
                let Some(&used) = layers.get(target) else { continue };
                if target != module && used >= layer {
                    let file = file.strip_prefix(&src).unwrap().display();
                    wrong.push(format!(
                        "`{module}` (layer {layer}) uses `{target}` (layer {used}) in src/{file}: a module uses only the layers below its own; move what it needs down, or the module up"
                    ));
                }
            }
        }
    }
    for module in layers.keys().filter(|module| !modules.contains_key(*module)) {
        wrong.push(format!("docs/layers.md draws `{module}`, which is not a module of src"));
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_reads_grouped_and_root_paths() {
    let code = "use crate::{auth::Caller, server::{a, b}, Ctx};\nlet x = crate::guard::Stage::Auth;";
    assert_eq!(used_segments(code), ["auth", "server", "Ctx", "guard"]);
    let roots = root_names("pub use server::{FusionServer, ServerBuilder};\npub use context::{CallInfo as Info};");
    assert_eq!(roots.get("ServerBuilder").map(String::as_str), Some("server"));
    assert_eq!(roots.get("Info").map(String::as_str), Some("context"));
    assert_eq!(library_code("use crate::a; // crate::b\n#[cfg(test)]\nmod tests { use crate::c; }"), "use crate::a; ");
}
