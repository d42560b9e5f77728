// Package apitest makes the OpenAPI document executable for tests: it
// validates real HTTP responses against openapi.yaml with
// github.com/pb33f/libopenapi-validator, so that the document and the server
// cannot drift apart unnoticed.
package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/hitchdev/hitch"
)

// Validator checks responses against the OpenAPI document. It is immutable
// and safe for concurrent use.
type Validator struct {
	model *v3.Document
	lib   validator.Validator
}

// NewValidator parses an OpenAPI 3.1 document (YAML or JSON) and checks that
// it is valid against the OpenAPI 3.1 schema, that every $ref resolves, that
// every operation has a unique operationId and that every path parameter is
// declared.
func NewValidator(doc []byte) (*Validator, error) {
	// Errors come back as values; the library's log would only repeat them.
	docConfig := datamodel.NewDocumentConfiguration()
	docConfig.Logger = slog.New(slog.DiscardHandler)
	document, err := libopenapi.NewDocumentWithConfiguration(doc, docConfig)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	if version := document.GetVersion(); !strings.HasPrefix(version, "3.1.") {
		return nil, fmt.Errorf("openapi: version is %q, want 3.1.x", version)
	}
	model, err := document.BuildV3Model() // reports $refs that do not resolve
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	lib, errs := validator.NewValidator(document, config.WithFormatAssertions(), config.WithRejectUndeclaredRequestBody())
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: %w", errors.Join(errs...))
	}
	if ok, verrs := lib.ValidateDocument(); !ok {
		return nil, fmt.Errorf("openapi: the document is not valid OpenAPI 3.1: %w", joinErrors(verrs))
	}
	v := &Validator{model: &model.Model, lib: lib}
	if err := v.checkOperations(); err != nil {
		return nil, err
	}
	return v, nil
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Load returns a Validator for the embedded document hitch.OpenAPI, built
// once per test binary since building it compiles every schema; it fails
// the test if the document is broken.
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
	var out []string
	if v.model.Paths != nil {
		for path, item := range v.model.Paths.PathItems.FromOldest() {
			for method := range item.GetOperations().FromOldest() {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// QueryParameters returns the query parameters an operation ("METHOD
// /path") documents, in the document's order.
func (v *Validator) QueryParameters(operation string) []string {
	var out []string
	if v.model.Paths == nil {
		return nil
	}
	for path, item := range v.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			if strings.ToUpper(method)+" "+path != operation {
				continue
			}
			for _, p := range slices.Concat(item.Parameters, op.Parameters) {
				if p.In == "query" {
					out = append(out, p.Name)
				}
			}
		}
	}
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

// CheckWebhooks compares the document with the event types Hitch sends:
// each has an entry in webhooks, a POST whose body's event is that type,
// and is in the WebhookEventType enum; the document names no other type.
func (v *Validator) CheckWebhooks(types []string) error {
	var errs []error
	documented := map[string]bool{}
	for name, item := range v.model.Webhooks.FromOldest() {
		documented[name] = true
		if !slices.Contains(types, name) {
			errs = append(errs, fmt.Errorf("openapi: webhook %q is not an event type", name))
		}
		if got := webhookEvent(item); got != name {
			errs = append(errs, fmt.Errorf("openapi: webhook %q: its POST body's event is %q", name, got))
		}
	}
	var enum []string
	if c := v.model.Components; c != nil {
		if s := c.Schemas.GetOrZero("WebhookEventType"); s != nil {
			for _, n := range s.Schema().Enum {
				enum = append(enum, n.Value)
			}
		}
	}
	for _, typ := range types {
		if !documented[typ] {
			errs = append(errs, fmt.Errorf("openapi: event type %q has no entry in webhooks", typ))
		}
		if !slices.Contains(enum, typ) {
			errs = append(errs, fmt.Errorf("openapi: event type %q is not in WebhookEventType", typ))
		}
	}
	for _, typ := range enum {
		if !slices.Contains(types, typ) {
			errs = append(errs, fmt.Errorf("openapi: WebhookEventType %q is not an event type", typ))
		}
	}
	return errors.Join(errs...)
}

// webhookEvent returns the const of the event property of a webhook's POST
// body ("" when there is none).
func webhookEvent(item *v3.PathItem) string {
	if item.Post == nil || item.Post.RequestBody == nil {
		return ""
	}
	media := item.Post.RequestBody.Content.GetOrZero("application/json")
	if media == nil || media.Schema == nil {
		return ""
	}
	event := media.Schema.Schema().Properties.GetOrZero("event")
	if event == nil || event.Schema().Const == nil {
		return ""
	}
	return event.Schema().Const.Value
}

// ValidateResponse checks one response against the document. path is the
// request path without the query. The operation must be documented (HEAD
// falls back to GET), and so must the status (exactly, by range such as
// 4XX, or by default); the Content-Type must be one the response documents
// (parameters such as charset are ignored), a JSON body must match its
// schema, documented headers must match theirs and a response that
// documents no content must have no body.
//
// Two answers of the router are checked although no operation lists them,
// since they concern paths and methods the document does not have: a 404 for
// an undocumented path or method (development paths in production) must
// match components.responses.NotFound, and a 405 for an undocumented method
// on a documented path must match components.responses.MethodNotAllowed.
func (v *Validator) ValidateResponse(method, path string, status int, header http.Header, body []byte) error {
	// Built by hand: a request path the server got need not parse as a URL.
	req := &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}}
	resp := &http.Response{StatusCode: status, Header: header, Body: http.NoBody, Request: req}
	if len(body) > 0 {
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	item, errs, template := paths.FindPath(req, v.model, nil)
	var op *v3.Operation
	if item != nil {
		op = helpers.ExtractOperation(req, item)
	}
	switch {
	case op != nil:
		_, errs = v.lib.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, resp, item, template)
		// The library does not look at the body of a response without content.
		if r := documentedResponse(op, status); r != nil && orderedmap.Len(r.Content) == 0 && len(body) > 0 {
			errs = append(errs, &liberrors.ValidationError{Message: fmt.Sprintf("the response documents no body but has %d bytes", len(body))})
		}
	case status == http.StatusNotFound:
		errs = v.validateRouterAnswer(req, resp, "NotFound")
	case item != nil && status == http.StatusMethodNotAllowed:
		errs = v.validateRouterAnswer(req, resp, "MethodNotAllowed")
	}
	if err := joinErrors(errs); err != nil {
		return fmt.Errorf("%s %s %d: %w", method, path, status, err)
	}
	return nil
}

