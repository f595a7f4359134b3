package agenticdriver

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// A rule checks one generic JSON value (from parseJSON) against a piece of the wire
// schema and describes the first violation. The combinators below are the runtime of
// wire_generated.go, which `npm run protocol` writes from the published JSON Schemas;
// they follow JSON Schema as Ajv does (string lengths count code points).
type rule func(v any, path string) error

func violation(path, format string, args ...any) error {
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}

func anyValue() rule { return func(any, string) error { return nil } }

type strOpts struct {
	min, max int // max 0 = unbounded
	pattern  *regexp.Regexp
	format   func(string) bool
}

func str(o strOpts) rule {
	return func(v any, path string) error {
		s, ok := v.(string)
		if !ok {
			return violation(path, "must be a string")
		}
		n := utf8.RuneCountInString(s)
		if n < o.min || (o.max > 0 && n > o.max) {
			return violation(path, "length %d is out of range", n)
		}
		if o.pattern != nil && !o.pattern.MatchString(s) {
			return violation(path, "does not match %s", o.pattern)
		}
		if o.format != nil && !o.format(s) {
			return violation(path, "is not in the required format")
		}
		return nil
	}
}

func anyString() rule                 { return str(strOpts{}) }
func nonEmptyString() rule            { return str(strOpts{min: 1}) }
func pattern(expr string) rule        { return str(strOpts{pattern: regexp.MustCompile(expr)}) }
func timestampRule() rule             { return str(strOpts{format: isDateTime}) }
func boundedString(min, max int) rule { return str(strOpts{min: min, max: max}) }

func oneOf(values ...string) rule {
	return func(v any, path string) error {
		if s, ok := v.(string); ok {
			for _, allowed := range values {
				if s == allowed {
					return nil
				}
			}
		}
		return violation(path, "must be one of %q", values)
	}
}

func boolean() rule {
	return func(v any, path string) error {
		if _, ok := v.(bool); !ok {
			return violation(path, "must be a boolean")
		}
		return nil
	}
}

// numberValue returns the finite value of a JSON number.
func numberValue(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func number(min, max float64) rule {
	return func(v any, path string) error {
		f, ok := numberValue(v)
		if !ok || f < min || f > max {
			return violation(path, "must be a number in [%g, %g]", min, max)
		}
		return nil
	}
}

const maxSafeInteger = 1<<53 - 1

// maxFloat is the largest finite JSON number: the bound of a number without maximum.
const maxFloat = math.MaxFloat64

func integer(min, max float64) rule {
	return func(v any, path string) error {
		f, ok := numberValue(v)
		if !ok || f != math.Trunc(f) || f < min || f > max {
			return violation(path, "must be an integer in [%g, %g]", min, max)
		}
		return nil
	}
}

type arrayOpts struct {
	min, max int // max 0 = unbounded
	unique   bool
}

func arrayOf(item rule, o arrayOpts) rule {
	return func(v any, path string) error {
		items, ok := v.([]any)
		if !ok {
			return violation(path, "must be an array")
		}
		if len(items) < o.min || (o.max > 0 && len(items) > o.max) {
			return violation(path, "has %d items, out of range", len(items))
		}
		seen := map[string]bool{}
		for i, it := range items {
			itemPath := fmt.Sprintf("%s[%d]", path, i)
			if err := item(it, itemPath); err != nil {
				return err
			}
			if o.unique {
				key, _ := json.Marshal(it)
				if seen[string(key)] {
					return violation(itemPath, "is a duplicate")
				}
				seen[string(key)] = true
			}
		}
		return nil
	}
}

type field struct {
	name     string
	rule     rule
	required bool
}

func req(name string, r rule) field { return field{name, r, true} }
func opt(name string, r rule) field { return field{name, r, false} }

// object checks declared fields; strict objects reject any other key, open objects
// ignore unknown keys (forward compatibility).
func object(strict bool, fields ...field) rule {
	known := map[string]bool{}
	for _, f := range fields {
		known[f.name] = true
	}
	return func(v any, path string) error {
		m, ok := v.(map[string]any)
		if !ok {
			return violation(path, "must be an object")
		}
		for _, f := range fields {
			value, present := m[f.name]
			if !present {
				if f.required {
					return violation(path+"."+f.name, "is required")
				}
				continue
			}
			if err := f.rule(value, path+"."+f.name); err != nil {
				return err
			}
		}
		if strict {
			for key := range m {
				if !known[key] {
					return violation(path+"."+key, "is not allowed")
				}
			}
		}
		return nil
	}
}

// recordOf checks every value of an object with arbitrary keys.
func recordOf(value rule, maxProperties int) rule {
	return func(v any, path string) error {
		m, ok := v.(map[string]any)
		if !ok {
			return violation(path, "must be an object")
		}
		if maxProperties > 0 && len(m) > maxProperties {
			return violation(path, "has too many properties")
		}
		for key, item := range m {
			if err := value(item, path+"."+key); err != nil {
				return err
			}
		}
		return nil
	}
}

// withExtra extends an object rule: keys not declared by fields must satisfy extra.
func withExtra(base rule, declared []string, extra rule) rule {
	return func(v any, path string) error {
		if err := base(v, path); err != nil {
			return err
		}
		skip := map[string]bool{}
		for _, k := range declared {
			skip[k] = true
		}
		for key, item := range v.(map[string]any) {
			if !skip[key] {
				if err := extra(item, path+"."+key); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// anyOfRules accepts a value that passes at least one rule; otherwise it reports the
// first rule's violation.
func anyOfRules(rules ...rule) rule {
	return func(v any, path string) error {
		var first error
		for _, r := range rules {
			err := r(v, path)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
}

// containsString checks that an array (already checked as one) holds want.
func containsString(want string) rule {
	return func(v any, path string) error {
		for _, item := range v.([]any) {
			if item == want {
				return nil
			}
		}
		return violation(path, "must contain %q", want)
	}
}

// allOf runs several rules on the same value.
func allOf(rules ...rule) rule {
	return func(v any, path string) error {
		for _, r := range rules {
			if err := r(v, path); err != nil {
				return err
			}
		}
		return nil
	}
}
