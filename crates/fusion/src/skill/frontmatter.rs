//! The frontmatter of a `SKILL.md`: the YAML between the `---` lines at the very top, read into
//! a JSON object kept as its author wrote it (fields in their order, unknown fields included)
//! and checked against the Agent Skills specification's rules.

use serde_json::{Map, Number, Value};

use super::error::SkillError;

/// The most characters a skill's `name` holds.
pub const MAX_NAME_CHARS: usize = 64;
/// The most characters a skill's `description` holds.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The most characters a skill's `compatibility` holds.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// What the rule on `name` asks for, as the refusals say it.
const NAME_RULE: &str = "1 to 64 characters from a-z, 0-9 and -, not starting or ending with - and without --, the same as the skill's directory";

/// A skill's frontmatter: every field its author wrote, in the author's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    fields: Map<String, Value>,
}

impl Frontmatter {
    /// The skill's name (the name of its directory).
    pub fn name(&self) -> &str {
        self.fields.get("name").and_then(Value::as_str).unwrap_or_default()
    }

    /// What the skill does and when to use it.
    pub fn description(&self) -> &str {
        self.fields.get("description").and_then(Value::as_str).unwrap_or_default()
    }

    /// Every field, as written.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }
}

/// Where a `SKILL.md` is, for its refusals: the file as they name it, and the name its skill
/// must bear.
pub(crate) struct Source<'a> {
    /// The file as refusals name it (a path on disk, or a URI).
    pub file: &'a str,
    /// The skill's directory name, which its `name` must equal.
    pub directory: &'a str,
    /// Declared in Rust (`Skill::new`), not found on disk: the fix names the code.
    pub in_rust: bool,
}

/// Reads and checks the frontmatter of `text`, the bytes of a `SKILL.md`.
pub(crate) fn read(text: &[u8], source: &Source<'_>) -> Result<Frontmatter, SkillError> {
    let file = source.file.to_owned();
    let text = std::str::from_utf8(text).map_err(|_| SkillError::NotUtf8 { file: file.clone() })?;
    let yaml = block(text, &file)?;
    let fields = parse(yaml, &file)?;
    let checker = Checker { source, yaml };
    checker.name(&fields)?;
    checker.description(&fields)?;
    checker.optional_text(&fields, "license", (None, "a string"))?;
    let compatibility = (Some(MAX_COMPATIBILITY_CHARS), "a string of 1 to 500 characters");
    checker.optional_text(&fields, "compatibility", compatibility)?;
    checker.metadata(&fields)?;
    checker.allowed_tools(&fields)?;
    Ok(Frontmatter { fields })
}

/// The frontmatter block, its opening `---` line included (so the YAML reader's line numbers
/// are the file's), without the closing one.
fn block<'t>(text: &'t str, file: &str) -> Result<&'t str, SkillError> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if !is_fence(first) {
        return Err(SkillError::NoFrontmatter { file: file.to_owned(), found: opening(first) });
    }
    let mut end = first.len();
    for line in lines {
        if is_fence(line) {
            return Ok(&text[..end]);
        }
        end += line.len();
    }
    Err(SkillError::UnclosedFrontmatter { file: file.to_owned() })
}

/// A line `---`, with nothing after it but spaces and the line's end.
fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---"
}

/// What a file starts with instead of `---`, as a refusal says it.
fn opening(first: &str) -> String {
    let line = first.trim_end_matches(['\n', '\r']);
    if line.starts_with('\u{feff}') {
        return "a byte-order mark (save it as UTF-8 without BOM)".to_owned();
    }
    if line.trim().is_empty() {
        return if first.is_empty() { "nothing (the file is empty)".to_owned() } else { "an empty line".to_owned() };
    }
    let shown: String = line.chars().take(60).collect();
    let cut = if shown.len() < line.len() { "..." } else { "" };
    format!("the line {shown:?}{cut}")
}

/// The YAML of the block as a JSON object, or why it is none.
fn parse(yaml: &str, file: &str) -> Result<Map<String, Value>, SkillError> {
    let refused = |line: Option<u32>, reason: String, help: &str| SkillError::Yaml {
        file: file.to_owned(),
        line,
        reason,
        help: help.to_owned(),
    };
    let value = yaml_serde::from_str::<yaml_serde::Value>(yaml).map_err(|error| {
        let help = "fix the YAML there; a value holding `: `, or starting with one of `[{&*!|>'\"%@`, goes in quotes";
        refused(error.location().and_then(|at| u32::try_from(at.line()).ok()), error.to_string(), help)
    })?;
    match json(value, "") {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(refused(
            Some(2),
            format!("it is {}, not fields", shown(&other)),
            "write one `field: value` per line (`name: ...`, `description: ...`)",
        )),
        Err((path, why)) => {
            let reason = if path.is_empty() { why } else { format!("`{path}` holds {why}") };
            Err(refused(None, reason, "write it as a string, a number, a boolean, a list or a mapping of those"))
        }
    }
}

