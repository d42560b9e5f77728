package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/hitchdev/hitch/internal/jsonscan"
)

// checkKeys walks a syntactically valid JSON body against the type it will
// be decoded into and rejects what encoding/json would let through: keys
// that match a field only case-insensitively, duplicate keys (where the last
// would silently win, so that two parsers of one request could disagree),
// and unknown keys, named by their full path (transactions.old).
func checkKeys(body []byte, t reflect.Type) error {
	dec := jsonscan.New(body)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return errInvalidField("The request body must be a JSON object.")
		}
		return checkObject(dec, t, "")
	}
	return checkValue(dec, t, "")
}

// checkValue checks the next value; t is nil where any JSON is allowed.
func checkValue(dec *jsonscan.Scanner, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		if t == nil || (t.Kind() != reflect.Struct && t.Kind() != reflect.Map) {
			t = nil // a type mismatch: left for the decoder to report
		}
		return checkObject(dec, t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := checkValue(dec, elem, path+"[]"); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ]
		return err
	default:
		return nil
	}
}

// checkObject checks the members of an object whose '{' was just read.
func checkObject(dec *jsonscan.Scanner, t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		name := key
		if path != "" {
			name = path + "." + key
		}
		if seen[key] {
			return errInvalidField("The %s field appears more than once.", name)
		}
		seen[key] = true
		valueType := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				return errInvalidField("The %s field is not allowed.", name)
			}
			valueType = ft
		}
		if err := checkValue(dec, valueType, name); err != nil {
			return err
		}
	}
	_, err := dec.Token() // }
	return err
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps a struct's exact JSON member names to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	fieldCache.Store(t, fields)
	return fields
}
