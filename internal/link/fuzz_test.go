package link

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParseOrigins feeds the allowed origins check the dashboard's
// origins form (one origin a line, as setLinkOrigins splits it) and the
// API's list. A refusal names an origin that was given, or says the list is
// too long; an accepted list is canonical: sorted, without duplicates, each
// origin accepted again as itself and named as is in the frame policy.
func FuzzParseOrigins(f *testing.F) {
	for _, s := range []string{
		"https://app.example.com\nhttps://APP.example.com:443\n\n", "http://localhost:3000", "http://127.0.0.1:8080",
		"https://*.example.com", "https://example.com/", "https://user@example.com", "https://[::1]", "https://127.1",
		"https://0x7f.0.0.1", "https://İ.example", "https://example.com:0443", "https://example.com:", "javascript:alert(1)",
		"https://a.example\nhttps://b.example\nhttps://c.example\nhttps://d.example\nhttps://e.example",
		"https://example.com ; script-src *", "https://example.com\r\nhttps://other.example",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, development bool) {
		var given []string
		for _, line := range strings.Split(text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				given = append(given, line)
			}
		}
		origins, err := ParseOrigins(given, development)
		if err != nil {
			var bad *OriginError
			switch {
			case errors.As(err, &bad):
				if !slices.Contains(given, bad.Origin) || bad.Reason == "" {
					t.Fatalf("refusal %v names %q, not one of the origins given", err, bad.Origin)
				}
			case errors.Is(err, ErrTooManyOrigins):
			default:
				t.Fatalf("refusal %v (%T), want an *OriginError or ErrTooManyOrigins", err, err)
			}
			return
		}
		if len(origins) > MaxAllowedOrigins || !slices.IsSorted(origins) || len(slices.Compact(slices.Clone(origins))) != len(origins) {
			t.Fatalf("ParseOrigins(%q) = %q: not a sorted list of distinct origins within the limit", given, origins)
		}
		policy := " " + FrameAncestorsFor("production", origins) + " "
		for _, o := range origins {
			if again, err := ParseOrigin(o, development); err != nil || again != o {
				t.Fatalf("canonical origin %q parses as %q, %v", o, again, err)
			}
			if !storedOrigin.MatchString(o) || !strings.Contains(policy, " "+o+" ") {
				t.Fatalf("origin %q is not named as is in the frame policy %q", o, policy)
			}
		}
	})
}