/// `value` as JSON; the path of what JSON cannot hold (`metadata.x`), and what it is, if not.
fn json(value: yaml_serde::Value, path: &str) -> Result<Value, (String, String)> {
    use yaml_serde::Value as Yaml;
    Ok(match value {
        Yaml::Null => Value::Null,
        Yaml::Bool(flag) => Value::Bool(flag),
        Yaml::Number(number) => {
            number_json(&number).ok_or_else(|| (path.to_owned(), format!("the number {number}")))?
        }
        Yaml::String(text) => Value::String(text),
        Yaml::Sequence(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(index, item)| json(item, &format!("{path}[{index}]")))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(mapping) => {
            let mut fields = Map::new();
            for (key, item) in mapping {
                let Yaml::String(key) = key else {
                    return Err((path.to_owned(), format!("a key that is not text ({key:?}); keys are text")));
                };
                let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                fields.insert(key, json(item, &inner)?);
            }
            Value::Object(fields)
        }
        Yaml::Tagged(tagged) => return Err((path.to_owned(), format!("a value tagged {}", tagged.tag))),
    })
}

/// A YAML number as JSON: none for infinities and NaN, which JSON has no way to write.
fn number_json(number: &yaml_serde::Number) -> Option<Value> {
    if let Some(int) = number.as_i64() {
        return Some(Value::Number(int.into()));
    }
    if let Some(int) = number.as_u64() {
        return Some(Value::Number(int.into()));
    }
    number.as_f64().and_then(Number::from_f64).map(Value::Number)
}

/// Checks the fields of one `SKILL.md`.
struct Checker<'a> {
    source: &'a Source<'a>,
    /// The frontmatter's text, to find a field's line.
    yaml: &'a str,
}

