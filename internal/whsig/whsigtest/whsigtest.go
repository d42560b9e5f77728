// Package whsigtest checks Hitch's webhook signatures with an implementation
// written by someone else: the npm package standardwebhooks, the reference
// library of the Standard Webhooks specification, run under Node.js.
package whsigtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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

// installMu serialises installs within one test binary; the rename in
// install guards against other test binaries.
var installMu sync.Mutex

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
	node := lookPath(t, "node")
	dir := installDir(t)
	installMu.Lock()
	defer installMu.Unlock()
	if !installed(dir) {
		if err := install(lookPath(t, "npm"), dir); err != nil {
			t.Fatalf("whsigtest: install standardwebhooks@%s: %v", NPMVersion, err)
		}
	}
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

// lookPath finds a program or skips the test, failing it instead under CI
// so that the check cannot silently disappear there.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("whsigtest: %s not on PATH; install Node.js to check webhook signatures against npm standardwebhooks@%s", name, NPMVersion)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (required when CI=true)")
	}
	t.Skip(msg)
	return ""
}

// installDir is <user cache>/hitch-test/standardwebhooks-<version>-<script
// hash>, so that changing the script does not run a stale copy.
func installDir(t testing.TB) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "hitch-test")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatalf("whsigtest: %v", err)
	}
	sum := sha256.Sum256([]byte(verifyScript))
	return filepath.Join(parent, fmt.Sprintf("standardwebhooks-%s-%x", NPMVersion, sum[:4]))
}

// installed reports whether dir holds a finished install. install only ever
// renames a complete directory into place, so its presence is enough.
func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "verify.js"))
	return err == nil
}

// install builds the package and script in a temporary sibling of dir and
// renames it into place. If another process got there first, the rename
// fails, and its install is used.
func install(npm, dir string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing left after a successful rename

	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--save-exact",
		"--prefix", tmp, "standardwebhooks@"+NPMVersion)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm install: %w\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, "verify.js"), []byte(verifyScript), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if installed(dir) {
			return nil // another process renamed its install into place first
		}
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}
