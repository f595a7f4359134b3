package agenticdriver

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The cross-field rules of wire protocol 1.0 (what JSON Schema cannot say: an answer
// against its request, a stream event against the run) are data: generated/rules.json,
// which `npm run protocol` copies from protocol/rules.json (src/protocol/rules.ts holds
// them and describes the vocabulary). This file evaluates them on generic JSON values
// (from parseJSON), step for step as src/protocol/rule-evaluator.ts does; the shared
// vectors in protocol/fixtures/rules.json hold every client to the same answers.

//go:embed generated/rules.json
var rulesDocument []byte

var ruleSets = loadRuleSets()

func loadRuleSets() map[string]any {
	document, err := parseJSON(rulesDocument)
	if err != nil {
		panic("agenticdriver: generated/rules.json is not JSON: " + err.Error())
	}
	return document.(map[string]any)["ruleSets"].(map[string]any)
}

// ruleViolation is the first rule a value breaks.
type ruleViolation struct {
	rule, message, at string
}

// Error words the violation as every client does: the message, where, the rule's id.
func (v *ruleViolation) Error() string {
	where := ""
	if v.at != "" {
		where = " (at " + v.at + ")"
	}
	return v.message + where + " [" + v.rule + "]"
}

// evaluateRules returns the first rule of the set name that scope breaks, or nil. Scope
// values are generic JSON (parseJSON); an absent name is absent.
func evaluateRules(name string, scope map[string]any) *ruleViolation {
	return runRules(ruleSetRules(name), scope, "")
}

func ruleSetRules(name string) []any {
	set, ok := ruleSets[name].(map[string]any)
	if !ok {
		panic("agenticdriver: there is no rule set " + name)
	}
	return set["rules"].([]any)
}

func runRules(rules []any, scope map[string]any, at string) *ruleViolation {
	for _, r := range rules {
		rule := r.(map[string]any)
		if when, ok := rule["when"]; ok && !holds(when, scope) {
			continue
		}
		if id, ok := rule["id"].(string); ok {
			if !holds(rule["check"], scope) {
				return &ruleViolation{rule: id, message: rule["message"].(string), at: at}
			}
			continue
		}
		if name, ok := rule["apply"].(string); ok {
			inner := map[string]any{}
			for param, expression := range rule["with"].(map[string]any) {
				if value, present := valueOf(expression, scope); present {
					inner[param] = value
				}
			}
			if found := runRules(ruleSetRules(name), inner, at); found != nil {
				return found
			}
			continue
		}
		each, _ := rule["each"].(map[string]any)
		items := []any{nil}
		if each != nil {
			items = listOf(valueOf(each["in"], scope))
		}
		for index, item := range items {
			inner := make(map[string]any, len(scope)+2)
			for name, value := range scope {
				inner[name] = value
			}
			where := at
			if each != nil {
				inner[each["as"].(string)] = item
				if name, ok := each["index"].(string); ok {
					inner[name] = json.Number(strconv.Itoa(index))
				}
				where = eachLocation(at, each["in"], index)
			}
			if lets, ok := rule["let"].(map[string]any); ok {
				bound := make(map[string]any, len(inner)+len(lets))
				for name, value := range inner {
					bound[name] = value
				}
				for name, expression := range lets {
					if value, present := valueOf(expression, inner); present {
						bound[name] = value
					}
				}
				inner = bound
			}
			if found := runRules(rule["rules"].([]any), inner, where); found != nil {
				return found
			}
		}
	}
	return nil
}

func eachLocation(at string, list any, index int) string {
	name, ok := list.(string)
	if !ok {
		name = "items"
	}
	if at != "" {
		at += "/"
	}
	return fmt.Sprintf("%s%s[%d]", at, name, index)
}

func holds(c any, scope map[string]any) bool {
	condition := c.(map[string]any)
	pair := func(op string) (any, bool, any, bool) {
		operands := condition[op].([]any)
		a, aok := valueOf(operands[0], scope)
		b, bok := valueOf(operands[1], scope)
		return a, aok, b, bok
	}
	switch {
	case hasKey(condition, "equal"):
		a, aok, b, bok := pair("equal")
		return aok == bok && (!aok || sameJSON(a, b))
	case hasKey(condition, "less"):
		a, aok, b, bok := pair("less")
		order, ok := compareValues(a, b)
		return aok && bok && ok && order < 0
	case hasKey(condition, "atMost"):
		a, aok, b, bok := pair("atMost")
		order, ok := compareValues(a, b)
		return aok && bok && ok && order <= 0
	case hasKey(condition, "present"):
		_, present := valueOf(condition["present"], scope)
		return present
	case hasKey(condition, "in"):
		item, present, list, _ := pair("in")
		if !present {
			return false
		}
		for _, candidate := range listOf(list, true) {
			if sameJSON(candidate, item) {
				return true
			}
		}
		return false
	case hasKey(condition, "unique"):
		items := listOf(valueOf(condition["unique"], scope))
		for i := range items {
			for j := 0; j < i; j++ {
				if sameJSON(items[j], items[i]) {
					return false
				}
			}
		}
		return true
	case hasKey(condition, "iff"):
		parts := condition["iff"].([]any)
		return holds(parts[0], scope) == holds(parts[1], scope)
	case hasKey(condition, "not"):
		return !holds(condition["not"], scope)
	case hasKey(condition, "and"):
		for _, part := range condition["and"].([]any) {
			if !holds(part, scope) {
				return false
			}
		}
		return true
	case hasKey(condition, "uriWithoutCredentials"):
		uri, _ := valueOf(condition["uriWithoutCredentials"], scope)
		return !hasCredentials(uri)
	}
	panic(fmt.Sprintf("agenticdriver: unknown rule condition %v", condition))
}

// valueOf evaluates a rule value; present is false when it is absent.
func valueOf(expression any, scope map[string]any) (value any, present bool) {
	switch e := expression.(type) {
	case string:
		return lookup(e, scope)
	case map[string]any:
		return operatorValue(e, scope)
	default: // a number, boolean or null literal
		return e, true
	}
}

func operatorValue(e map[string]any, scope map[string]any) (any, bool) {
	switch {
	case hasKey(e, "value"):
		return e["value"], true
	case hasKey(e, "count"):
		items := listOf(valueOf(e["count"], scope))
		count := 0
		for _, it := range items {
			if where, ok := e["where"]; !ok || holds(where, scopeWith(scope, "it", it)) {
				count++
			}
		}
		return json.Number(strconv.Itoa(count)), true
	case hasKey(e, "bytes"):
		target, _ := valueOf(e["bytes"], scope)
		switch t := target.(type) {
		case string:
			return json.Number(strconv.Itoa(len(t))), true
		case []any:
			total := 0
			for _, item := range t {
				if text, ok := item.(string); ok {
					total += len(text)
				}
			}
			return json.Number(strconv.Itoa(total)), true
		}
		return nil, false
	case hasKey(e, "add"):
		sum := 0.0
		for _, term := range e["add"].([]any) {
			value, _ := valueOf(term, scope)
			number, ok := numberOf(value)
			if !ok {
				return nil, false
			}
			sum += number
		}
		return json.Number(strconv.FormatFloat(sum, 'g', -1, 64)), true
	case hasKey(e, "default"):
		for _, option := range e["default"].([]any) {
			if value, present := valueOf(option, scope); present {
				return value, true
			}
		}
		return nil, false
	case hasKey(e, "lower"):
		value, _ := valueOf(e["lower"], scope)
		text, ok := value.(string)
		if !ok {
			return nil, false
		}
		return strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, text), true
	case hasKey(e, "find"):
		for _, it := range listOf(valueOf(e["find"], scope)) {
			if holds(e["where"], scopeWith(scope, "it", it)) {
				return it, true
			}
		}
		return nil, false
	case hasKey(e, "map"):
		key, _ := valueOf(e["map"], scope)
		text, ok := key.(string)
		if !ok {
			return nil, false
		}
		value, found := e["to"].(map[string]any)[text]
		return value, found
	}
	panic(fmt.Sprintf("agenticdriver: unknown rule value %v", e))
}

