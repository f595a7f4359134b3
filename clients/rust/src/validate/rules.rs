//! The cross-field rules of wire protocol 1.0 (what JSON Schema cannot say: an answer
//! against its request, a stream event against the run) are data: `generated/rules.json`,
//! which `npm run protocol` copies from `protocol/rules.json` (`src/protocol/rules.ts`
//! holds them and describes the vocabulary). This module evaluates them on
//! `serde_json::Value`s, step for step as `src/protocol/rule-evaluator.ts` does; the shared
//! vectors in `protocol/fixtures/rules.json` hold every client to the same answers.
use super::check::json_equal;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The first rule a value breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: String,
    pub message: String,
    /// The list items walked to reach it (`answer.hits[1]`), empty at the top.
    pub at: String,
}

/// Worded as every client words it: the message, where, and the rule's id in brackets.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if !self.at.is_empty() {
            write!(f, " (at {})", self.at)?;
        }
        write!(f, " [{}]", self.rule)
    }
}

/// The names a rule sees; a name that is not bound is absent.
pub type Scope = HashMap<String, Arc<Value>>;

/// A scope of the given names and values.
pub fn scope<const N: usize>(bindings: [(&str, Value); N]) -> Scope {
    bindings.into_iter().map(|(name, value)| (name.to_owned(), Arc::new(value))).collect()
}

fn rule_sets() -> &'static Map<String, Value> {
    static SETS: OnceLock<Value> = OnceLock::new();
    let document =
        SETS.get_or_init(|| serde_json::from_str(include_str!("../generated/rules.json")).expect("generated/rules.json is JSON"));
    document["ruleSets"].as_object().expect("generated/rules.json has ruleSets")
}

fn rules_of(name: &str) -> &'static [Value] {
    rule_sets().get(name).and_then(|set| set["rules"].as_array()).unwrap_or_else(|| panic!("there is no rule set {name}"))
}

/// The first rule of the set `name` that `scope` breaks, or `None`.
pub fn evaluate(name: &str, scope: &Scope) -> Option<Violation> {
    run(rules_of(name), scope, "")
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn run(rules: &'static [Value], scope: &Scope, at: &str) -> Option<Violation> {
    for rule in rules {
        if rule.get("when").is_some_and(|when| !holds(when, scope)) {
            continue;
        }
        if let Some(id) = rule.get("id") {
            if !holds(&rule["check"], scope) {
                return Some(Violation { rule: text(id).to_owned(), message: text(&rule["message"]).to_owned(), at: at.to_owned() });
            }
            continue;
        }
        if let Some(name) = rule.get("apply") {
            let mut inner = Scope::new();
            for (param, expression) in rule["with"].as_object().into_iter().flatten() {
                if let Some(value) = value_of(expression, scope) {
                    inner.insert(param.clone(), Arc::new(value.into_owned()));
                }
            }
            if let Some(found) = run(rules_of(text(name)), &inner, at) {
                return Some(found);
            }
            continue;
        }
        let each = rule.get("each");
        let items: Vec<Option<Value>> = match each {
            Some(each) => list_of(value_of(&each["in"], scope)).into_iter().map(Some).collect(),
            None => vec![None],
        };
        for (index, item) in items.into_iter().enumerate() {
            let mut inner = scope.clone();
            let mut where_ = Cow::Borrowed(at);
            if let (Some(each), Some(item)) = (each, item) {
                inner.insert(text(&each["as"]).to_owned(), Arc::new(item));
                if let Some(name) = each.get("index") {
                    inner.insert(text(name).to_owned(), Arc::new(Value::from(index)));
                }
                let list = each["in"].as_str().unwrap_or("items");
                where_ = Cow::Owned(if at.is_empty() { format!("{list}[{index}]") } else { format!("{at}/{list}[{index}]") });
            }
            if let Some(lets) = rule.get("let").and_then(Value::as_object) {
                let bound: Vec<(String, Value)> = lets
                    .iter()
                    .filter_map(|(name, expression)| value_of(expression, &inner).map(|v| (name.clone(), v.into_owned())))
                    .collect();
                for (name, value) in bound {
                    inner.insert(name, Arc::new(value));
                }
            }
            if let Some(found) = run(rule["rules"].as_array().map_or(&[], Vec::as_slice), &inner, &where_) {
                return Some(found);
            }
        }
    }
    None
}

fn pair<'s>(operands: &'static Value, scope: &'s Scope) -> (Option<Cow<'s, Value>>, Option<Cow<'s, Value>>) {
    (value_of(&operands[0], scope), value_of(&operands[1], scope))
}

