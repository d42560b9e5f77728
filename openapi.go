// Package hitch holds what the whole project shares at its root: the
// OpenAPI document that is the API's contract, and the docs.
package hitch

import "embed"

// OpenAPI is openapi.yaml, the hand-written contract of the HTTP API. It is
// served at /openapi.yaml and the API tests validate every response against
// it.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Docs holds docs/*.md, served as text at /docs/{file} and listed on the
// landing page.
//
//go:embed docs/*.md
var Docs embed.FS
