//! Turning schema-checked JSON into typed values.
use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

use super::check::MAX_SAFE_INTEGER;

/// JSON numbers have no integer type: `1.0` is the integer 1 to every JSON Schema
/// validator. Rewrite such numbers as integers so typed fields accept them.
fn normalize_integers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER) {
                *n = Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_integers),
        Value::Object(map) => map.values_mut().for_each(normalize_integers),
        _ => {}
    }
}

/// Deserializes a value that already passed its schema check.
pub fn typed<T: DeserializeOwned>(mut value: Value) -> Result<T, String> {
    normalize_integers(&mut value);
    serde_json::from_value(value).map_err(|e| format!("value does not fit its type: {e}"))
}

/// Parses JSON the way `JSON.parse` does, failing on anything else.
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))
}
