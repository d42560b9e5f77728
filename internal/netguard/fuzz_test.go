package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL feeds webhook URL validation what a developer can register,
// under both policies, with every host resolving to one public and, for
// names starting "in", one private address. A refusal is the error type
// made to be shown; an accepted URL has the shape CheckURL promises, its
// host is an address the policy allows, and it is accepted again as
// url.URL prints it.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/hooks", "http://localhost:8080/h", "https://93.184.216.34/x", "https://[::1]/",
		"https://[fe80::1%25eth0]/", "https://127.1/", "https://0x7f.1/", "https://2130706433/", "https://user:pw@example.com/",
		"https://example.com/#", "https://metadata.google.internal/", "https://169.254.169.254/latest", "https://inside.example/",
		"https://[::ffff:127.0.0.1]/", "https://[64:ff9b::a00:1]/", "https://example.com:0/", "https://example.com:65536/",
		"ftp://example.com/", "//example.com/", "https:example.com", "https://EXAMPLE.COM./", "https://a/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	resolver := anyHostResolver{}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool) {
		p := Policy{AllowPrivate: allowPrivate, Resolver: resolver}
		u, err := p.CheckURL(ctx, raw)
		if err != nil {
			var ce *checkError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.msg, "url ") {
				t.Fatalf("CheckURL(%q) = %v (%T), want a *checkError starting with \"url \"", raw, err, err)
			}
			return
		}
		switch {
		case len(raw) > MaxURLLength, strings.Contains(raw, "#"), u.User != nil, u.Hostname() == "", !u.IsAbs():
			t.Fatalf("CheckURL accepted %q", raw)
		case u.Scheme != "https" && !(allowPrivate && u.Scheme == "http"):
			t.Fatalf("CheckURL accepted scheme %q in %q", u.Scheme, raw)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			if err := p.CheckIP(ip); err != nil {
				t.Fatalf("CheckURL accepted %q, whose address the dialer refuses: %v", raw, err)
			}
		} else if !allowPrivate && strings.HasPrefix(normalizeHost(u.Hostname()), "in") {
			t.Fatalf("CheckURL accepted %q, which resolves to a private address", raw)
		}
		printed := u.String()
		if len(printed) > MaxURLLength {
			return
		}
		again, err := p.CheckURL(ctx, printed)
		if err != nil {
			t.Fatalf("CheckURL accepted %q but refuses it as printed, %q: %v", raw, printed, err)
		}
		if again.String() != printed {
			t.Fatalf("CheckURL(%q) prints %q, then %q", raw, printed, again.String())
		}
		if _, err := url.Parse(printed); err != nil {
			t.Fatal(err)
		}
	})
}

// anyHostResolver resolves every name: those starting "in" to a public and
// a private address, the others to a public one.
type anyHostResolver struct{}

func (anyHostResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	out := []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}
	if strings.HasPrefix(host, "in") {
		out = append(out, net.IPAddr{IP: net.ParseIP("10.0.0.1")})
	}
	return out, nil
}
