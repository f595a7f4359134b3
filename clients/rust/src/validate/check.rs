//! Primitive JSON Schema checks over `serde_json::Value`, with JSON-pointer paths in the
//! messages. Semantics follow JSON Schema (and so the TypeScript client): string
//! lengths count code points, integers are numbers without a fraction (`1.0` is one),
//! a present `null` is never an absent optional field.
use serde_json::{Map, Value};

pub type Checked<T> = Result<T, String>;

/// A check of one value at a path (the generated checks are all of this shape).
pub type Rule = dyn Fn(&Value, &str) -> Checked<()>;

/// Largest integer JSON numbers carry exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn path_or_value(path: &str) -> &str {
    if path.is_empty() {
        "value"
    } else {
        path
    }
}

fn must(path: &str, what: impl std::fmt::Display) -> String {
    format!("{} must {what}", path_or_value(path))
}

pub fn object<'a>(v: &'a Value, path: &str) -> Checked<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| must(path, format_args!("be object, got {}", kind(v))))
}

pub fn string<'a>(v: &'a Value, path: &str, min: usize, max: usize) -> Checked<&'a str> {
    let s = v.as_str().ok_or_else(|| must(path, format_args!("be string, got {}", kind(v))))?;
    let length = s.chars().count();
    if length < min {
        return Err(must(path, format_args!("have at least {min} characters")));
    }
    if length > max {
        return Err(must(path, format_args!("have at most {max} characters")));
    }
    Ok(s)
}

pub fn matching<'a>(v: &'a Value, path: &str, rule: fn(&str) -> bool, what: &str) -> Checked<&'a str> {
    let s = string(v, path, 0, usize::MAX)?;
    if rule(s) {
        Ok(s)
    } else {
        Err(must(path, format_args!("be {what}")))
    }
}

pub fn number(v: &Value, path: &str, min: f64, max: f64) -> Checked<f64> {
    let n = v.as_f64().ok_or_else(|| must(path, format_args!("be number, got {}", kind(v))))?;
    if n < min || n > max {
        return Err(must(path, format_args!("be between {min} and {max}")));
    }
    Ok(n)
}

pub fn integer(v: &Value, path: &str, min: f64, max: f64) -> Checked<f64> {
    let n = v.as_f64().filter(|n| n.fract() == 0.0).ok_or_else(|| must(path, "be integer"))?;
    number(v, path, min, max).map(|_| n)
}

pub fn boolean(v: &Value, path: &str) -> Checked<bool> {
    v.as_bool().ok_or_else(|| must(path, format_args!("be boolean, got {}", kind(v))))
}

pub fn literal<'a>(v: &'a Value, path: &str, options: &[&str]) -> Checked<&'a str> {
    match v.as_str() {
        Some(s) if options.contains(&s) => Ok(s),
        _ => Err(must(path, format_args!("be one of {options:?}"))),
    }
}

pub fn array<'a>(v: &'a Value, path: &str, min: usize, max: usize) -> Checked<&'a Vec<Value>> {
    let items = v.as_array().ok_or_else(|| must(path, format_args!("be array, got {}", kind(v))))?;
    if items.len() < min {
        return Err(must(path, format_args!("have at least {min} items")));
    }
    if items.len() > max {
        return Err(must(path, format_args!("have at most {max} items")));
    }
    Ok(items)
}

/// Every item passes `each`; the path of item `i` is `path/i`.
pub fn each(items: &[Value], path: &str, mut each: impl FnMut(&Value, &str) -> Checked<()>) -> Checked<()> {
    items.iter().enumerate().try_for_each(|(i, item)| each(item, &format!("{path}/{i}")))
}

/// JSON Schema `uniqueItems`.
pub fn unique(items: &[Value], path: &str) -> Checked<()> {
    for (i, item) in items.iter().enumerate() {
        if items[..i].iter().any(|earlier| json_equal(earlier, item)) {
            return Err(must(path, "not have duplicate items"));
        }
    }
    Ok(())
}

