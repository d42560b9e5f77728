package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/npmtest"
)

// TestREADMEExamples runs the README's shell examples as a newcomer does,
// so that the README cannot drift from what Hitch does: a fresh
// `hitch serve` in development, its printed credentials in CLIENT_ID and
// SECRET, and every sh block between "readme-test: begin" and
// "readme-test: end" markers, in order, command by command in one bash.
// Each command must exit 0 and print what the README shows under it (or
// nothing when it shows nothing). In what the README shows, "…" stands
// for anything, and a value that later commands use is named: "we_…" (any
// lowercase prefix with an underscore) or a capitalised name ending in
// _ID, such as EVENT_ID, takes the value printed there, and the same name
// in a later command is replaced by it. The README's addresses are the
// test's: 127.0.0.1:8080 is the hitch under test, and 127.0.0.1:9000 and
// :9001 its webhook receiver. A command that only reads is run again
// until its output matches, for a while, as a newcomer would look again:
// deliveries, card outcomes and detections follow their cause within
// seconds. Then the receiver must have received, signed with the
// endpoint's secret, every event the examples raise.
func TestREADMEExamples(t *testing.T) {
	bash := npmtest.RequireTool(t, "bash", "bash, to run the README's examples")
	npmtest.RequireTool(t, "curl", "curl, to run the README's examples")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readmeSteps(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 20 {
		t.Fatalf("%d README examples between the markers, want the whole API by example", len(steps))
	}
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		hooks := &signedHooks{}
		receiver := httptest.NewServer(hooks)
		t.Cleanup(receiver.Close)
		srv := startServe(t, env)
		addr := waitFor(t, srv.logs, regexp.MustCompile(`msg="hitch listening" addr=(\S+)`))
		base := "http://" + addr
		// The start names the demo and the dashboard at the port it
		// listens on, not the configured :0.
		waitFor(t, srv.logs, regexp.MustCompile(`msg="open the demo and the dashboard" demo=(`+
			regexp.QuoteMeta(base)+`/demo) dashboard=`+regexp.QuoteMeta(base)+`/dashboard\n`))
		clientID := waitFor(t, srv.logs, regexp.MustCompile(`client_id: (\S+)`))
		secret := waitFor(t, srv.logs, regexp.MustCompile(`secret:\s+(hsk_\S+)`))
		if !strings.Contains(srv.logs.String(), "Dashboard: "+base+"/dashboard") {
			t.Errorf("the first start does not name the dashboard at %s: %s", base, srv.logs)
		}

		sh := startShell(t, bash, "CLIENT_ID="+clientID, "SECRET="+secret)
		// The README's blocks before its export line use $HITCH and $AUTH
		// as set there.
		if out, code := sh.run(t, `export HITCH=`+base+` AUTH="$CLIENT_ID:$SECRET"`); code != 0 || out != "" {
			t.Fatalf("export: %d %q", code, out)
		}
		ex := &readmeRun{addresses: strings.NewReplacer("http://127.0.0.1:8080", base,
			"127.0.0.1:9000", strings.TrimPrefix(receiver.URL, "http://"),
			"127.0.0.1:9001", strings.TrimPrefix(receiver.URL, "http://")),
			values: map[string]string{}}
		for _, st := range steps {
			if !ex.step(t, sh, st) {
				break
			}
		}
		if t.Failed() {
			t.Logf("hitch's logs:\n%s", srv.logs)
			return
		}

		whsec := ex.values["whsec_…"]
		for _, typ := range []string{"TEST", "AUTHENTICATED", "NEW_SUBSCRIPTIONS_AVAILABLE", "CARD_UPDATED",
			"ACCOUNT_LOGIN_REQUIRED", "NEW_TRANSACTIONS_AVAILABLE", "UPDATED_TRANSACTIONS_AVAILABLE",
			"NEW_DETECTED_ACCOUNTS_AVAILABLE"} {
			hooks.wait(t, typ, whsec)
		}
		srv.stop(t)
	})
}

// readmeStep is one command of the README's examples.
type readmeStep struct {
	line    int    // of the command's first line in README.md
	command string // continuation lines joined by newlines
	want    string // the output shown under it, without "# ", "" for none
}

