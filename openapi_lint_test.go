package hitch_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hitchdev/hitch/internal/npmtest"
)

// openapi.yaml lints clean under Redocly CLI (a maintained linter written
// by someone else), with the rules of redocly.yaml and the findings that
// .redocly.lint-ignore.yaml excuses one by one: no error and no warning.
// Without node, npm and npx the test is skipped, unless CI=true.
func TestOpenAPILintsClean(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "redocly", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(files["package.json"], &pkg); err != nil || pkg.Dependencies["@redocly/cli"] == "" {
		t.Fatalf("testdata/redocly/package.json must pin @redocly/cli (%v)", err)
	}
	_, dir := npmtest.Install(t, "redocly-cli-"+pkg.Dependencies["@redocly/cli"], files)
	npx := npmtest.RequireTool(t, "npx", "Node.js, to run @redocly/cli")
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	// --no: run the installed package, never download one.
	cmd := exec.Command(npx, "--no", "redocly", "lint", "--format=json",
		"--config", filepath.Join(root, "redocly.yaml"), filepath.Join(root, "openapi.yaml"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // it exits 1 when there are errors; the report says which
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
			Ignored  int `json:"ignored"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("redocly lint: %v (%v)\nstdout: %s\nstderr: %s", err, runErr, stdout.Bytes(), stderr.Bytes())
	}
	for _, p := range report.Problems {
		at := ""
		if len(p.Location) > 0 {
			at = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, at, p.Message)
	}
	if report.Totals.Errors+report.Totals.Warnings > 0 || runErr != nil {
		t.Fatalf("redocly lint: %d errors, %d warnings (%v); fix them, or turn a rule off in redocly.yaml or excuse a finding "+
			"in .redocly.lint-ignore.yaml, with the reason", report.Totals.Errors, report.Totals.Warnings, runErr)
	}
	ignore, err := os.ReadFile(".redocly.lint-ignore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(?m)^\s*- '#`).FindAll(ignore, -1)); report.Totals.Ignored != n {
		t.Errorf("%d findings excused, but .redocly.lint-ignore.yaml lists %d: remove the entries that excuse nothing", report.Totals.Ignored, n)
	}
}