func hasKey(m map[string]any, key string) bool {
	_, ok := m[key]
	return ok
}

func scopeWith(scope map[string]any, name string, value any) map[string]any {
	inner := make(map[string]any, len(scope)+1)
	for key, v := range scope {
		inner[key] = v
	}
	inner[name] = value
	return inner
}

// lookup reads a path: `a.b` one value; a path with `[]` the list of every value it reaches.
func lookup(path string, scope map[string]any) (any, bool) {
	steps := strings.Split(path, ".")
	if !strings.Contains(path, "[]") {
		var current any = scope
		for _, step := range steps {
			next, ok := jsonField(current, step)
			if !ok {
				return nil, false
			}
			current = next
		}
		return current, true
	}
	found := []any{}
	var walk func(current any, index int)
	walk = func(current any, index int) {
		if index == len(steps) {
			found = append(found, current)
			return
		}
		name, each := strings.CutSuffix(steps[index], "[]")
		next, ok := jsonField(current, name)
		if !ok {
			return
		}
		if !each {
			walk(next, index+1)
			return
		}
		if items, ok := next.([]any); ok {
			for _, item := range items {
				walk(item, index+1)
			}
		}
	}
	walk(scope, 0)
	return found, true
}

func jsonField(value any, name string) (any, bool) {
	object, ok := value.(map[string]any)
	if !ok {
		return nil, false
	}
	child, ok := object[name]
	return child, ok
}

// listOf reads a value (and whether it is present, as valueOf returns them) as a list;
// anything else, an absent value too, is empty.
func listOf(value any, _ bool) []any {
	items, _ := value.([]any)
	return items
}

func numberOf(value any) (float64, bool) {
	switch n := value.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// sameJSON is JSON equality: numbers by value, objects by keys and values.
func sameJSON(a, b any) bool {
	if x, ok := numberOf(a); ok {
		y, ok := numberOf(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for key, value := range x {
			other, ok := y[key]
			if !ok || !sameJSON(value, other) {
				return false
			}
		}
		return true
	}
	return false
}

// compareValues orders two numbers, or two strings by code point (Go compares UTF-8 bytes,
// which is the same order).
func compareValues(a, b any) (int, bool) {
	if x, ok := numberOf(a); ok {
		y, ok := numberOf(b)
		switch {
		case !ok:
			return 0, false
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	return strings.Compare(x, y), true
}

// hasCredentials reports whether a URI's authority (after "://", up to the first "/", "?"
// or "#") carries user information.
func hasCredentials(uri any) bool {
	text, ok := uri.(string)
	if !ok {
		return false
	}
	_, rest, found := strings.Cut(text, "://")
	if !found {
		return false
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	return strings.Contains(rest, "@")
}

// jsonValueOf is v as the generic JSON a rule reads (as it is sent: encoding/json, then parseJSON).
func jsonValueOf(v any) (any, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return parseJSON(raw)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseJSON(data)
}
