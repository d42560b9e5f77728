package web

import (
	"slices"
	"strings"
	"testing"
)

func TestOriginsName(t *testing.T) {
	t.Parallel()
	if got := originsName([]string{"https://a.example", "https://b.example"}); got != "https://a.example https://b.example" {
		t.Fatalf("short list: %q", got)
	}
	var long []string
	for i := range 20 {
		long = append(long, "https://"+strings.Repeat(string(rune('a'+i)), 250)+".example")
	}
	got := originsName(long)
	if len(got) > maxOriginsName || !strings.HasSuffix(got, " more)") {
		t.Fatalf("long list: %d bytes, ends %q", len(got), got[max(0, len(got)-20):])
	}
	for _, part := range strings.Fields(strings.TrimSuffix(got, got[strings.Index(got, " (and"):])) {
		if !slices.Contains(long, part) {
			t.Fatalf("long list names %q, which is not one of the origins", part)
		}
	}
}