// validateRouterAnswer checks resp against the component response named
// name, through an operation that documents only that response.
func (v *Validator) validateRouterAnswer(req *http.Request, resp *http.Response, name string) []*liberrors.ValidationError {
	documented, ok := v.model.Components.Responses.Get(name)
	if !ok {
		return []*liberrors.ValidationError{{Message: "components.responses." + name + " is not documented"}}
	}
	op := &v3.Operation{Responses: &v3.Responses{Codes: orderedmap.New[string, *v3.Response]()}}
	op.Responses.Codes.Set(strconv.Itoa(resp.StatusCode), documented)
	req = req.Clone(req.Context())
	if req.Method != http.MethodHead { // the library answers HEAD with GET
		req.Method = http.MethodGet
	}
	_, errs := v.lib.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, resp, &v3.PathItem{Get: op}, req.URL.Path)
	return errs
}

// documentedResponse returns the response op documents for status, picked
// as the library picks it (exact, range, then default), or nil.
func documentedResponse(op *v3.Operation, status int) *v3.Response {
	if op.Responses == nil {
		return nil
	}
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX"} {
		if r, ok := op.Responses.Codes.Get(key); ok {
			return r
		}
	}
	return op.Responses.Default
}

// ValidateRequest checks a request body against the request body that the
// operation for method and path documents: its Content-Type and, for JSON,
// its schema. Tests use it to keep the document's request schemas honest
// (and a client's requests within them); Transport does not call it, since
// tests send invalid requests on purpose.
func (v *Validator) ValidateRequest(method, path string, header http.Header, body []byte) error {
	req, err := http.NewRequest(method, path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	if _, errs := v.lib.GetRequestBodyValidator().ValidateRequestBody(req); len(errs) > 0 {
		return fmt.Errorf("%s %s request: %w", method, path, joinErrors(errs))
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

// CheckExamples checks every example of the document (of parameters,
// headers, request and response bodies, and component schemas) against its
// schema, reporting all failures at once.
func (v *Validator) CheckExamples() error {
	sv := schema_validation.NewSchemaValidatorWithLogger(slog.New(slog.DiscardHandler), config.WithFormatAssertions())
	var errs []error
	seen := map[*yaml.Node]bool{} // an example reached through a $ref is checked once
	check := func(at string, schema *base.SchemaProxy, value *yaml.Node) {
		if seen[value] {
			return
		}
		seen[value] = true
		var decoded any
		if err := value.Decode(&decoded); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			return
		}
		data, err := json.Marshal(decoded)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			return
		}
		if ok, verrs := sv.ValidateSchemaBytes(schema.Schema(), data); !ok {
			errs = append(errs, fmt.Errorf("%s: the example does not match its schema: %w", at, joinErrors(verrs)))
		}
	}
	// examples checks the example and examples held next to a schema.
	examples := func(at string, schema *base.SchemaProxy, example *yaml.Node, named *orderedmap.Map[string, *base.Example]) {
		if schema == nil {
			return
		}
		if example != nil {
			check(at+"/example", schema, example)
		}
		for name, ex := range named.FromOldest() {
			if ex.Value != nil {
				check(at+"/examples/"+escape(name)+"/value", schema, ex.Value)
			}
		}
	}
	content := func(at string, media *orderedmap.Map[string, *v3.MediaType]) {
		for name, m := range media.FromOldest() {
			examples(at+"/content/"+escape(name), m.Schema, m.Example, m.Examples)
		}
	}
	parameters := func(at string, params []*v3.Parameter) {
		for i, p := range params {
			examples(at+"/parameters/"+strconv.Itoa(i), p.Schema, p.Example, p.Examples)
		}
	}
	headers := func(at string, hs *orderedmap.Map[string, *v3.Header]) {
		for name, h := range hs.FromOldest() {
			examples(at+"/headers/"+escape(name), h.Schema, h.Example, h.Examples)
		}
	}
	response := func(at string, r *v3.Response) {
		content(at, r.Content)
		headers(at, r.Headers)
	}
	item := func(at string, it *v3.PathItem) {
		parameters(at, it.Parameters)
		for method, op := range it.GetOperations().FromOldest() {
			opAt := at + "/" + method
			parameters(opAt, op.Parameters)
			if op.RequestBody != nil {
				content(opAt+"/requestBody", op.RequestBody.Content)
			}
			if op.Responses != nil {
				for code, r := range op.Responses.Codes.FromOldest() {
					response(opAt+"/responses/"+code, r)
				}
				if op.Responses.Default != nil {
					response(opAt+"/responses/default", op.Responses.Default)
				}
			}
		}
	}
	// Components first, so that an error names the component.
	if c := v.model.Components; c != nil {
		for name, p := range c.Parameters.FromOldest() {
			examples("/components/parameters/"+escape(name), p.Schema, p.Example, p.Examples)
		}
		headers("/components", c.Headers)
		for name, r := range c.Responses.FromOldest() {
			response("/components/responses/"+escape(name), r)
		}
		for name, rb := range c.RequestBodies.FromOldest() {
			content("/components/requestBodies/"+escape(name), rb.Content)
		}
		for name, s := range c.Schemas.FromOldest() {
			for i, ex := range s.Schema().Examples {
				check("/components/schemas/"+escape(name)+"/examples/"+strconv.Itoa(i), s, ex)
			}
		}
	}
	if v.model.Paths != nil {
		for path, it := range v.model.Paths.PathItems.FromOldest() {
			item("/paths/"+escape(path), it)
		}
	}
	for name, it := range v.model.Webhooks.FromOldest() {
		item("/webhooks/"+escape(name), it)
	}
	return errors.Join(errs...)
}

var templateParam = regexp.MustCompile(`\{([^{}/]+)\}`)

// checkOperations checks what the OpenAPI schema cannot: operationIds are
// unique and every {name} of a path template is a declared path parameter.
func (v *Validator) checkOperations() error {
	var errs []error
	ids := map[string]string{}
	if v.model.Paths != nil {
		for path, item := range v.model.Paths.PathItems.FromOldest() {
			for method, op := range item.GetOperations().FromOldest() {
				name := strings.ToUpper(method) + " " + path
				switch {
				case op.OperationId == "":
					errs = append(errs, fmt.Errorf("%s: no operationId", name))
				case ids[op.OperationId] != "":
					errs = append(errs, fmt.Errorf("%s: operationId %q is also used by %s", name, op.OperationId, ids[op.OperationId]))
				default:
					ids[op.OperationId] = name
				}
				declared := map[string]bool{}
				for _, p := range slices.Concat(item.Parameters, op.Parameters) {
					declared[p.Name] = declared[p.Name] || p.In == "path"
				}
				for _, m := range templateParam.FindAllStringSubmatch(path, -1) {
					if !declared[m[1]] {
						errs = append(errs, fmt.Errorf("%s: path parameter %q is not declared", name, m[1]))
					}
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("openapi: the document is not well formed:\n%w", err)
	}
	return nil
}

// joinErrors turns the library's validation errors into one error, each
// with the JSON pointer of the failing value in the body.
func joinErrors(verrs []*liberrors.ValidationError) error {
	var errs []error
	for _, e := range verrs {
		msg := e.Message
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			msg += fmt.Sprintf("\n\tat %q: %s", "/"+strings.Join(f.InstancePath, "/"), f.Reason)
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// escape escapes one JSON pointer token.
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
