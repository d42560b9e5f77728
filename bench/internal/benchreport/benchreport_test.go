package benchreport

import (
	"reflect"
	"testing"
	"time"
)

func TestRedactPassword(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u:pw@h/db", "postgres://u:xxxxx@h/db"},
		{"--database-url=postgres://u:pw@h/db", "--database-url=postgres://u:xxxxx@h/db"},
		{"--conns=8", "--conns=8"},
	}
	for _, tt := range tests {
		if got := redactPassword(tt.in); got != tt.want {
			t.Errorf("redactPassword(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"--duration=2s", "--duration=2s"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	tests := []struct{ got, want string }{
		{FmtMs(Ms(2500 * time.Microsecond)), "2.50 ms"},
		{FmtMs(Ms(300 * time.Millisecond)), "300 ms"},
		{FmtMiB(0), "n/a"},
		{FmtMiB(45 << 19), "22.5 MiB"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestLogNotes(t *testing.T) {
	t.Parallel()
	got := LogNotes(map[string][]string{
		"hitch load":   {"level=ERROR msg=a", "level=WARN msg=b"},
		"hitch cold-1": {"level=WARN msg=c"},
	})
	want := []string{
		"hitch cold-1 logged 1 lines at warn or above; first: level=WARN msg=c",
		"hitch load logged 2 lines at warn or above; first: level=ERROR msg=a",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LogNotes = %q\nwant %q", got, want)
	}
	if got := LogNotes(map[string][]string{}); got != nil {
		t.Errorf("LogNotes of nothing = %q, want nil", got)
	}
}
