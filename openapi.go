// Package hitch holds what the whole project shares at its root: the
// OpenAPI document that is the API's contract.
package hitch

import _ "embed"

// OpenAPI is openapi.yaml, the hand-written contract of the HTTP API. It is
// served at /openapi.yaml and the API tests validate every response against
// it.
//
//go:embed openapi.yaml
var OpenAPI []byte