impl Checker<'_> {
    /// A refusal of `field` (at the line of its top-level key).
    fn refuse(&self, field: &str, found: String, expected: &'static str, help: String) -> SkillError {
        let key = field.split(['.', '[']).next().unwrap_or(field);
        SkillError::Field {
            file: self.source.file.to_owned(),
            line: line_of(self.yaml, key),
            field: field.to_owned(),
            found,
            expected,
            help,
        }
    }

    fn name(&self, fields: &Map<String, Value>) -> Result<(), SkillError> {
        let directory = self.source.directory;
        let write = format!("write `name: {directory}`");
        let name = match fields.get("name") {
            None => return Err(self.refuse("name", "missing".into(), NAME_RULE, write)),
            Some(Value::String(name)) => name,
            Some(other) => return Err(self.refuse("name", shown(other), NAME_RULE, write)),
        };
        if let Some(broken) = name_problem(name) {
            let help = match suggested_name(name) {
                Some(fixed) if fixed == directory => write,
                Some(fixed) => format!("write `name: {fixed}` and name the skill's directory the same"),
                None => {
                    "choose a name of lowercase letters, digits and hyphens, and name the skill's directory the same"
                        .to_owned()
                }
            };
            return Err(self.refuse("name", format!("{} ({broken})", shown_text(name)), NAME_RULE, help));
        }
        if name != directory {
            let (found, help) = if self.source.in_rust {
                (
                    format!("{name:?}, but the skill is declared as {directory:?}"),
                    format!("{write}, or declare it as `Skill::new({name:?}, ..)`"),
                )
            } else {
                (
                    format!("{name:?}, but its directory is named {directory:?}"),
                    format!("{write}, or rename the directory to {name:?}"),
                )
            };
            return Err(self.refuse("name", found, "the name of the skill's directory", help));
        }
        Ok(())
    }

    fn description(&self, fields: &Map<String, Value>) -> Result<(), SkillError> {
        let expected = "1 to 1024 characters saying what the skill does and when to use it";
        let help = "write `description: <what it does>. Use it when <situation>.`".to_owned();
        match fields.get("description") {
            None => Err(self.refuse("description", "missing".into(), expected, help)),
            Some(Value::String(text)) if text.trim().is_empty() => {
                Err(self.refuse("description", "blank".into(), expected, help))
            }
            Some(Value::String(text)) if text.chars().count() > MAX_DESCRIPTION_CHARS => Err(self.refuse(
                "description",
                format!("{} characters long", text.chars().count()),
                expected,
                "shorten it; put the details in the body of SKILL.md, which is read once the skill is used".into(),
            )),
            Some(Value::String(_)) => Ok(()),
            Some(other) => Err(self.refuse("description", shown(other), expected, help)),
        }
    }

    /// An optional text field: a non-empty string of at most `max` characters (which
    /// `expected` says).
    fn optional_text(
        &self,
        fields: &Map<String, Value>,
        field: &str,
        (max, expected): (Option<usize>, &'static str),
    ) -> Result<(), SkillError> {
        let help = format!("write `{field}: <text>`, in quotes if it holds `: `, or leave the field out");
        match fields.get(field) {
            None => Ok(()),
            Some(Value::String(text)) if text.is_empty() => Err(self.refuse(field, "empty".into(), expected, help)),
            Some(Value::String(text)) if max.is_some_and(|max| text.chars().count() > max) => {
                let found = format!("{} characters long", text.chars().count());
                Err(self.refuse(field, found, expected, "shorten it".into()))
            }
            Some(Value::String(_)) => Ok(()),
            Some(other) => Err(self.refuse(field, shown(other), expected, help)),
        }
    }

    /// `metadata`: a mapping from text to text.
    fn metadata(&self, fields: &Map<String, Value>) -> Result<(), SkillError> {
        let expected = "a mapping from string keys to string values";
        let entries = match fields.get("metadata") {
            None => return Ok(()),
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                let help = "write `metadata:` then one indented `key: \"value\"` per line".to_owned();
                return Err(self.refuse("metadata", shown(other), expected, help));
            }
        };
        match entries.iter().find(|(_, value)| !value.is_string()) {
            None => Ok(()),
            Some((key, value)) => {
                let quoted = match value {
                    Value::Number(_) | Value::Bool(_) => format!("write `{key}: \"{value}\"` (in quotes)"),
                    _ => format!("write `{key}: \"<text>\"`; metadata values are strings"),
                };
                Err(self.refuse(&format!("metadata.{key}"), shown(value), "a string", quoted))
            }
        }
    }

    /// `allowed-tools`: a space-separated string, or a list of strings.
    fn allowed_tools(&self, fields: &Map<String, Value>) -> Result<(), SkillError> {
        let expected = "a space-separated string of tools (`Bash(git:*) Read`) or a list of strings";
        let help = "write `allowed-tools: Bash(git:*) Read`".to_owned();
        match fields.get("allowed-tools") {
            None | Some(Value::String(_)) => Ok(()),
            Some(Value::Array(items)) => match items.iter().position(|item| !item.is_string()) {
                None => Ok(()),
                Some(index) => {
                    Err(self.refuse(&format!("allowed-tools[{index}]"), shown(&items[index]), "a string", help))
                }
            },
            Some(other) => Err(self.refuse("allowed-tools", shown(other), expected, help)),
        }
    }
}

/// What breaks the naming rule in `name`, if anything.
fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars == 0 {
        return Some("empty".into());
    }
    if chars > MAX_NAME_CHARS {
        return Some(format!("{chars} characters"));
    }
    if let Some(bad) = name.chars().find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '-')) {
        return Some(if bad.is_uppercase() {
            format!("the uppercase {bad:?}")
        } else {
            format!("the character {bad:?}")
        });
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some("a hyphen at an end".into());
    }
    name.contains("--").then(|| "two hyphens in a row".into())
}

/// `name` made to follow the rule, when anything of it is left.
fn suggested_name(name: &str) -> Option<String> {
    let mut fixed = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' };
        if !(c == '-' && (fixed.is_empty() || fixed.ends_with('-'))) {
            fixed.push(c);
        }
    }
    let fixed: String = fixed.trim_end_matches('-').chars().take(MAX_NAME_CHARS).collect();
    let fixed = fixed.trim_end_matches('-').to_owned();
    (!fixed.is_empty()).then_some(fixed)
}

/// The line of `SKILL.md` where the top-level field `key` is written, when it stands at the
/// start of a line (block style).
fn line_of(yaml: &str, key: &str) -> Option<u32> {
    let spellings = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
    let index = yaml.lines().position(|line| spellings.iter().any(|s| line.starts_with(s.as_str())))?;
    u32::try_from(index + 1).ok()
}

/// A value as a refusal says what was found.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "empty".into(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => shown_text(text),
        Value::Array(items) => format!("a list of {} items", items.len()),
        Value::Object(fields) => format!("a mapping of {} fields", fields.len()),
    }
}

