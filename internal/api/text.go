package api

import (
	"bytes"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Every string a request gives Hitch may reach the store, and PostgreSQL's
// text holds neither NUL nor invalid UTF-8 (SQLite keeps both). Requests
// are held to what both stores hold (validText) before any handler runs:
// path values and query parameters here, JSON strings in decode
// (checkDecodedText). Either store then answers the same: 400 naming the
// field. The store refuses such text too (store.ErrInvalidText), for what
// does not come through here (the dashboard's forms).

// errUnstorableText names what is not validText: a field, a path
// parameter or a query parameter.
func errUnstorableText(what string) *Error {
	return errInvalidField("The %s must be valid UTF-8 text without NUL characters.", what)
}

// checkRequestText refuses a request whose path values or query parameters
// (names or values) are not validText. It runs before authentication,
// as routing does: it reads nothing but the request.
func checkRequestText(r *http.Request) error {
	for _, name := range patternWildcards(r.Pattern) {
		if !validText(r.PathValue(name)) {
			return errUnstorableText(name + " path parameter")
		}
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if !validText(name) {
			// The name itself is not repeated: it is what is wrong.
			return errUnstorableText("name of a query parameter")
		}
		for _, v := range q[name] {
			if !validText(v) {
				return errUnstorableText(name + " query parameter")
			}
		}
	}
	return nil
}

// patternWildcards lists the wildcard names of a ServeMux pattern
// ("DELETE /webhooks/endpoints/{id}" has id).
func patternWildcards(pattern string) []string {
	var names []string
	for rest := pattern; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return names
		}
		name := strings.TrimSuffix(rest[open+1:open+end], "...")
		if name != "$" {
			names = append(names, name)
		}
		rest = rest[open+end+1:]
	}
}

// escapedNUL is how a NUL appears in JSON text: the only way, since a raw
// control character inside a string is not JSON.
var escapedNUL = []byte(`\u0000`)

// checkDecodedText refuses a decoded request whose strings hold a NUL
// (decoding already refuses invalid UTF-8), naming the field as decoding
// errors do, after at. Raw JSON kept as bytes is not looked into: it is
// checked where it is decoded, or stored as the JSON text it is.
func checkDecodedText(data []byte, dst any, at string) error {
	if !bytes.Contains(data, escapedNUL) {
		return nil
	}
	if name, ok := findNUL(reflect.ValueOf(dst), at); ok {
		if name == "" {
			return errInvalidField("The request body must be UTF-8 text without NUL characters.")
		}
		return errUnstorableText(name + " field")
	}
	return nil
}

// findNUL walks v for a string holding a NUL and returns its field name.
// A map entry is named by its key (metadata.k), as decoding errors name
// it; a key holding the NUL is not repeated: the map is named.
func findNUL(v reflect.Value, name string) (string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return findNUL(v.Elem(), name)
	case reflect.String:
		return name, strings.IndexByte(v.String(), 0) >= 0
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			jsonName, inline := jsonFieldName(f)
			if jsonName == "-" {
				continue
			}
			at := name
			if !inline {
				at = joinField(name, jsonName)
			}
			if n, ok := findNUL(v.Field(i), at); ok {
				return n, true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw JSON or bytes
			return "", false
		}
		for i := range v.Len() {
			if n, ok := findNUL(v.Index(i), name+"["+strconv.Itoa(i)+"]"); ok {
				return n, true
			}
		}
	case reflect.Map:
		for iter := v.MapRange(); iter.Next(); {
			if _, ok := findNUL(iter.Key(), name); ok {
				return name, true
			}
			at := name
			if k := iter.Key(); k.Kind() == reflect.String {
				at = joinField(name, k.String()) // as decoding errors name it
			}
			if n, ok := findNUL(iter.Value(), at); ok {
				return n, true
			}
		}
	}
	return "", false
}

// jsonFieldName is the JSON name of a struct field, and whether its
// members are inlined into the enclosing object.
func jsonFieldName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" && opts == "" {
		return "-", false
	}
	if strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && name == "") {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return strings.Trim(name, "'"), false
}

func joinField(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
