package apitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hitchdev/hitch/internal/api/apitest"
	"github.com/hitchdev/hitch/internal/event"
)

// TestCheckRoutes checks the comparison both ways; internal/api's
// TestRoutesMatchTheContract holds the real route table against the document.
func TestCheckRoutes(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	routes := v.Operations()
	if !slices.Contains(routes, "GET /healthz") || !slices.IsSorted(routes) {
		t.Fatalf("Operations() = %q", routes)
	}
	if err := v.CheckRoutes(routes); err != nil {
		t.Error(err)
	}
	drifted := append(slices.DeleteFunc(slices.Clone(routes), func(r string) bool { return r == "GET /healthz" }), "GET /nowhere/{id}")
	err := v.CheckRoutes(drifted)
	if err == nil || !strings.Contains(err.Error(), `route "GET /nowhere/{id}" is not documented`) ||
		!strings.Contains(err.Error(), `operation "GET /healthz" is documented but not routed`) {
		t.Errorf("CheckRoutes with a drifted table: %v", err)
	}
}

// Every event type Hitch can send is described in the document's webhooks,
// and the document describes no other; a drifted list is reported both
// ways.
func TestWebhooksMatchEventTypes(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	if err := v.CheckWebhooks(event.Types); err != nil {
		t.Fatal(err)
	}
	drifted := append(slices.DeleteFunc(slices.Clone(event.Types), func(typ string) bool { return typ == event.Test }), "NEW_THING")
	err := v.CheckWebhooks(drifted)
	for _, want := range []string{`event type "NEW_THING" has no entry in webhooks`, `event type "NEW_THING" is not in WebhookEventType`,
		`webhook "TEST" is not an event type`, `WebhookEventType "TEST" is not an event type`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWebhooks with a drifted list: %v; want %s", err, want)
		}
	}
}

// TestDocumentExamples checks every example of the embedded document
// against its schema (Load has already checked the document itself).
func TestDocumentExamples(t *testing.T) {
	t.Parallel()
	if err := apitest.Load(t).CheckExamples(); err != nil {
		t.Fatal(err)
	}
}

