package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
)

func TestMaskSecrets(t *testing.T) {
	t.Parallel()
	secrets := []string{"p@ss word", "4111", "41111111", ""}
	tests := []struct {
		in, want string
	}{
		{"no secret here", "no secret here"},
		{"login p@ss word failed", "login ••• failed"},
		{"url ?pw=p%40ss+word&x=1", "url ?pw=•••&x=1"},
		{"path /p@ss%20word/", "path /•••/"},
		{`json {"pw":"p@ss word"}`, `json {"pw":"•••"}`},
		{"card 41111111 and 4111", "card ••• and •••"},
	}
	for _, tt := range tests {
		if got := maskSecrets(tt.in, secrets); got != tt.want {
			t.Errorf("maskSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTransient(t *testing.T) {
	t.Parallel()
	base := errors.New("503")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"marked", Transient(base), true},
		{"wrapped", fmt.Errorf("step: %w", Transient(base)), true},
		{"step error", &StepError{transient: true}, true},
		{"wrapped step error", fmt.Errorf("job: %w", &StepError{}), false},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.err); got != tt.want {
			t.Errorf("%s: IsTransient = %v, want %v", tt.name, got, tt.want)
		}
	}
	if Transient(nil) != nil {
		t.Error("Transient(nil) is not nil")
	}
	if !errors.Is(Transient(base), base) {
		t.Error("Transient hides the error it marks from errors.Is")
	}
}

func TestStepErrorMatchesCauseWithoutUnwrapping(t *testing.T) {
	t.Parallel()
	cause := fmt.Errorf("typing s3cr3t: %w", context.DeadlineExceeded)
	e := &StepError{Label: "shop/login", Step: "login", Attempts: 1, msg: maskSecrets(cause.Error(), []string{"s3cr3t"}), cause: cause}
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Error("errors.Is does not reach the cause")
	}
	if errors.Unwrap(e) != nil {
		t.Error("StepError unwraps to an error whose text may hold a secret")
	}
	if got := e.Error(); strings.Contains(got, "s3cr3t") || !strings.Contains(got, `"login"`) {
		t.Errorf("Error() = %q", got)
	}
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	in := []*network.Cookie{
		{Name: "sid", Value: "v1", Domain: "shop.example", Path: "/", Expires: -1, Session: true, HTTPOnly: true, Secure: true, SameSite: network.CookieSameSiteLax},
		{Name: "pref", Value: "v2", Domain: ".shop.example", Path: "/a", Expires: 1.9e9},
	}
	b, err := encodeState(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d cookies, want 2", len(out))
	}
	host, dom := out[0], out[1]
	if host.URL != "https://shop.example/" || host.Domain != "" || host.Expires != 0 || !host.HTTPOnly || host.SameSite != network.CookieSameSiteLax {
		t.Errorf("host-only session cookie restored as %+v", host)
	}
	if dom.Domain != ".shop.example" || dom.URL != "" || dom.Expires != 1.9e9 || dom.Path != "/a" {
		t.Errorf("domain cookie restored as %+v", dom)
	}
}

func TestFileSafe(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"refshop/login": "refshop_login",
		"a b:c":         "a_b_c",
		"":              "_",
		"ok-1.2_x":      "ok-1.2_x",
	}
	for in, want := range tests {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewPoolWithoutChromium(t *testing.T) {
	t.Parallel()
	_, err := NewPool(t.Context(), Options{ExecPath: "/nonexistent/chromium"})
	if err == nil {
		t.Fatal("NewPool with a missing binary succeeded")
	}
}
