// Package apitest makes the OpenAPI document executable for tests: it
// validates real HTTP responses against openapi.yaml, so that the document
// and the server cannot drift apart unnoticed.
//
// Schemas are JSON Schema 2020-12 (OpenAPI 3.1). The whole document is one
// schema resource named openapi.json, and a schema is compiled from its JSON
// pointer in it, such as
// openapi.json#/paths/~1accounts~1get/get/responses/200/content/application~1json/schema,
// so that every $ref to #/components resolves within the document.
package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/hitchdev/hitch"
)

// resourceName names the document as a schema resource; messages show
// schema locations relative to it.
const resourceName = "openapi.json"

// methods are the operation keys of an OpenAPI path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Validator checks responses against the OpenAPI document.
type Validator struct {
	doc map[string]any
	ops []*operation

	mu       sync.Mutex // guards compiler and schemas
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by JSON pointer
	base     string                        // the resource's absolute URL, trimmed from messages
}

// operation is one documented METHOD and path template.
type operation struct {
	method string         // upper case
	path   string         // the template, e.g. /merchants/{id}/logo.svg
	match  *regexp.Regexp // nil for a path without parameters
	ptr    string         // JSON pointer of the operation object
	node   map[string]any
}

// NewValidator parses an OpenAPI 3.1 document (YAML or JSON) and checks that
// it is well formed: openapi is 3.1.0, every $ref resolves within the
// document, every operation has a unique operationId and every path
// parameter is declared. Schemas are compiled when first used.
func NewValidator(doc []byte) (*Validator, error) {
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	plain, err := jsonValue(raw)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	// Round-trip through JSON so that numbers are json.Number, as the schema
	// library expects.
	data, err := json.Marshal(plain)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	root, ok := parsed.(map[string]any)
	if !ok {
		return nil, errors.New("openapi: the document is not an object")
	}
	v := &Validator{doc: root, schemas: map[string]*jsonschema.Schema{}}
	if err := v.check(); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(resourceName, root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	v.compiler = c
	if abs, err := filepath.Abs(resourceName); err == nil {
		v.base = "file://" + filepath.ToSlash(abs)
	}
	return v, nil
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Load returns a Validator for the embedded document hitch.OpenAPI, built
// once per test binary; it fails the test if the document is broken.
func Load(t testing.TB) *Validator {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = NewValidator(hitch.OpenAPI) })
	if loadErr != nil {
		t.Fatalf("openapi.yaml: %v", loadErr)
	}
	return loaded
}

// Operations returns "METHOD /path" for every documented operation, sorted.
func (v *Validator) Operations() []string {
	out := make([]string, len(v.ops))
	for i, op := range v.ops {
		out[i] = op.method + " " + op.path
	}
	slices.Sort(out)
	return out
}

// CheckRoutes compares the document with a route table of "METHOD /path"
// patterns (as given to http.ServeMux): it reports routes the document does
// not describe and operations that no route serves.
func (v *Validator) CheckRoutes(routes []string) error {
	documented := v.Operations()
	var errs []error
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			errs = append(errs, fmt.Errorf("openapi: route %q is not documented", r))
		}
	}
	for _, op := range documented {
		if !slices.Contains(routes, op) {
			errs = append(errs, fmt.Errorf("openapi: operation %q is documented but not routed", op))
		}
	}
	return errors.Join(errs...)
}