fn holds(condition: &'static Value, scope: &Scope) -> bool {
    let (name, operand) = operator(condition);
    match name {
        "equal" => match pair(operand, scope) {
            (Some(a), Some(b)) => json_equal(&a, &b),
            (a, b) => a.is_none() && b.is_none(),
        },
        "less" => matches!(pair(operand, scope), (Some(a), Some(b)) if compare(&a, &b).is_some_and(|o| o.is_lt())),
        "atMost" => matches!(pair(operand, scope), (Some(a), Some(b)) if compare(&a, &b).is_some_and(|o| o.is_le())),
        "present" => value_of(operand, scope).is_some(),
        "in" => match pair(operand, scope) {
            (Some(item), list) => list_of(list).iter().any(|candidate| json_equal(candidate, &item)),
            (None, _) => false,
        },
        "unique" => {
            let items = list_of(value_of(operand, scope));
            items.iter().enumerate().all(|(index, item)| !items[..index].iter().any(|earlier| json_equal(earlier, item)))
        }
        "iff" => holds(&operand[0], scope) == holds(&operand[1], scope),
        "not" => !holds(operand, scope),
        "and" => operand.as_array().into_iter().flatten().all(|part| holds(part, scope)),
        "uriWithoutCredentials" => !value_of(operand, scope).is_some_and(|uri| has_credentials(&uri)),
        _ => panic!("unknown rule condition {condition}"),
    }
}

/// The operator of a condition or value object (`count` and `find` also take `where`, `map` takes `to`).
fn operator(object: &'static Value) -> (&'static str, &'static Value) {
    object
        .as_object()
        .and_then(|o| o.iter().find(|(key, _)| !matches!(key.as_str(), "where" | "to")))
        .map(|(key, operand)| (key.as_str(), operand))
        .unwrap_or_else(|| panic!("not a rule operator: {object}"))
}

fn with_it(scope: &Scope, it: &Value) -> Scope {
    let mut inner = scope.clone();
    inner.insert("it".to_owned(), Arc::new(it.clone()));
    inner
}

/// A rule value, or `None` when it is absent.
fn value_of<'s>(expression: &'static Value, scope: &'s Scope) -> Option<Cow<'s, Value>> {
    let object = match expression {
        Value::String(path) => return lookup(path, scope),
        Value::Object(object) => object,
        literal => return Some(Cow::Borrowed(literal)), // a number, boolean or null
    };
    let (name, operand) = operator(expression);
    let owned = |value: Value| Some(Cow::Owned(value));
    match name {
        "value" => Some(Cow::Borrowed(operand)),
        "count" => {
            let items = list_of(value_of(operand, scope));
            let count = match object.get("where") {
                Some(condition) => items.iter().filter(|it| holds(condition, &with_it(scope, it))).count(),
                None => items.len(),
            };
            owned(Value::from(count))
        }
        "bytes" => match value_of(operand, scope).as_deref() {
            Some(Value::String(text)) => owned(Value::from(text.len())),
            Some(Value::Array(items)) => owned(Value::from(items.iter().filter_map(Value::as_str).map(str::len).sum::<usize>())),
            _ => None,
        },
        "add" => {
            let mut sum = 0.0;
            for term in operand.as_array().into_iter().flatten() {
                sum += value_of(term, scope)?.as_f64()?;
            }
            serde_json::Number::from_f64(sum).map(|n| Cow::Owned(Value::Number(n)))
        }
        "default" => operand.as_array().into_iter().flatten().find_map(|option| value_of(option, scope)),
        "lower" => match value_of(operand, scope)?.as_ref() {
            Value::String(text) => owned(Value::from(text.to_ascii_lowercase())),
            _ => None,
        },
        "find" => {
            let condition = &object["where"];
            list_of(value_of(operand, scope)).into_iter().find(|it| holds(condition, &with_it(scope, it))).map(Cow::Owned)
        }
        "map" => match value_of(operand, scope)?.as_ref() {
            Value::String(key) => object["to"].get(key).map(Cow::Borrowed),
            _ => None,
        },
        _ => panic!("unknown rule value {expression}"),
    }
}

