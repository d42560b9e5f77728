// Package npmtest installs npm packages for tests that check Hitch against
// an implementation written by someone else, run under Node.js, and finds
// the programs such tests run (node, npm, Chromium).
package npmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// installMu serialises installs within one test binary; the rename in
// install guards against other test binaries.
var installMu sync.Mutex

// Install writes files (a package.json naming exact dependency versions,
// perhaps a package-lock.json, and the scripts to run) into a directory
// shared by test runs and installs the packages there, once per content:
// `npm ci` when a lock file is given, `npm install` otherwise. It returns
// node's path and the directory. Without node or npm on PATH the test is
// skipped, unless CI=true, where it fails (RequireTool).
func Install(t testing.TB, name string, files map[string][]byte) (node, dir string) {
	t.Helper()
	node = RequireTool(t, "node", "Node.js, to run the checks against npm "+name)
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	slices.Sort(names)
	sum := sha256.New()
	for _, f := range names {
		fmt.Fprintf(sum, "%s\x00%d\x00", f, len(files[f]))
		sum.Write(files[f])
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "hitch-test")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatalf("npmtest: %v", err)
	}
	// Changing a file changes the directory: a stale install is never run.
	dir = filepath.Join(parent, name+"-"+hex.EncodeToString(sum.Sum(nil))[:12])
	installMu.Lock()
	defer installMu.Unlock()
	if installed(dir) {
		return node, dir
	}
	if err := install(RequireTool(t, "npm", "Node.js, to run the checks against npm "+name), dir, files); err != nil {
		t.Fatalf("npmtest: install %s: %v", name, err)
	}
	return node, dir
}

// installed reports whether dir holds a finished install. install only ever
// renames a complete directory into place, so its presence is enough.
func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules"))
	return err == nil
}

// install builds the packages in a temporary sibling of dir and renames it
// into place. If another process got there first, the rename fails, and
// its install is used.
func install(npm, dir string, files map[string][]byte) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing left after a successful rename
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return err
		}
	}
	verb := "install"
	if _, ok := files["package-lock.json"]; ok {
		verb = "ci"
	}
	cmd := exec.Command(npm, verb, "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm %s: %w\n%s", verb, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if installed(dir) {
			return nil // another process renamed its install into place first
		}
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// RequireTool returns the path of program, a name looked up on PATH or a
// path, for a test that runs it; install says what provides it. Without
// it the test is skipped, saying so, unless CI=true, where it fails: the
// check must not silently disappear there.
func RequireTool(t testing.TB, program, install string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s is missing (%v): install %s", program, err, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; required when CI=true")
	}
	t.Skip(msg)
	return ""
}