// ValidateResponse checks one response against the document. path is the
// request path without the query. The operation is found by path template
// and method (HEAD falls back to GET); the response by exact status, then
// its range ("4XX"), then "default". The Content-Type must be one the
// response documents (parameters such as charset are ignored), a JSON body
// must match the schema, and headers documented as required must be there
// and match their schemas.
//
// Two answers of the router are checked although no operation lists them,
// since they concern paths and methods the document does not have: a 404 for
// an undocumented path or method (development paths in production) must
// match components.responses.NotFound, and a 405 for an undocumented method
// on a documented path must match components.responses.MethodNotAllowed. Any
// other status there is an error.
func (v *Validator) ValidateResponse(method, path string, status int, header http.Header, body []byte) error {
	where := fmt.Sprintf("%s %s %d", method, path, status)
	op, pathKnown := v.find(method, path)
	var (
		resp    map[string]any
		respPtr string
		err     error
	)
	switch {
	case op != nil:
		resp, respPtr, err = v.pickResponse(op, status)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	case status == http.StatusNotFound:
		resp, respPtr, err = v.resolve("/components/responses/NotFound")
	case pathKnown && status == http.StatusMethodNotAllowed:
		resp, respPtr, err = v.resolve("/components/responses/MethodNotAllowed")
	case pathKnown:
		return fmt.Errorf("%s: method %s is not documented for this path", where, method)
	default:
		return fmt.Errorf("%s: path is not documented", where)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	headOnly := strings.EqualFold(method, http.MethodHead)
	errs := v.checkHeaders(resp, respPtr, header)
	errs = append(errs, v.checkBody(resp, respPtr, header, body, headOnly)...)
	if len(errs) == 0 {
		return nil
	}
	for i, e := range errs {
		errs[i] = fmt.Errorf("%s: %w", where, e)
	}
	return errors.Join(errs...)
}

// ValidateRequest checks a request body against the request body that the
// operation for method and path documents: its Content-Type and, for JSON,
// its schema. Tests use it to keep the document's request schemas honest
// (and a client's requests within them); Transport does not call it, since
// tests send invalid requests on purpose.
func (v *Validator) ValidateRequest(method, path string, header http.Header, body []byte) error {
	where := fmt.Sprintf("%s %s request", method, path)
	op, pathKnown := v.find(method, path)
	if op == nil {
		if pathKnown {
			return fmt.Errorf("%s: method %s is not documented for this path", where, method)
		}
		return fmt.Errorf("%s: path is not documented", where)
	}
	raw, ok := op.node["requestBody"]
	if !ok {
		if len(body) > 0 {
			return fmt.Errorf("%s: the operation documents no request body but one has %d bytes", where, len(body))
		}
		return nil
	}
	rb, rbPtr, err := v.resolveNode(raw, op.ptr+"/requestBody")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(body) == 0 {
		if required, _ := rb["required"].(bool); required {
			return fmt.Errorf("%s: the request body is required", where)
		}
		return nil
	}
	if errs := v.checkBody(rb, rbPtr, header, body, false); len(errs) > 0 {
		return fmt.Errorf("%s: %w", where, errors.Join(errs...))
	}
	return nil
}

// Transport returns an http.RoundTripper that sends requests with next
// (http.DefaultTransport when nil) and validates every response, reporting
// mismatches with t.Errorf. The response body is read and restored, so
// callers read it as usual.
func (v *Validator) Transport(t testing.TB, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			t.Errorf("openapi: %s %s: reading the response body: %v", req.Method, req.URL.Path, err)
			return resp, nil
		}
		if err := v.ValidateResponse(req.Method, req.URL.Path, resp.StatusCode, resp.Header, body); err != nil {
			t.Errorf("openapi: response does not match openapi.yaml: %v\nbody: %s", err, truncate(body, 2000))
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CompileAll compiles every schema the document holds (of parameters,
// request bodies, responses, headers and components) and checks every
// example against its schema, reporting all failures at once.
func (v *Validator) CompileAll() error {
	var errs []error
	compile := func(ptr string) *jsonschema.Schema {
		sch, err := v.schema(ptr)
		if err != nil {
			errs = append(errs, err)
		}
		return sch
	}
	// examples checks the example and examples of the object at ptr against
	// the schema sch.
	examples := func(sch *jsonschema.Schema, node map[string]any, ptr string) {
		if sch == nil {
			return
		}
		check := func(value any, at string) {
			if err := sch.Validate(value); err != nil {
				errs = append(errs, fmt.Errorf("%s: example does not match its schema: %s", at, v.clean(err)))
			}
		}
		if ex, ok := node["example"]; ok {
			check(ex, ptr+"/example")
		}
		exs, _ := node["examples"].(map[string]any)
		for _, name := range sortedKeys(exs) {
			ex, _, err := v.resolveNode(exs[name], ptr+"/examples/"+escape(name))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if value, ok := ex["value"]; ok {
				check(value, ptr+"/examples/"+escape(name)+"/value")
			}
		}
	}
	// withSchema compiles the schemas of the parameter, header, request body
	// or response at ptr (with its media types and headers) and checks their
	// examples.
	var withSchema func(node any, ptr string)
	withSchema = func(node any, ptr string) {
		obj, objPtr, err := v.resolveNode(node, ptr)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if _, ok := obj["schema"]; ok {
			examples(compile(objPtr+"/schema"), obj, objPtr)
		}
		content, _ := obj["content"].(map[string]any)
		for _, mt := range sortedKeys(content) {
			media, _ := content[mt].(map[string]any)
			mediaPtr := objPtr + "/content/" + escape(mt)
			if _, ok := media["schema"]; ok {
				examples(compile(mediaPtr+"/schema"), media, mediaPtr)
			}
		}
		headers, _ := obj["headers"].(map[string]any)
		for _, name := range sortedKeys(headers) {
			if !strings.EqualFold(name, "Content-Type") {
				withSchema(headers[name], objPtr+"/headers/"+escape(name))
			}
		}
	}
	paths, _ := v.doc["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		itemPtr := "/paths/" + escape(p)
		params, _ := item["parameters"].([]any)
		for i, prm := range params {
			withSchema(prm, itemPtr+"/parameters/"+strconv.Itoa(i))
		}
	}
	for _, op := range v.ops {
		params, _ := op.node["parameters"].([]any)
		for i, prm := range params {
			withSchema(prm, op.ptr+"/parameters/"+strconv.Itoa(i))
		}
		if rb, ok := op.node["requestBody"]; ok {
			withSchema(rb, op.ptr+"/requestBody")
		}
		responses, _ := op.node["responses"].(map[string]any)
		for _, code := range sortedKeys(responses) {
			withSchema(responses[code], op.ptr+"/responses/"+escape(code))
		}
	}
	components, _ := v.doc["components"].(map[string]any)
	for _, kind := range []string{"parameters", "headers", "requestBodies", "responses"} {
		group, _ := components[kind].(map[string]any)
		for _, name := range sortedKeys(group) {
			withSchema(group[name], "/components/"+kind+"/"+escape(name))
		}
	}
	schemas, _ := components["schemas"].(map[string]any)
	for _, name := range sortedKeys(schemas) {
		ptr := "/components/schemas/" + escape(name)
		sch := compile(ptr)
		obj, _ := schemas[name].(map[string]any)
		list, _ := obj["examples"].([]any)
		for i, ex := range list {
			if sch == nil {
				break
			}
			if err := sch.Validate(ex); err != nil {
				errs = append(errs, fmt.Errorf("%s/examples/%d: example does not match its schema: %s", ptr, i, v.clean(err)))
			}
		}
	}
	return errors.Join(errs...)
}

// find returns the operation for method and path, and whether any template
// matches path. A template without parameters wins over one with them.
func (v *Validator) find(method, path string) (*operation, bool) {
	method = strings.ToUpper(method)
	var matched []*operation
	for _, op := range v.ops {
		if op.match == nil && op.path == path {
			matched = append(matched, op)
		}
	}
	if len(matched) == 0 {
		for _, op := range v.ops {
			if op.match != nil && op.match.MatchString(path) {
				matched = append(matched, op)
			}
		}
	}
	if len(matched) == 0 {
		return nil, false
	}
	for _, want := range []string{method, http.MethodGet} {
		for _, op := range matched {
			if op.method == want {
				return op, true
			}
		}
		if method != http.MethodHead {
			break
		}
	}
	return nil, true
}

// pickResponse returns the response object for status: exact, range, then
// default.
func (v *Validator) pickResponse(op *operation, status int) (map[string]any, string, error) {
	responses, _ := op.node["responses"].(map[string]any)
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if r, ok := responses[key]; ok {
			return v.resolveNode(r, op.ptr+"/responses/"+escape(key))
		}
	}
	return nil, "", fmt.Errorf("status %d is not documented (documented: %s)", status, strings.Join(sortedKeys(responses), ", "))
}

func (v *Validator) checkHeaders(resp map[string]any, respPtr string, header http.Header) []error {
	var errs []error
	headers, _ := resp["headers"].(map[string]any)
	for _, name := range sortedKeys(headers) {
		if strings.EqualFold(name, "Content-Type") {
			continue
		}
		h, hPtr, err := v.resolveNode(headers[name], respPtr+"/headers/"+escape(name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		values := header.Values(name)
		if len(values) == 0 {
			if required, _ := h["required"].(bool); required {
				errs = append(errs, fmt.Errorf("required header %s is missing", name))
			}
			continue
		}
		if _, ok := h["schema"]; !ok {
			continue
		}
		sch, err := v.schema(hPtr + "/schema")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		schemaNode, _, _ := v.resolveNode(h["schema"], hPtr+"/schema")
		inst := headerValue(values[0], schemaNode)
		if err := sch.Validate(inst); err != nil {
			errs = append(errs, fmt.Errorf("header %s: %q does not match the schema: %s", name, values[0], v.clean(err)))
		}
	}
	return errs
}

// headerValue turns a header's text into the JSON value its schema expects.
func headerValue(s string, schema map[string]any) any {
	switch schema["type"] {
	case "integer", "number":
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			return json.Number(strconv.FormatFloat(n, 'f', -1, 64))
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

func (v *Validator) checkBody(resp map[string]any, respPtr string, header http.Header, body []byte, headOnly bool) []error {
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) > 0 {
			return []error{fmt.Errorf("the response documents no body but has %d bytes", len(body))}
		}
		return nil
	}
	contentType := header.Get("Content-Type")
	got, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return []error{fmt.Errorf("Content-Type %q is not a media type; documented: %s", contentType, strings.Join(sortedKeys(content), ", "))}
	}
	key := ""
	for _, k := range sortedKeys(content) {
		if mediaTypeMatches(k, got) {
			key = k
			break
		}
	}
	if key == "" {
		return []error{fmt.Errorf("Content-Type %q is not documented; documented: %s", contentType, strings.Join(sortedKeys(content), ", "))}
	}
	if headOnly || !isJSON(got) {
		return nil
	}
	media, _ := content[key].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return nil
	}
	sch, err := v.schema(respPtr + "/content/" + escape(key) + "/schema")
	if err != nil {
		return []error{err}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []error{fmt.Errorf("the body is not valid JSON: %v", err)}
	}
	if err := sch.Validate(inst); err != nil {
		return []error{fmt.Errorf("the body does not match the schema: %s", v.clean(err))}
	}
	return nil
}

// mediaTypeMatches reports whether the media type got falls under the
// documented key, which may be a range such as image/* and carry parameters.
func mediaTypeMatches(key, got string) bool {
	want, _, err := mime.ParseMediaType(key)
	if err != nil {
		want = strings.ToLower(strings.TrimSpace(key))
	}
	if want == "*/*" || want == got {
		return true
	}
	if prefix, ok := strings.CutSuffix(want, "/*"); ok {
		return strings.HasPrefix(got, prefix+"/")
	}
	return false
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// schema compiles, once, the schema at the JSON pointer ptr.
func (v *Validator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sch, ok := v.schemas[ptr]; ok {
		return sch, nil
	}
	sch, err := v.compiler.Compile(resourceName + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %s", ptr, v.clean(err))
	}
	v.schemas[ptr] = sch
	return sch, nil
}

// clean shortens the absolute schema URLs in an error's text.
func (v *Validator) clean(err error) string {
	s := err.Error()
	if v.base != "" {
		s = strings.ReplaceAll(s, v.base, resourceName)
	}
	return s
}

// check verifies that the document is well formed and indexes its
// operations.
func (v *Validator) check() error {
	var errs []error
	if got, _ := v.doc["openapi"].(string); got != "3.1.0" {
		errs = append(errs, fmt.Errorf("openapi is %q, want \"3.1.0\"", v.doc["openapi"]))
	}
	errs = append(errs, v.checkRefs(v.doc, "")...)
	paths, ok := v.doc["paths"].(map[string]any)
	if !ok {
		errs = append(errs, errors.New("paths is missing"))
	}
	operationIDs := map[string]string{}
	for _, p := range sortedKeys(paths) {
		itemPtr := "/paths/" + escape(p)
		if !strings.HasPrefix(p, "/") {
			errs = append(errs, fmt.Errorf("%s: a path must start with /", itemPtr))
		}
		item, ok := paths[p].(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not an object", itemPtr))
			continue
		}
		match, names, err := template(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", itemPtr, err))
			continue
		}
		for _, m := range methods {
			node, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op := &operation{method: strings.ToUpper(m), path: p, match: match, ptr: itemPtr + "/" + m, node: node}
			v.ops = append(v.ops, op)
			id, _ := node["operationId"].(string)
			switch {
			case id == "":
				errs = append(errs, fmt.Errorf("%s %s: no operationId", op.method, p))
			case operationIDs[id] != "":
				errs = append(errs, fmt.Errorf("%s %s: operationId %q is also used by %s", op.method, p, id, operationIDs[id]))
			default:
				operationIDs[id] = op.method + " " + p
			}
			if responses, _ := node["responses"].(map[string]any); len(responses) == 0 {
				errs = append(errs, fmt.Errorf("%s %s: no responses", op.method, p))
			}
			declared := v.pathParams(item, itemPtr)
			for name := range v.pathParams(node, op.ptr) {
				declared[name] = true
			}
			for _, name := range names {
				if !declared[name] {
					errs = append(errs, fmt.Errorf("%s %s: path parameter %q is not declared", op.method, p, name))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("openapi: the document is not well formed:\n%w", err)
	}
	return nil
}

// pathParams returns the names of the path parameters declared by node.
func (v *Validator) pathParams(node map[string]any, ptr string) map[string]bool {
	out := map[string]bool{}
	params, _ := node["parameters"].([]any)
	for i, raw := range params {
		p, _, err := v.resolveNode(raw, ptr+"/parameters/"+strconv.Itoa(i))
		if err != nil {
			continue // reported by checkRefs
		}
		if in, _ := p["in"].(string); in == "path" {
			name, _ := p["name"].(string)
			out[name] = true
		}
	}
	return out
}

// checkRefs reports every $ref under node that does not resolve within the
// document.
func (v *Validator) checkRefs(node any, ptr string) []error {
	var errs []error
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			if _, err := v.lookupRef(ref); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ptr, err))
			}
		}
		for _, k := range sortedKeys(n) {
			errs = append(errs, v.checkRefs(n[k], ptr+"/"+escape(k))...)
		}
	case []any:
		for i, item := range n {
			errs = append(errs, v.checkRefs(item, ptr+"/"+strconv.Itoa(i))...)
		}
	}
	return errs
}

// resolve returns the object at the JSON pointer ptr, following $refs.
func (v *Validator) resolve(ptr string) (map[string]any, string, error) {
	node, err := v.lookup(ptr)
	if err != nil {
		return nil, "", err
	}
	return v.resolveNode(node, ptr)
}

// resolveNode follows the $ref of an OpenAPI Reference Object (node lives at
// ptr) and returns the object and its own pointer.
func (v *Validator) resolveNode(node any, ptr string) (map[string]any, string, error) {
	for range 16 {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s: not an object", ptr)
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return obj, ptr, nil
		}
		target, err := v.lookupRef(ref)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", ptr, err)
		}
		node, ptr = target, strings.TrimPrefix(ref, "#")
	}
	return nil, "", fmt.Errorf("%s: $ref chain too long", ptr)
}

