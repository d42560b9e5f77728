package link

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          string
		development bool
		want        string // "" for refused
	}{
		{"https://app.example.com", false, "https://app.example.com"},
		{"HTTPS://App.Example.COM", false, "https://app.example.com"},
		{"https://app.example.com:443", false, "https://app.example.com"},
		{"https://app.example.com:8443", false, "https://app.example.com:8443"},
		{"https://93.184.215.14", false, "https://93.184.215.14"},
		{"https://[2001:db8::1]:8443", false, ""}, // CSP cannot name IPv6 addresses
		{"https://[2001:DB8::1]", false, ""},
		{"https://İ.example", false, ""},      // ToLower would make it https://i.example
		{"https://\u212a.example", false, ""}, // the Kelvin sign, k once lower-cased
		{"https://127.1", true, ""},
		{"https://0x7f.0.0.1", true, ""},
		{"https://app.example.123", false, ""},
		{"https://xn--bcher-kva.example", false, "https://xn--bcher-kva.example"},
		{"http://localhost:3000", true, "http://localhost:3000"},
		{"http://app.localhost", true, "http://app.localhost"},
		{"http://127.0.0.1:8080", true, "http://127.0.0.1:8080"},
		{"http://[::1]:80", true, ""},
		{"http://localhost:3000", false, ""},
		{"http://example.com", true, ""},
		{"http://10.0.0.1", true, ""},
		{"https://app.example.com/", false, ""},
		{"https://app.example.com/path", false, ""},
		{"https://app.example.com?x=1", false, ""},
		{"https://app.example.com?", false, ""},
		{"https://app.example.com#top", false, ""},
		{"https://app.example.com#", false, ""},
		{"https://user@app.example.com", false, ""},
		{"https://*.example.com", false, ""},
		{"*", false, ""},
		{"'self'", false, ""},
		{"app.example.com", false, ""},
		{"//app.example.com", false, ""},
		{"ftp://app.example.com", false, ""},
		{"javascript:alert(1)", false, ""},
		{"https://bücher.example", false, ""},
		{"https://app.example.com:", false, ""},
		{"https://app.example.com:0", false, ""},
		{"https://app.example.com:65536", false, ""},
		{"https://app.example.com:08443", false, ""},
		{"https://-bad.example.com", false, ""},
		{"https://app..example.com", false, ""},
		{"https://app.example.com.", false, ""},
		{"https://app_1.example.com", false, ""},
		{"https://app.example.com https://evil.example", false, ""},
		{"https://app.example.com;script-src *", false, ""},
		{"https://[fe80::1%25eth0]", false, ""},
		{"", false, ""},
		{"https://" + strings.Repeat("a", 300) + ".example", false, ""},
	}
	for _, tc := range tests {
		got, err := ParseOrigin(tc.in, tc.development)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("ParseOrigin(%q, development %v) = %q, %v; want %q", tc.in, tc.development, got, err, tc.want)
		}
		var oe *OriginError
		if err != nil && (!errors.As(err, &oe) || oe.Origin != tc.in) {
			t.Errorf("ParseOrigin(%q): error %v is not an OriginError naming it", tc.in, err)
		}
	}
}

func TestParseOrigins(t *testing.T) {
	t.Parallel()
	got, err := ParseOrigins([]string{"https://b.example", "https://A.example", "https://b.example:443"}, false)
	if err != nil || strings.Join(got, " ") != "https://a.example https://b.example" {
		t.Fatalf("ParseOrigins: %q %v", got, err)
	}
	if got, err := ParseOrigins(nil, false); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ParseOrigins(nil): %#v %v", got, err)
	}
	many := make([]string, 0, MaxAllowedOrigins+1)
	for i := range MaxAllowedOrigins {
		many = append(many, fmt.Sprintf("https://app%d.example", i))
	}
	if _, err := ParseOrigins(append(many, many[0]), false); err != nil {
		t.Fatalf("%d origins and a duplicate: %v", MaxAllowedOrigins, err)
	}
	if _, err := ParseOrigins(append(many, "https://one-more.example"), false); !errors.Is(err, ErrTooManyOrigins) {
		t.Fatalf("%d origins: %v", MaxAllowedOrigins+1, err)
	}
}

func TestFrameAncestorsFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     string
		origins []string
		want    string
	}{
		{"development", nil, "*"},
		{"production", nil, "'self'"},
		{"development", []string{"https://a.example", "http://localhost:3000"}, "'self' https://a.example http://localhost:3000"},
		{"production", []string{"https://a.example"}, "'self' https://a.example"},
		// A stored value that could break out of the directive is dropped.
		{"production", []string{"https://a.example; script-src *", "https://b.example"}, "'self' https://b.example"},
		{"development", []string{"https://a.example *"}, "'self'"},
	}
	for _, tc := range tests {
		if got := FrameAncestorsFor(tc.env, tc.origins); got != tc.want {
			t.Errorf("FrameAncestorsFor(%s, %q) = %q, want %q", tc.env, tc.origins, got, tc.want)
		}
	}
}

func TestOriginsAuditName(t *testing.T) {
	t.Parallel()
	if got := OriginsAuditName(nil); got != nil {
		t.Fatalf("no origins: %q", *got)
	}
	if got := OriginsAuditName([]string{"https://a.example", "https://b.example"}); *got != "https://a.example https://b.example" {
		t.Fatalf("short list: %q", *got)
	}
	var long []string
	for i := range 20 {
		long = append(long, "https://"+strings.Repeat(string(rune('a'+i)), 250)+".example")
	}
	got := *OriginsAuditName(long)
	if len(got) > maxOriginsName || !strings.HasSuffix(got, " more)") {
		t.Fatalf("long list: %d bytes, ends %q", len(got), got[max(0, len(got)-20):])
	}
	for _, part := range strings.Fields(strings.TrimSuffix(got, got[strings.Index(got, " (and"):])) {
		if !slices.Contains(long, part) {
			t.Fatalf("long list names %q, which is not one of the origins", part)
		}
	}
}