// readmeSteps reads the commands of the sh blocks between the markers: a
// command's lines end with a backslash but the last; the "# " lines right
// under it are its output; a comment after a blank line, or first in a
// block, is prose.
func readmeSteps(readme string) ([]readmeStep, error) {
	var steps []readmeStep
	var inRegion, inBlock, continued bool
	var cur *readmeStep
	for i, line := range strings.Split(readme, "\n") {
		n := i + 1
		switch {
		case strings.HasPrefix(line, "<!-- readme-test: begin"):
			if inRegion {
				return nil, fmt.Errorf("README.md:%d: a begin marker inside a region", n)
			}
			inRegion = true
		case strings.Contains(line, "readme-test: end"):
			if !inRegion || inBlock {
				return nil, fmt.Errorf("README.md:%d: an end marker outside a region or inside a block", n)
			}
			inRegion = false
		case !inRegion:
		case line == "```sh":
			inBlock, cur = true, nil
		case strings.HasPrefix(line, "```"):
			if inBlock && continued {
				return nil, fmt.Errorf("README.md:%d: the block ends in a continued command", n)
			}
			inBlock = false
		case !inBlock:
		case continued:
			cur.command += "\n" + line
			continued = strings.HasSuffix(line, `\`)
		case strings.TrimSpace(line) == "":
			cur = nil
		case strings.HasPrefix(line, "#"):
			if cur != nil {
				shown := strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ")
				if cur.want != "" {
					shown = "\n" + shown
				}
				cur.want += shown
			}
		default:
			steps = append(steps, readmeStep{line: n, command: line})
			cur = &steps[len(steps)-1]
			continued = strings.HasSuffix(line, `\`)
		}
	}
	if inRegion {
		return nil, fmt.Errorf("README.md: a readme-test region is not ended")
	}
	return steps, nil
}

// readmeRun is the state of one run through the README: its addresses and
// the named values printed so far.
type readmeRun struct {
	addresses *strings.Replacer
	values    map[string]string
}

var (
	// shownName is a named value in what the README shows: "we_…" or
	// EVENT_ID; or "…", anything.
	shownName = regexp.MustCompile(`[a-z]+_…|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_ID\b|…`)
	// unnamed is a name left in a command: a placeholder nothing printed
	// (a shell variable has a $ before it, and an assignment = after it).
	unnamed = regexp.MustCompile(`(?:^|[^$\w])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_ID)\b(?:[^=]|$)|…`)
	// changes are the curl options of a command that may change
	// something; readPaths the paths that only read though posted to.
	changes   = regexp.MustCompile(`\s(-d|-X)\s`)
	readPaths = regexp.MustCompile(`/(detected-accounts/(search|list)|transactions/sync|merchant/list)\b`)
)

// step runs one command and checks it, reporting false when the run
// cannot go on.
func (ex *readmeRun) step(t *testing.T, sh *shell, st readmeStep) bool {
	t.Helper()
	command := ex.addresses.Replace(st.command)
	for name, value := range ex.values {
		if strings.HasSuffix(name, "…") {
			command = strings.ReplaceAll(command, name, value)
		} else {
			command = regexp.MustCompile(`(^|[^$\w])`+name+`\b`).ReplaceAllString(command, "${1}"+value)
		}
	}
	if m := unnamed.FindString(command); m != "" {
		t.Errorf("README.md:%d: %q is left in the command, named by no output before it:\n%s", st.line, m, st.command)
		return false
	}
	re, names := ex.pattern(st.want)
	readOnly := strings.HasPrefix(command, "curl ") && (!changes.MatchString(command) || readPaths.MatchString(command))
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, code := sh.run(t, command)
		m := re.FindStringSubmatch(out)
		if code == 0 && m != nil && ex.consistent(names, m) {
			for i, name := range names {
				ex.values[name] = m[i+1]
			}
			return true
		}
		if readOnly && code == 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond) // as a person looks again
			continue
		}
		want := st.want
		if want == "" {
			want = "(nothing)"
		}
		t.Errorf("README.md:%d: %s\nexited %d and printed\n  %s\nwant\n  %s\nstderr: %s", st.line, command, code, out,
			ex.addresses.Replace(want), sh.stderr())
		return false
	}
}

// pattern is the regular expression of an output as the README shows it,
// and the names it captures, in order.
func (ex *readmeRun) pattern(shown string) (*regexp.Regexp, []string) {
	shown = ex.addresses.Replace(shown)
	var b strings.Builder
	var names []string
	last := 0
	for _, loc := range shownName.FindAllStringIndex(shown, -1) {
		b.WriteString(regexp.QuoteMeta(shown[last:loc[0]]))
		last = loc[1]
		name := shown[loc[0]:loc[1]]
		switch value, known := ex.values[name]; {
		case name == "…":
			b.WriteString(`.*?`)
		case known:
			b.WriteString(regexp.QuoteMeta(value))
		case strings.HasSuffix(name, "…"):
			b.WriteString(`(` + regexp.QuoteMeta(strings.TrimSuffix(name, "…")) + `[^"\s,}\]]+)`)
			names = append(names, name)
		default:
			b.WriteString(`([^"\s,}\]]+)`)
			names = append(names, name)
		}
	}
	b.WriteString(regexp.QuoteMeta(shown[last:]))
	return regexp.MustCompile(`(?s)^` + b.String() + `$`), names
}

// consistent reports whether a name captured twice in one output took the
// same value both times.
func (ex *readmeRun) consistent(names []string, m []string) bool {
	for i, name := range names {
		if j := slices.Index(names, name); j < i && m[j+1] != m[i+1] {
			return false
		}
	}
	return true
}

// shell is one bash that runs command after command, keeping its
// variables, as a terminal does.
type shell struct {
	stdin  io.Writer
	lines  chan string
	errOut *lockedBuffer
	n      int
}

func startShell(t *testing.T, bash string, env ...string) *shell {
	t.Helper()
	// curl's progress meters would fill standard error, which failures
	// show; its errors stay (standard output is the same either way).
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".curlrc"), []byte("silent\nshow-error\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--noprofile", "--norc")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C.UTF-8"}, env...)
	sh := &shell{lines: make(chan string, 64), errOut: &lockedBuffer{}}
	cmd.Stderr = sh.errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh.stdin = stdin
	go func() {
		defer close(sh.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Logf("bash: %v", err)
		}
	})
	return sh
}

