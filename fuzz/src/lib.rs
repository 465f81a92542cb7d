//! What the fuzz targets share: JSON values drawn from the fuzzer's bytes.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Nesting beyond this adds nothing the validators and the diff have not seen at depth 4,
/// and keeps each run fast.
const MAX_DEPTH: u32 = 4;

/// A string that is often long (past the 50-character echo cut) or made of characters that
/// need escaping, as well as plain fuzzer text.
pub fn string(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => {
            let unit: String = u.arbitrary()?;
            let times = u.int_in_range(1..=40usize)?;
            unit.repeat(times)
        }
        1 => u
            .choose(&[
                "",
                "inv_2026_0001",
                "inv_2026_0004",
                "inv_2026_9999",
                "EUR",
                "open",
                "paid",
                "void",
                "c4",
                "a@b.co",
                "2026-01-31",
                "\u{202e}",
                "\n",
                "'",
                "\\",
            ])?
            .to_string(),
        _ => u.arbitrary()?,
    })
}

/// Any JSON value, keys included, from `words` as often as from fuzzer text: `words` are
/// the names the code under test looks for.
pub fn value(u: &mut Unstructured<'_>, words: &[&str], depth: u32) -> Result<Value> {
    let top = if depth >= MAX_DEPTH { 5 } else { 7 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(u.arbitrary::<i64>()?.into()),
        3 => Value::Number(u.arbitrary::<u64>()?.into()),
        // Not finite has no JSON form; those draws become null.
        4 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        5 => Value::String(string(u)?),
        6 => {
            let len = u.int_in_range(0..=4usize)?;
            Value::Array((0..len).map(|_| value(u, words, depth + 1)).collect::<Result<_>>()?)
        }
        _ => Value::Object(object(u, words, depth + 1)?),
    })
}

/// A JSON object of up to six members.
pub fn object(u: &mut Unstructured<'_>, words: &[&str], depth: u32) -> Result<Map<String, Value>> {
    let len = u.int_in_range(0..=6usize)?;
    let mut map = Map::new();
    for _ in 0..len {
        let key = if !words.is_empty() && u.arbitrary()? { u.choose(words)?.to_string() } else { string(u)? };
        map.insert(key, value(u, words, depth)?);
    }
    Ok(map)
}

/// Every string in `value`, keys included.
pub fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}