/// A path's value: `a.b` one value (`None` when absent); a path with `[]` the list of every value it reaches.
fn lookup<'s>(path: &str, scope: &'s Scope) -> Option<Cow<'s, Value>> {
    let mut steps = path.split('.');
    let root = steps.next()?;
    if !path.contains("[]") {
        let mut current: &Value = scope.get(root)?;
        for step in steps {
            current = current.as_object()?.get(step)?;
        }
        return Some(Cow::Borrowed(current));
    }
    fn walk(current: &Value, steps: &[&str], found: &mut Vec<Value>) {
        let Some((step, rest)) = steps.split_first() else {
            found.push(current.clone());
            return;
        };
        let (name, each) = step.strip_suffix("[]").map_or((*step, false), |name| (name, true));
        let Some(next) = current.as_object().and_then(|o| o.get(name)) else { return };
        if !each {
            walk(next, rest, found);
        } else if let Value::Array(items) = next {
            items.iter().for_each(|item| walk(item, rest, found));
        }
    }
    let steps: Vec<&str> = path.split('.').collect();
    let mut found = Vec::new();
    let (name, each) = steps[0].strip_suffix("[]").map_or((steps[0], false), |name| (name, true));
    if let Some(start) = scope.get(name) {
        match (each, start.as_ref()) {
            (false, value) => walk(value, &steps[1..], &mut found),
            (true, Value::Array(items)) => items.iter().for_each(|item| walk(item, &steps[1..], &mut found)),
            (true, _) => {}
        }
    }
    Some(Cow::Owned(Value::Array(found)))
}

/// A value as a list: anything else, an absent value too, is empty.
fn list_of(value: Option<Cow<'_, Value>>) -> Vec<Value> {
    match value {
        Some(Cow::Owned(Value::Array(items))) => items,
        Some(Cow::Borrowed(Value::Array(items))) => items.clone(),
        _ => Vec::new(),
    }
}

/// Numbers by value, strings by code point (UTF-8 byte order is the same); `None` for anything else.
fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Whether a URI's authority (after `://`, up to the first `/`, `?` or `#`) carries user information.
fn has_credentials(uri: &Value) -> bool {
    let Some((_, rest)) = uri.as_str().and_then(|uri| uri.split_once("://")) else { return false };
    rest.split(['/', '?', '#']).next().unwrap_or_default().contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes;
    use crate::generated::operations as ops;
    use crate::types::RetrievalIndexRequest;
    use serde_json::json;

    /// The shared vectors of `protocol/fixtures/rules.json`: the TypeScript, Python and Go
    /// clients give the same answers.
    #[test]
    fn answers_the_shared_vectors() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../protocol/fixtures/rules.json");
        let document: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = document["cases"].as_array().unwrap();
        assert!(cases.len() >= 30);
        for case in cases {
            let bindings = case["scope"].as_object().unwrap().iter().map(|(name, value)| (name.clone(), Arc::new(value.clone()))).collect();
            let broken = evaluate(case["ruleSet"].as_str().unwrap(), &bindings);
            assert_eq!(broken.as_ref().map(|v| v.rule.as_str()), case["broken"].as_str(), "{}", case["name"]);
            if let Some(broken) = broken {
                assert_eq!(Some(broken.at.as_str()), case["at"].as_str(), "{}", case["name"]);
            }
        }
    }

    #[test]
    fn words_a_violation_as_every_client() {
        let violation = Violation { rule: "a.b".into(), message: "it is wrong".into(), at: "answer.hits[1]".into() };
        assert_eq!(violation.to_string(), "it is wrong (at answer.hits[1]) [a.b]");
        assert_eq!(Violation { at: String::new(), ..violation }.to_string(), "it is wrong [a.b]");
    }

    #[test]
    fn a_request_breaking_its_rules_is_refused_with_the_operation_code() {
        let mut request: RetrievalIndexRequest = serde_json::from_value(json!({
            "corpus": "docs", "source": {"id": "guide", "revision": "1"},
            "chunks": [{"id": "c1", "text": "a"}, {"id": "c1", "text": "b"}]
        }))
        .unwrap();
        let refused = crate::validate::request(&ops::INDEX_SOURCE, &request).unwrap_err();
        assert_eq!(refused.code, codes::INVALID_RETRIEVAL);
        assert!(refused.message.contains("[indexRequest.chunkIds]"), "{}", refused.message);
        request.chunks.truncate(1);
        crate::validate::request(&ops::INDEX_SOURCE, &request).unwrap();
    }
}
