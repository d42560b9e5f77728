package hitch

import "testing"

// psql gets the database URL without the pgx pool settings libpq refuses,
// and with everything else.
func TestLibpqURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u@h:5432/db?sslmode=disable&pool_max_conns=32&pool_min_conns=2": "postgres://u@h:5432/db?sslmode=disable",
		"postgres://u@h/db": "postgres://u@h/db",
	} {
		if got := libpqURL(in); got != want {
			t.Errorf("libpqURL(%q) = %q, want %q", in, got, want)
		}
	}
}
