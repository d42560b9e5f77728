package transaction

import "testing"

func TestMoney(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		out  string
	}{
		{"12.34", 1234, "12.34"}, {"0.05", 5, "0.05"}, {"-0.05", -5, "-0.05"}, {"7", 700, "7.00"},
		{"7.5", 750, "7.50"}, {"-120.00", -12000, "-120.00"}, {"0", 0, "0.00"},
	} {
		got, err := ParseCents(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCents(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if s := FormatCents(got); s != tc.out {
			t.Errorf("FormatCents(%d) = %q, want %q", got, s, tc.out)
		}
	}
	for _, bad := range []string{"", "-", ".5", "1.", "1.234", "1e3", "+1", "1,00", "12.3.4", "--1", " 1", "1234567890123456"} {
		if _, err := ParseCents(bad); err == nil {
			t.Errorf("ParseCents(%q) succeeded", bad)
		}
	}
}
