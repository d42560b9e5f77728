// Package whsigtest checks Hitch's webhook signatures with an implementation
// written by someone else: the npm package standardwebhooks, the reference
// library of the Standard Webhooks specification, run under Node.js.
package whsigtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/npmtest"
)

// NPMVersion is the exact standardwebhooks version installed and run.
const NPMVersion = "1.1.1"

// verifyScript reads {secret, headers, body (base64)} as JSON on stdin and
// exits 0 if standardwebhooks accepts the delivery, 1 with its message if it
// rejects it, 2 on any other failure. jsonParse is off so that only the
// signature is judged, not whether the body is JSON.
const verifyScript = `"use strict";
const { Webhook, WebhookVerificationError } = require("standardwebhooks");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  try {
    const { secret, headers, body } = JSON.parse(input);
    new Webhook(secret).verify(Buffer.from(body, "base64"), headers, { jsonParse: false });
  } catch (err) {
    process.stderr.write(String(err && err.message ? err.message : err));
    process.exit(err instanceof WebhookVerificationError ? 1 : 2);
  }
});
`

// NodeVerifier returns a function that verifies a delivery with the npm
// package standardwebhooks (version NPMVersion) in a node process and
// returns its error message when it rejects. The package is installed once
// into a cache directory shared by test runs. Without node or npm on PATH the
// test is skipped, unless CI=true, where it fails.
//
// The body is handed to the library as a Buffer, which it decodes as UTF-8
// before signing: use bodies that are valid UTF-8 (JSON is).
func NodeVerifier(t testing.TB) func(headers http.Header, body []byte, secret string) error {
	t.Helper()
	node, dir := npmtest.Install(t, "standardwebhooks-"+NPMVersion, map[string][]byte{
		"package.json": []byte(`{"private": true, "dependencies": {"standardwebhooks": "` + NPMVersion + `"}}`),
		"verify.js":    []byte(verifyScript),
	})
	script := filepath.Join(dir, "verify.js")
	return func(headers http.Header, body []byte, secret string) error {
		flat := make(map[string]string, len(headers))
		for name := range headers {
			flat[strings.ToLower(name)] = headers.Get(name)
		}
		input, err := json.Marshal(map[string]any{
			"secret":  secret,
			"headers": flat,
			"body":    base64.StdEncoding.EncodeToString(body),
		})
		if err != nil {
			return fmt.Errorf("whsigtest: %w", err)
		}
		cmd := exec.Command(node, script)
		cmd.Stdin = bytes.NewReader(input) // not argv: keeps the secret out of ps
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("standardwebhooks: %s (%v)", strings.TrimSpace(stderr.String()), err)
		}
		return nil
	}
}