/// JSON Schema `contains` with one string constant.
pub fn contains(items: &[Value], path: &str, expected: &str) -> Checked<()> {
    if items.iter().any(|item| item == expected) {
        Ok(())
    } else {
        Err(must(path, format_args!("contain \"{expected}\"")))
    }
}

/// JSON Schema `anyOf`: the first check that passes, or the first one's problem.
pub fn any_of(v: &Value, path: &str, checks: &[&Rule]) -> Checked<()> {
    let mut first = None;
    for check in checks {
        match check(v, path) {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(first.unwrap_or_else(|| must(path, "match one of no schemas")))
}

/// JSON Schema `maxProperties`.
pub fn max_properties(o: &Obj, max: usize) -> Checked<()> {
    if o.map.len() > max {
        return Err(must(&o.path, format_args!("have at most {max} properties")));
    }
    Ok(())
}

/// Deep equality where numbers compare by value (`1` equals `1.0`, as in JSON Schema).
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q))),
        _ => a == b,
    }
}

/// An object and its path, with accessors for its fields.
pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

impl<'a> Obj<'a> {
    /// An object that may carry unknown fields.
    pub fn open(v: &'a Value, path: &str) -> Checked<Self> {
        Ok(Obj { map: object(v, path)?, path: path.to_owned() })
    }

    /// An object the protocol declares strict: no fields beyond `allowed`.
    pub fn strict(v: &'a Value, path: &str, allowed: &[&str]) -> Checked<Self> {
        let obj = Obj::open(v, path)?;
        if let Some(extra) = obj.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(must(path, format_args!("not have the unknown field \"{extra}\"")));
        }
        Ok(obj)
    }

    pub fn at(&self, key: &str) -> String {
        format!("{}/{key}", self.path)
    }

    pub fn req(&self, key: &str) -> Checked<&'a Value> {
        self.map.get(key).ok_or_else(|| must(&self.path, format_args!("have required property '{key}'")))
    }

    pub fn opt(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// Checks `key` with `rule` when it is present.
    pub fn opt_with<T>(&self, key: &str, rule: impl FnOnce(&'a Value, &str) -> Checked<T>) -> Checked<Option<T>> {
        self.opt(key).map(|v| rule(v, &self.at(key))).transpose()
    }

    /// Checks the required `key` with `rule`.
    pub fn with<T>(&self, key: &str, rule: impl FnOnce(&'a Value, &str) -> Checked<T>) -> Checked<T> {
        rule(self.req(key)?, &self.at(key))
    }

    /// Checks every field not named in `declared` (`additionalProperties` with a schema).
    pub fn others(&self, declared: &[&str], mut rule: impl FnMut(&'a Value, &str) -> Checked<()>) -> Checked<()> {
        self.map.iter().filter(|(k, _)| !declared.contains(&k.as_str())).try_for_each(|(k, v)| rule(v, &self.at(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_are_numbers_without_fraction() {
        assert_eq!(integer(&json!(1.0), "/n", 1.0, 2.0), Ok(1.0));
        assert!(integer(&json!(1.5), "/n", 0.0, 2.0).is_err());
        assert!(integer(&json!(true), "/n", 0.0, 2.0).is_err());
        assert!(integer(&json!(-1), "/n", 0.0, 2.0).is_err());
    }

    #[test]
    fn lengths_count_code_points_and_null_is_not_absent() {
        assert!(string(&json!("🌍🌍"), "", 0, 2).is_ok());
        let value = json!({"a": null});
        let obj = Obj::open(&value, "").unwrap();
        assert!(obj.opt_with("a", |v, p| string(v, p, 0, 9)).is_err());
        assert_eq!(obj.opt_with("b", |v, p| string(v, p, 0, 9)), Ok(None));
        assert!(unique(&[json!(1), json!(1.0)], "").is_err());
    }
}
