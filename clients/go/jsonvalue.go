package agenticdriver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

// parseJSON decodes one JSON document into generic values (objects as map[string]any,
// numbers as json.Number) so validation sees the exact wire keys and number text.
// encoding/json would silently replace invalid UTF-8, so it is rejected first.
func parseJSON(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: trailing data after the document")
	}
	return v, nil
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// decodeExact fills v from already validated JSON, matching object keys to `json` tags
// case-sensitively. encoding/json matches keys case-insensitively, which would let an
// unknown key such as "Session" overwrite the field for "session".
func decodeExact(data []byte, v any) error {
	return decodeInto(data, reflect.ValueOf(v).Elem())
}

func decodeInto(data []byte, target reflect.Value) error {
	t := target.Type()
	switch {
	case t == rawMessageType:
		target.SetBytes(append([]byte(nil), data...))
		return nil
	case t.Kind() == reflect.Pointer:
		if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
			target.SetZero()
			return nil
		}
		elem := reflect.New(t.Elem())
		if err := decodeInto(data, elem.Elem()); err != nil {
			return err
		}
		target.Set(elem)
		return nil
	case !needsOwnDecoding(t):
		return json.Unmarshal(data, target.Addr().Interface())
	case target.CanInt():
		return decodeInteger(data, target)
	case t.Kind() == reflect.Struct:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			return err
		}
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.Anonymous && f.Tag.Get("json") == "" {
				// An embedded struct shares the keys of its parent object.
				if err := decodeInto(data, target.Field(i)); err != nil {
					return err
				}
				continue
			}
			name := jsonName(t.Field(i))
			if raw, ok := fields[name]; ok && name != "" {
				if err := decodeInto(raw, target.Field(i)); err != nil {
					return err
				}
			}
		}
		return nil
	case t.Kind() == reflect.Slice:
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return err
		}
		if items == nil {
			target.SetZero()
			return nil
		}
		out := reflect.MakeSlice(t, len(items), len(items))
		for i, raw := range items {
			if err := decodeInto(raw, out.Index(i)); err != nil {
				return err
			}
		}
		target.Set(out)
		return nil
	case t.Kind() == reflect.Map:
		var items map[string]json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return err
		}
		out := reflect.MakeMapWithSize(t, len(items))
		for key, raw := range items {
			elem := reflect.New(t.Elem()).Elem()
			if err := decodeInto(raw, elem); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
		}
		target.Set(out)
		return nil
	}
	return fmt.Errorf("agenticdriver: cannot decode into %s", t)
}

// needsOwnDecoding reports whether t contains a struct, whose keys must be matched
// exactly, or an integer, which JSON may write as 2.0 or 2e0.
func needsOwnDecoding(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Array:
		return t != rawMessageType && needsOwnDecoding(t.Elem())
	}
	return false
}

// decodeInteger accepts any JSON number with an integral value, as the wire schemas do.
func decodeInteger(data []byte, target reflect.Value) error {
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return err
	}
	if i, err := n.Int64(); err == nil {
		target.SetInt(i)
		return nil
	}
	f, ok := numberValue(n)
	if !ok || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return fmt.Errorf("%s is not an integer", n)
	}
	target.SetInt(int64(f))
	return nil
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	tag, _, _ = strings.Cut(tag, ",")
	if tag == "" {
		return f.Name
	}
	return tag
}