func TestDocumentMustBeWellFormed(t *testing.T) {
	t.Parallel()
	const okOp = `
      operationId: ok
      responses:
        "200":
          description: ok
`
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not 3.1", "openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths: {}\n", `version is "3.0.3"`},
		{"not YAML", "openapi: [", "parse"},
		{"not valid against the OpenAPI schema", "openapi: 3.1.0\npaths: {}\n", "missing property 'info'"},
		{"broken ref", `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200":
          $ref: "#/components/responses/Nope"
`, "#/components/responses/Nope` does not exist"},
		{"external ref", `openapi: 3.1.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    A:
      $ref: "other.yaml#/A"
`, "cannot resolve reference `other.yaml#/A`"},
		{"no operationId", "openapi: 3.1.0\ninfo: {title: t, version: \"1\"}\npaths:\n  /a:\n    get:\n      responses:\n        \"200\":\n          description: ok\n", "GET /a: no operationId"},
		{"duplicate operationId", "openapi: 3.1.0\ninfo: {title: t, version: \"1\"}\npaths:\n  /a:\n    get:" + okOp + "  /b:\n    post:" + okOp, `operationId "ok" is also used by GET /a`},
		{"undeclared path parameter", "openapi: 3.1.0\ninfo: {title: t, version: \"1\"}\npaths:\n  /a/{id}:\n    get:" + okOp, `path parameter "id" is not declared`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apitest.NewValidator([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckExamples(t *testing.T) {
	t.Parallel()
	v, err := apitest.NewValidator([]byte(`openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/A"
              examples:
                wrong:
                  value: {n: "one"}
                right:
                  value: {n: 1}
        default:
          $ref: "#/components/responses/Shared"
  /b:
    get:
      operationId: b
      responses:
        default:
          $ref: "#/components/responses/Shared"
components:
  responses:
    Shared:
      description: shared by two operations
      content:
        application/json:
          schema:
            $ref: "#/components/schemas/A"
          example: {n: 1.5}
  schemas:
    A:
      type: object
      properties:
        n: {type: integer}
      examples: [{n: 2}, {n: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	err = v.CheckExamples()
	if err == nil {
		t.Fatal("CheckExamples accepted wrong examples")
	}
	msg := err.Error()
	for _, want := range []string{
		"/paths/~1a/get/responses/200/content/application~1json/examples/wrong/value:",
		"/components/responses/Shared/content/application~1json/example:",
		"/components/schemas/A/examples/1:",
	} {
		if strings.Count(msg, want) != 1 {
			t.Errorf("the error should report %s once:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "examples/right") || strings.Contains(msg, "examples/0") || strings.Count(msg, "does not match") != 3 {
		t.Errorf("the error should report exactly the three wrong examples:\n%s", msg)
	}
}

// jsonHeader is what the API sends with every JSON response.
func jsonHeader() http.Header {
	return http.Header{
		"Content-Type": {"application/json"},
		"X-Request-Id": {"req_4f1c2a9be07d5a3c81e6f20b"},
		"Knot-Version": {"2.0"},
	}
}

const account = `{
	"merchant": {"id": 1, "name": "Amazon", "logo": "http://127.0.0.1:8080/merchants/1/logo.svg"},
	"connection": {"status": "connected", "scopes": [{"type": "update_card"}]},
	"lifecycle": {"status": "authenticated"},
	"last_user_action": {"attempted_at": "2026-01-15T18:04:05.123456Z", "status": "success"}
}`

const disconnectedAccount = `{
	"merchant": {"id": 2, "name": "Walmart", "logo": "http://127.0.0.1:8080/merchants/2/logo.svg"},
	"connection": {"status": "disconnected", "scopes": []},
	"lifecycle": {"status": null},
	"last_user_action": {"attempted_at": null, "status": null}
}`

func TestAccounts(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	for _, tc := range []struct {
		name string
		body string
		want []string // substrings of the error; none when valid
	}{
		{"list", "[" + account + "," + disconnectedAccount + "]", nil},
		{"empty list", "[]", nil},
		{"one account (merchant_id given)", account, nil},
		{"missing connection", `[{
			"merchant": {"id": 1, "name": "Amazon", "logo": "http://127.0.0.1:8080/merchants/1/logo.svg"},
			"lifecycle": {"status": null},
			"last_user_action": {"attempted_at": null, "status": null}}]`,
			[]string{"GET /accounts/get 200", "/0", "connection"}},
		{"extra field", "[" + strings.Replace(account, `"lifecycle"`, `"linked_at": "2026-01-15T18:04:05Z", "lifecycle"`, 1) + "]",
			[]string{"GET /accounts/get 200", "/0", "linked_at"}},
		{"wrong connection status", "[" + strings.Replace(account, `"connected"`, `"active"`, 1) + "]",
			[]string{"GET /accounts/get 200", "/0/connection/status", "connected"}},
		{"wrong lifecycle status", strings.Replace(account, `"authenticated"`, `"enrolled"`, 1),
			[]string{"GET /accounts/get 200", "/lifecycle/status"}},
		{"timestamp that is not one", strings.Replace(account, `"2026-01-15T18:04:05.123456Z"`, `"yesterday"`, 1),
			[]string{"GET /accounts/get 200", "/last_user_action/attempted_at"}},
		{"merchant id as a string", strings.Replace(account, `"id": 1`, `"id": "1"`, 1),
			[]string{"GET /accounts/get 200", "/merchant/id"}},
		{"not JSON", "[{", []string{"GET /accounts/get 200", "cannot be decoded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateResponse("GET", "/accounts/get", 200, jsonHeader(), []byte(tc.body))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestUndocumented(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	notFound := []byte(`{"error_type":"INVALID_REQUEST","error_code":"NOT_FOUND","error_message":"No route matches GET /nope.","request_id":"req_4f1c2a9be07d5a3c81e6f20b"}`)
	for _, tc := range []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         string // substring of the error; "" when valid
	}{
		{"undocumented path", "GET", "/not-a-path", 200, jsonHeader(), `{"transactions":[]}`, "GET /not-a-path 200: GET Path '/not-a-path' not found"},
		{"undocumented method", "POST", "/healthz", 200, jsonHeader(), `{"status":"ok"}`, "The POST method for that path does not exist"},
		{"success status that is not documented", "GET", "/healthz", 201, jsonHeader(), `{"status":"ok"}`, "GET /healthz 201"},
		{"template matches one segment only", "GET", "/merchants/1/2/logo.svg", 200, http.Header{"Content-Type": {"image/svg+xml"}}, "<svg/>", "not found"},
		{"router 404 on an undocumented path", "GET", "/nope", 404, jsonHeader(), string(notFound), ""},
		{"router 404 with a bad body", "GET", "/nope", 404, jsonHeader(), `{"error":"not found"}`, "GET /nope 404"},
		{"router 404 on a path that is not a valid URL", "GET", "/nope/a b%zz", 404, jsonHeader(), string(notFound), ""},
		{"router 404 on a path of another environment", "GET", "/development/accounts/link", 404, jsonHeader(), string(notFound), ""},
		{"router 405 on a documented path", "DELETE", "/session/create", 405, withHeader(jsonHeader(), "Allow", "POST"),
			`{"error_type":"INVALID_REQUEST","error_code":"METHOD_NOT_ALLOWED","error_message":"Method DELETE is not allowed on /session/create; allowed: POST.","request_id":"req_4f1c2a9be07d5a3c81e6f20b"}`, ""},
		{"router 405 without Allow", "DELETE", "/session/create", 405, jsonHeader(),
			`{"error_type":"INVALID_REQUEST","error_code":"METHOD_NOT_ALLOWED","error_message":"Method DELETE is not allowed.","request_id":"req_4f1c2a9be07d5a3c81e6f20b"}`, "Required header 'Allow' was not found"},
		{"HEAD falls back to GET", "HEAD", "/healthz", 200, jsonHeader(), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateResponse(tc.method, tc.path, tc.status, tc.header, []byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestUndocumentedStatusWithoutDefault(t *testing.T) {
	t.Parallel()
	v, err := apitest.NewValidator([]byte(`openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200":
          description: ok
        4XX:
          description: a client error
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateResponse("GET", "/a", 200, http.Header{}, nil); err != nil {
		t.Errorf("200: %v", err)
	}
	if err := v.ValidateResponse("GET", "/a", 418, http.Header{}, nil); err != nil {
		t.Errorf("418 against 4XX: %v", err)
	}
	err = v.ValidateResponse("GET", "/a", 500, http.Header{}, nil)
	if err == nil || !strings.Contains(err.Error(), "GET /a 500: GET operation request response code '500' does not exist") {
		t.Errorf("500: %v", err)
	}
	err = v.ValidateResponse("GET", "/a", 200, http.Header{}, []byte("surprise"))
	if err == nil || !strings.Contains(err.Error(), "documents no body") {
		t.Errorf("undocumented body: %v", err)
	}
}

func withHeader(h http.Header, key, value string) http.Header {
	h.Set(key, value)
	return h
}

func errorBody(typ, code, message, requestID string) string {
	return `{"error_type":"` + typ + `","error_code":"` + code + `","error_message":"` + message + `","request_id":"` + requestID + `"}`
}

func TestErrors(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	const id = "req_4f1c2a9be07d5a3c81e6f20b"
	userNotFound := errorBody("USER_ERROR", "USER_NOT_FOUND", "No user with this external_user_id was found.", id)
	for _, tc := range []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         string // substring of the error; "" when valid
	}{
		{"user not found", "GET", "/accounts/get", 404, jsonHeader(), userNotFound, ""},
		{"caller's request id", "GET", "/accounts/get", 404, withHeader(jsonHeader(), "X-Request-Id", "trace-0123456789"),
			errorBody("USER_ERROR", "USER_NOT_FOUND", "No user with this external_user_id was found.", "trace-0123456789"), ""},
		{"JSON with charset", "GET", "/accounts/get", 404, withHeader(jsonHeader(), "Content-Type", "application/json; charset=utf-8"), userNotFound, ""},
		{"missing request_id", "GET", "/accounts/get", 404, jsonHeader(),
			`{"error_type":"USER_ERROR","error_code":"USER_NOT_FOUND","error_message":"No user."}`, "request_id"},
		{"unknown error code", "GET", "/accounts/get", 404, jsonHeader(), errorBody("USER_ERROR", "NO_SUCH_USER", "No user.", id), "/error_code"},
		{"undocumented status falls to default", "GET", "/accounts/get", 409, jsonHeader(),
			errorBody("INVALID_REQUEST", "INVALID_FIELD", "Conflict.", id), ""},
		{"default still needs the error body", "GET", "/accounts/get", 409, jsonHeader(), `{"message":"Success"}`, "GET /accounts/get 409"},
		{"missing X-Request-Id", "GET", "/accounts/get", 404, http.Header{"Content-Type": {"application/json"}, "Knot-Version": {"2.0"}},
			userNotFound, "Required header 'X-Request-Id' was not found"},
		{"wrong Knot-Version", "GET", "/accounts/get", 404, withHeader(jsonHeader(), "Knot-Version", "1.0"), userNotFound, "header 'knot-version' failed to validate"},
		{"wrong content type", "GET", "/accounts/get", 404, withHeader(jsonHeader(), "Content-Type", "text/plain"), userNotFound, "content type 'text/plain' of the GET response received has not been defined"},
		{"401 with its challenge", "GET", "/jwe/key", 401, withHeader(jsonHeader(), "WWW-Authenticate", `Basic realm="hitch", charset="UTF-8"`),
			errorBody("INVALID_INPUT", "INVALID_API_KEYS", "Invalid client_id or secret provided.", id), ""},
		{"401 without its challenge", "GET", "/jwe/key", 401, jsonHeader(),
			errorBody("INVALID_INPUT", "INVALID_API_KEYS", "Invalid client_id or secret provided.", id), "Required header 'WWW-Authenticate' was not found"},
		{"429 with Retry-After", "GET", "/jwe/key", 429, withHeader(jsonHeader(), "Retry-After", "2"),
			errorBody("RATE_LIMIT_EXCEEDED", "RATE_LIMIT_EXCEEDED", "Too many requests.", id), ""},
		{"429 with a Retry-After that is not a number", "GET", "/jwe/key", 429, withHeader(jsonHeader(), "Retry-After", "soon"),
			errorBody("RATE_LIMIT_EXCEEDED", "RATE_LIMIT_EXCEEDED", "Too many requests.", id), "header 'retry-after' failed to validate"},
		{"readyz 503", "GET", "/readyz", 503, jsonHeader(), errorBody("API_ERROR", "SERVICE_UNAVAILABLE", "The database is not reachable.", id), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateResponse(tc.method, tc.path, tc.status, tc.header, []byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestOtherResponses(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	for _, tc := range []struct {
		name         string
		method, path string
		header       http.Header
		body         string
		want         string // substring of the error; "" when valid
	}{
		{"session", "POST", "/session/create", jsonHeader(),
			`{"session":"sess_q7d3Jm0xW2Zk9vTYl8b1cRHfN4sEoPuA6gKiVnXe5yC","session_id":"0b8f8f4e-3c1d-4b7a-9a55-2f6f0e4c9d21","expires_at":"2026-01-15T18:34:05.123456Z"}`, ""},
		{"session id that is not a UUID", "POST", "/session/extend", jsonHeader(),
			`{"session":"sess_q7d3Jm0xW2Zk9vTYl8b1cRHfN4sEoPuA6gKiVnXe5yC","session_id":"42","expires_at":"2026-01-15T18:34:05Z"}`, "/session_id"},
		{"session value without its prefix", "POST", "/session/create", jsonHeader(),
			`{"session":"q7d3Jm0xW2Zk9vTYl8b1cRHfN4sEoPuA6gKiVnXe5yCabcde","session_id":"0b8f8f4e-3c1d-4b7a-9a55-2f6f0e4c9d21","expires_at":"2026-01-15T18:34:05Z"}`, "/session"},
		{"merchants", "POST", "/merchant/list", jsonHeader(),
			`[{"id":1,"name":"Amazon","category":"shopping","logo":"http://127.0.0.1:8080/merchants/1/logo.svg"}]`, ""},
		{"merchant without category", "POST", "/merchant/list", jsonHeader(),
			`[{"id":1,"name":"Amazon","logo":"http://127.0.0.1:8080/merchants/1/logo.svg"}]`, "category"},
		{"message", "POST", "/accounts/unlink", jsonHeader(), `{"message":"Success"}`, ""},
		{"health", "GET", "/healthz", jsonHeader(), `{"status":"ok"}`, ""},
		{"key", "GET", "/jwe/key", jsonHeader(),
			`{"alg":"RSA-OAEP-256","e":"AQAB","key_ops":["encrypt"],"kid":"H4nmLVmP7wNvrn5lPi0JR_mh4T0HMvf_KmxMJwFn7WI","kty":"RSA","n":"tdCoaJscBS2Td32370OPqpj3pfryaDm","use":"enc"}`, ""},
		{"key for signing", "GET", "/jwe/key", jsonHeader(),
			`{"alg":"RSA-OAEP-256","e":"AQAB","key_ops":["verify"],"kid":"k","kty":"RSA","n":"tdCo","use":"enc"}`, "/key_ops"},
		{"logo", "GET", "/merchants/1/logo.svg",
			withHeader(withHeader(withHeader(jsonHeader(), "Content-Type", "image/svg+xml"), "Cache-Control", "public, max-age=86400"), "Content-Security-Policy", "default-src 'none'"),
			`<svg xmlns="http://www.w3.org/2000/svg"/>`, ""},
		{"logo as JSON", "GET", "/merchants/1/logo.svg",
			withHeader(withHeader(jsonHeader(), "Cache-Control", "public, max-age=86400"), "Content-Security-Policy", "default-src 'none'"),
			`{}`, "content type 'application/json' of the GET response received has not been defined"},
		{"document", "GET", "/openapi.yaml", withHeader(jsonHeader(), "Content-Type", "application/yaml"), "openapi: 3.1.0\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateResponse(tc.method, tc.path, 200, tc.header, []byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestTransport(t *testing.T) {
	t.Parallel()
	const good = `{"status":"ok"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_4f1c2a9be07d5a3c81e6f20b")
		w.Header().Set("Knot-Version", "2.0")
		if r.URL.Path == "/readyz" {
			_, _ = io.WriteString(w, `{"status":"ok","db":"up"}`)
			return
		}
		_, _ = io.WriteString(w, good)
	}))
	defer srv.Close()

	rec := &recorder{TB: t}
	client := &http.Client{Transport: apitest.Load(t).Transport(rec, nil)}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(srv.URL + path + "?ignored=query")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	if body := get("/healthz"); body != good || len(rec.errors) != 0 {
		t.Fatalf("valid response: body %q, errors %q", body, rec.errors)
	}
	if body := get("/readyz"); body != `{"status":"ok","db":"up"}` {
		t.Fatalf("the body was not restored: %q", body)
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "GET /readyz 200") || !strings.Contains(rec.errors[0], "db") {
		t.Fatalf("invalid response: errors reported %q, want one about GET /readyz and db", rec.errors)
	}
}

// TestRequestSchemas checks that the request schemas accept what the
// handlers accept and refuse what they refuse.
func TestRequestSchemas(t *testing.T) {
	t.Parallel()
	v := apitest.Load(t)
	metadata := func(n, valueLength int) string {
		pairs := make([]string, n)
		for i := range pairs {
			pairs[i] = fmt.Sprintf(`"k%d":"%s"`, i, strings.Repeat("x", valueLength))
		}
		return "{" + strings.Join(pairs, ",") + "}"
	}
	for _, tc := range []struct {
		name, path, body string
		ok               bool
	}{
		{"card switcher session", "/session/create", `{"type":"card_switcher","external_user_id":"u","card_id":"c","merchant_id":1,"metadata":` + metadata(10, 500) + `}`, true},
		{"link session", "/session/create", `{"type":"link","external_user_id":"u"}`, true},
		{"link session with a null card_id", "/session/create", `{"type":"link","external_user_id":"u","card_id":null}`, true},
		{"vault session with a card", "/session/create", `{"type":"vault","external_user_id":"u","card_id":"c"}`, true},
		{"vault session without a card", "/session/create", `{"type":"vault","external_user_id":"u"}`, true},
		{"detection by e-mail and phone", "/session/create", `{"type":"transaction_link","external_user_id":"u","email":"ada@example.com","phone_number":"+14155550123","processor_token":"tok"}`, true},
		{"no type", "/session/create", `{"external_user_id":"u"}`, false},
		{"unknown type", "/session/create", `{"type":"bank","external_user_id":"u"}`, false},
		{"blank user", "/session/create", `{"type":"link","external_user_id":"  "}`, false},
		{"long user", "/session/create", `{"type":"link","external_user_id":"` + strings.Repeat("u", 256) + `"}`, false},
		{"card switcher without card", "/session/create", `{"type":"card_switcher","external_user_id":"u"}`, false},
		{"card switcher with a blank card", "/session/create", `{"type":"card_switcher","external_user_id":"u","card_id":" "}`, false},
		{"card on a link session", "/session/create", `{"type":"link","external_user_id":"u","card_id":"c"}`, false},
		{"merchant 0", "/session/create", `{"type":"link","external_user_id":"u","merchant_id":0}`, false},
		{"phone not E.164", "/session/create", `{"type":"link","external_user_id":"u","phone_number":"4155550123"}`, false},
		{"bad e-mail", "/session/create", `{"type":"link","external_user_id":"u","email":"ada"}`, false},
		{"empty processor token", "/session/create", `{"type":"link","external_user_id":"u","processor_token":""}`, false},
		{"11 metadata keys", "/session/create", `{"type":"link","external_user_id":"u","metadata":` + metadata(11, 1) + `}`, false},
		{"long metadata value", "/session/create", `{"type":"link","external_user_id":"u","metadata":` + metadata(1, 501) + `}`, false},
		{"unknown field", "/session/create", `{"type":"link","external_user_id":"u","bad":1}`, false},

		{"extend", "/session/extend", `{"session_id":"sess_q7d3Jm0xW2Zk9vTYl8b1cRHfN4sEoPuA6gKiVnXe5yC"}`, true},
		{"extend without session", "/session/extend", `{}`, false},

		{"merchants", "/merchant/list", `{"type":"link","platform":"ios","search":"amzn"}`, true},
		{"merchants without type", "/merchant/list", `{"search":"amzn"}`, false},
		{"merchants on another platform", "/merchant/list", `{"type":"link","platform":"windows"}`, false},
		{"long search", "/merchant/list", `{"type":"link","search":"` + strings.Repeat("a", 101) + `"}`, false},

		{"unlink", "/accounts/unlink", `{"external_user_id":"u","merchant_id":1}`, true},
		{"unlink without merchant", "/accounts/unlink", `{"external_user_id":"u"}`, false},
		{"unlink with merchant as a string", "/accounts/unlink", `{"external_user_id":"u","merchant_id":"1"}`, false},
		{"disconnect", "/development/accounts/disconnect", `{"external_user_id":"u","merchant_id":1}`, true},

		{"link card switcher", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_switcher":true,"card_id":"c","metadata":{"a":"b"}}`, true},
		{"link transactions", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"transactions":{"new":true,"updated":true}}`, true},
		{"link transactions, card switcher false", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_switcher":false,"transactions":{"new":false}}`, true},
		{"link both", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_switcher":true,"card_id":"c","transactions":{"new":true}}`, false},
		{"link neither", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1}`, false},
		{"link card switcher false alone", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_switcher":false}`, false},
		{"link card switcher without card", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_switcher":true}`, false},
		{"link transactions with a card", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"card_id":"c","transactions":{"new":true}}`, false},
		{"link transactions without new", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"transactions":{"updated":false}}`, false},
		{"link updated without new", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"transactions":{"new":false,"updated":true}}`, false},
		{"link unknown transactions field", "/development/accounts/link", `{"external_user_id":"u","merchant_id":1,"transactions":{"new":true,"old":true}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateRequest("POST", tc.path, http.Header{"Content-Type": {"application/json"}}, []byte(tc.body))
			switch {
			case tc.ok && err != nil:
				t.Fatal(err)
			case !tc.ok && err == nil:
				t.Fatal("accepted")
			case !tc.ok && !strings.Contains(err.Error(), "POST "+tc.path+" request"):
				t.Fatalf("error does not name the operation: %v", err)
			}
		})
	}
	if err := v.ValidateRequest("POST", "/session/create", http.Header{"Content-Type": {"text/plain"}}, []byte(`{}`)); err == nil {
		t.Error("text/plain request body accepted")
	}
	if err := v.ValidateRequest("POST", "/session/create", http.Header{}, nil); err == nil {
		t.Error("missing required request body accepted")
	}
	if err := v.ValidateRequest("GET", "/jwe/key", http.Header{}, []byte(`{}`)); err == nil {
		t.Error("body on GET /jwe/key accepted")
	}
}