/// A string, quoted and cut to 60 characters.
fn shown_text(text: &str) -> String {
    let shown: String = text.chars().take(60).collect();
    if shown.len() < text.len() { format!("{shown:?}...") } else { format!("{shown:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "skills/refunds/SKILL.md";

    fn read_as(text: &str, directory: &str) -> Result<Frontmatter, SkillError> {
        read(text.as_bytes(), &Source { file: FILE, directory, in_rust: false })
    }

    fn refusal(text: &str) -> String {
        read_as(text, "refunds").unwrap_err().to_string()
    }

    /// The frontmatter `fields` (one per line) of a skill named `refunds`, then a body.
    fn skill(fields: &str) -> String {
        format!("---\n{fields}\n---\n# Refunds\n")
    }

    const GOOD: &str =
        "name: refunds\ndescription: Process refund requests. Use it when a customer asks for money back.";

    #[test]
    fn every_field_is_kept_as_written_in_its_order() {
        let text = skill(&format!(
            "license: Apache-2.0\n{GOOD}\nmetadata:\n  version: \"2.1.0\"\n  author: acme\nallowed-tools: Bash(git:*) Read\nx-team: payments\nlevel: 3"
        ));
        let frontmatter = read_as(&text, "refunds").unwrap();
        let keys: Vec<&str> = frontmatter.fields().keys().map(String::as_str).collect();
        assert_eq!(keys, ["license", "name", "description", "metadata", "allowed-tools", "x-team", "level"]);
        assert_eq!(frontmatter.fields()["metadata"], serde_json::json!({"version": "2.1.0", "author": "acme"}));
        assert_eq!(frontmatter.fields()["level"], 3);
        assert_eq!((frontmatter.name(), frontmatter.description().len()), ("refunds", 68));
    }

    #[test]
    fn a_file_without_frontmatter_says_what_it_starts_with() {
        assert_eq!(
            refusal("# Refunds\n\nname: refunds\n"),
            "skills/refunds/SKILL.md:1: no frontmatter: the file starts with the line \"# Refunds\"\n  \
             expected: a first line `---`, the YAML fields (`name` and `description` at least), then a line `---`\n  \
             help: put the frontmatter block at the very top of the file"
        );
        assert!(refusal("").contains("starts with nothing (the file is empty)"));
        assert!(refusal("\u{feff}---\nname: refunds\n---\n").contains("a byte-order mark"));
        assert!(refusal("\n---\nname: refunds\n---\n").contains("starts with an empty line"));
        assert!(refusal(&"x".repeat(100)).contains(&format!("\"{}\"...", "x".repeat(60))));
    }

    #[test]
    fn an_unclosed_block_and_text_that_is_not_utf8_are_refused() {
        let unclosed = refusal("---\nname: refunds\ndescription: x\n# Refunds\n");
        assert!(unclosed.starts_with("skills/refunds/SKILL.md:1: the frontmatter opened on line 1 is never closed"));
        let error = read(b"---\nname: r\xffx\n---\n", &Source { file: FILE, directory: "refunds", in_rust: false });
        assert_eq!(
            error.unwrap_err().to_string(),
            "skills/refunds/SKILL.md: not UTF-8 text\n  expected: a SKILL.md in UTF-8\n  help: save the file as UTF-8"
        );
    }

    #[test]
    fn a_yaml_error_names_its_line_in_the_file() {
        let error = read_as(&skill("name: refunds\ndescription: Refunds: the policy"), "refunds").unwrap_err();
        let SkillError::Yaml { line, .. } = &error else { panic!("{error}") };
        assert_eq!(*line, Some(3));
        assert!(
            error.to_string().starts_with(
                "skills/refunds/SKILL.md:3: the frontmatter is not valid YAML: mapping values are not allowed in this context at line 3 column 21\n  help: fix the YAML there; a value holding `: `"
            ),
            "{error}"
        );
        let duplicate = refusal(&skill("name: refunds\nname: other\ndescription: x"));
        assert!(duplicate.contains("duplicate entry with key \"name\""), "{duplicate}");
        let tagged = refusal(&skill(&format!("{GOOD}\nmetadata:\n  when: !date 2026-01-01")));
        assert!(tagged.contains(": the frontmatter is not valid YAML: `metadata.when` holds a value tagged !date"));
        let listed = refusal(&skill("- name\n- description"));
        assert!(listed.contains("SKILL.md:2: the frontmatter is not valid YAML: it is a list of 2 items, not fields"));
        let keyed = refusal(&skill(&format!("{GOOD}\n1: one")));
        assert!(keyed.contains("a key that is not text"), "{keyed}");
    }

    #[test]
    fn the_name_is_required_follows_the_rule_and_is_its_directorys() {
        assert_eq!(
            refusal(&skill("description: x")),
            "skills/refunds/SKILL.md: field `name` is missing\n  \
             expected: 1 to 64 characters from a-z, 0-9 and -, not starting or ending with - and without --, the same as the skill's directory\n  \
             help: write `name: refunds`"
        );
        let cases = [
            ("Refunds", "\"Refunds\" (the uppercase 'R')", "write `name: refunds`"),
            ("-refunds", "\"-refunds\" (a hyphen at an end)", "write `name: refunds`"),
            ("re--funds", "\"re--funds\" (two hyphens in a row)", "write `name: re-funds` and name"),
            ("re_funds", "\"re_funds\" (the character '_')", "write `name: re-funds` and name"),
            ("\"\"", "\"\" (empty)", "choose a name of lowercase letters"),
        ];
        for (name, found, help) in cases {
            let error = refusal(&skill(&format!("name: {name}\ndescription: x")));
            assert!(error.starts_with(&format!("skills/refunds/SKILL.md:2: field `name` is {found}\n")), "{error}");
            assert!(error.contains(&format!("help: {help}")), "{error}");
        }
        let long = "a".repeat(65);
        assert!(refusal(&skill(&format!("name: {long}\ndescription: x"))).contains("(65 characters)"));
        assert!(refusal(&skill("name: 12\ndescription: x")).contains("field `name` is the number 12\n"));
        assert_eq!(
            read_as(&skill("name: refund\ndescription: x"), "refunds").unwrap_err().to_string(),
            "skills/refunds/SKILL.md:2: field `name` is \"refund\", but its directory is named \"refunds\"\n  \
             expected: the name of the skill's directory\n  \
             help: write `name: refunds`, or rename the directory to \"refund\""
        );
        let in_rust = read(
            skill("name: refund\ndescription: x").as_bytes(),
            &Source { file: "skill://refunds/SKILL.md", directory: "refunds", in_rust: true },
        );
        assert!(in_rust.unwrap_err().to_string().contains("or declare it as `Skill::new(\"refund\", ..)`"));
    }

    #[test]
    fn the_description_is_required_and_at_most_1024_characters() {
        let missing = refusal(&skill("name: refunds"));
        assert!(missing.starts_with("skills/refunds/SKILL.md: field `description` is missing\n"), "{missing}");
        assert!(refusal(&skill("name: refunds\ndescription: \"  \"")).contains("field `description` is blank"));
        assert!(refusal(&skill("name: refunds\ndescription:")).contains(":3: field `description` is empty\n"));
        let long = "é".repeat(1025);
        let error = refusal(&skill(&format!("name: refunds\ndescription: {long}")));
        assert!(error.contains("field `description` is 1025 characters long"), "{error}");
        assert!(read_as(&skill(&format!("name: refunds\ndescription: {}", "é".repeat(1024))), "refunds").is_ok());
    }

    #[test]
    fn optional_fields_have_their_types_and_lengths() {
        let license = refusal(&skill(&format!("{GOOD}\nlicense: [MIT]")));
        assert!(license.contains(":4: field `license` is a list of 1 items\n  expected: a string\n"), "{license}");
        let compatibility = refusal(&skill(&format!("{GOOD}\ncompatibility: {}", "x".repeat(501))));
        assert!(
            compatibility.contains("field `compatibility` is 501 characters long\n  expected: a string of 1 to 500")
        );
        let metadata = refusal(&skill(&format!("{GOOD}\nmetadata:\n  version: 1.0")));
        assert_eq!(
            metadata,
            "skills/refunds/SKILL.md:4: field `metadata.version` is the number 1.0\n  \
             expected: a string\n  \
             help: write `version: \"1.0\"` (in quotes)"
        );
        assert!(refusal(&skill(&format!("{GOOD}\nmetadata: v2"))).contains("field `metadata` is \"v2\""));
        let tools = refusal(&skill(&format!("{GOOD}\nallowed-tools:\n  - Read\n  - 3")));
        assert!(tools.contains("field `allowed-tools[1]` is the number 3"), "{tools}");
        assert!(
            refusal(&skill(&format!("{GOOD}\nallowed-tools: true"))).contains("`allowed-tools` is the boolean true")
        );
        let listed = read_as(&skill(&format!("{GOOD}\nallowed-tools:\n  - Bash(git:*)\n  - Read")), "refunds");
        assert_eq!(listed.unwrap().fields()["allowed-tools"], serde_json::json!(["Bash(git:*)", "Read"]));
    }

    #[test]
    fn a_closing_fence_may_carry_spaces_and_crlf() {
        let text = "---\r\nname: refunds\r\ndescription: x\r\n--- \r\nbody";
        assert_eq!(read_as(text, "refunds").unwrap().description(), "x");
    }
}