// lookupRef resolves a document-local $ref such as
// #/components/schemas/Account.
func (v *Validator) lookupRef(ref string) (any, error) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only references within the document are supported", ref)
	}
	node, err := v.lookup(ptr)
	if err != nil {
		return nil, fmt.Errorf("$ref %q does not resolve: %w", ref, err)
	}
	return node, nil
}

// lookup returns the value at a JSON pointer (RFC 6901) in the document.
func (v *Validator) lookup(ptr string) (any, error) {
	var node any = v.doc
	if ptr == "" {
		return node, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("pointer %q must start with /", ptr)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return nil, fmt.Errorf("no %q in %s", tok, ptr)
			}
			node = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, fmt.Errorf("no index %q in %s", tok, ptr)
			}
			node = n[i]
		default:
			return nil, fmt.Errorf("%s goes through a scalar", ptr)
		}
	}
	return node, nil
}

var templateParam = regexp.MustCompile(`\{([^{}/]+)\}`)

// template compiles a path template into a regexp in which each {name}
// matches one non-empty segment; it returns nil for a literal path.
func template(path string) (*regexp.Regexp, []string, error) {
	locs := templateParam.FindAllStringSubmatchIndex(path, -1)
	if len(locs) == 0 {
		if strings.ContainsAny(path, "{}") {
			return nil, nil, fmt.Errorf("malformed path template %q", path)
		}
		return nil, nil, nil
	}
	var expr strings.Builder
	var names []string
	expr.WriteString("^")
	last := 0
	for _, loc := range locs {
		literal := path[last:loc[0]]
		if strings.ContainsAny(literal, "{}") {
			return nil, nil, fmt.Errorf("malformed path template %q", path)
		}
		expr.WriteString(regexp.QuoteMeta(literal))
		expr.WriteString("[^/]+")
		names = append(names, path[loc[2]:loc[3]])
		last = loc[1]
	}
	if strings.ContainsAny(path[last:], "{}") {
		return nil, nil, fmt.Errorf("malformed path template %q", path)
	}
	expr.WriteString(regexp.QuoteMeta(path[last:]))
	expr.WriteString("$")
	re, err := regexp.Compile(expr.String())
	return re, names, err
}

// jsonValue converts a decoded YAML value to one encoding/json can encode:
// mappings with non-string keys become map[string]any.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			key := fmt.Sprint(k)
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[key] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

// escape escapes one JSON pointer token.
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