// run runs command and returns what it printed, trimmed, and its exit
// status. A command gets a minute.
func (sh *shell) run(t *testing.T, command string) (string, int) {
	t.Helper()
	sh.n++
	marker := fmt.Sprintf("\x1ereadme-step-%d", sh.n)
	if _, err := fmt.Fprintf(sh.stdin, "%s\nprintf '\\n%s %%d\\n' $?\n", command, marker); err != nil {
		t.Fatalf("bash: %v", err)
	}
	var out strings.Builder
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				t.Fatalf("bash ended: %s", sh.stderr())
			}
			if rest, found := strings.CutPrefix(line, marker+" "); found {
				var code int
				fmt.Sscan(rest, &code)
				return strings.TrimSpace(out.String()), code
			}
			out.WriteString(line + "\n")
		case <-timeout:
			t.Fatalf("%s: no end after a minute; printed %q", command, out.String())
		}
	}
}

// stderr is the shell's standard error from its last lines, for failure
// messages: curl's progress meters and errors.
func (sh *shell) stderr() string {
	s := sh.errOut.String()
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

// signedHooks keeps the webhooks it receives, answering 200.
type signedHooks struct {
	mu    sync.Mutex
	hooks []signedHook
}

type signedHook struct {
	header http.Header
	body   []byte
}

func (h *signedHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.hooks = append(h.hooks, signedHook{r.Header.Clone(), body})
	h.mu.Unlock()
}

// wait waits up to a minute for a webhook of type typ signed with secret.
func (h *signedHooks) wait(t *testing.T, typ, secret string) {
	t.Helper()
	needle := []byte(`"event":"` + typ + `"`)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		hooks := slices.Clone(h.hooks)
		h.mu.Unlock()
		for _, hook := range hooks {
			if bytes.Contains(hook.body, needle) {
				if err := client.VerifyWebhook(hook.header, hook.body, secret, 5*time.Minute); err != nil {
					t.Errorf("the %s webhook's signature: %v", typ, err)
				}
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no %s webhook reached the README's endpoint", typ)
}
