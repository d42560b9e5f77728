package api_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"github.com/hitchdev/hitch/internal/store"
)

// behindProxy trusts the harness's own clients, which connect over
// loopback, as a reverse proxy.
func behindProxy(o *harnessOptions) {
	o.trustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
}

// With --trusted-proxies, the per-IP limits key on the client that
// X-Forwarded-For names, so that one abuser behind the proxy does not lock
// out everyone else; without it the header is ignored, so that a client
// cannot pick its own bucket.
func TestTrustedProxiesSeparateClients(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     []func(*harnessOptions)
		separate bool
	}{
		{"trusted proxy", []func(*harnessOptions){behindProxy}, true},
		{"no trusted proxies", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, h *harness) {
				fail := h.failAuthFrom
				// The harness clock stands still: the burst of 20 is all a
				// client gets.
				for i := range 20 {
					if st := fail("203.0.113.1"); st != http.StatusUnauthorized {
						t.Fatalf("failure %d: %d", i, st)
					}
				}
				if st := fail("203.0.113.1"); st != http.StatusTooManyRequests {
					t.Fatalf("21st failure: %d", st)
				}
				// A client naming another address left of the proxy's entry
				// is still the address the proxy saw.
				if st := fail("203.0.113.2, 203.0.113.1"); st != http.StatusTooManyRequests {
					t.Fatalf("spoofed entry: %d", st)
				}
				want := http.StatusTooManyRequests
				if tc.separate {
					want = http.StatusUnauthorized
				}
				if st := fail("203.0.113.2"); st != want {
					t.Fatalf("another client: %d, want %d", st, want)
				}
			}, tc.opts...)
		})
	}
}

// The per-IP limits key an IPv6 client on its /64, so that rotating
// addresses inside it does not reset them, and an IPv4 client (also written
// IPv4-mapped) on its address.
func TestPerIPLimitsKeyIPv6On64(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		fail := h.failAuthFrom
		// The harness clock stands still: the burst of 20 is all a client
		// gets, whatever addresses of its /64 it sends from.
		for i := range 20 {
			if st := fail(fmt.Sprintf("2001:db8:1:2::%x", i+1)); st != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d", i, st)
			}
		}
		if st := fail("2001:db8:1:2:ffff:ffff:ffff:ffff"); st != http.StatusTooManyRequests {
			t.Fatalf("another address of the same /64: %d", st)
		}
		if st := fail("2001:db8:1:3::1"); st != http.StatusUnauthorized {
			t.Fatalf("the next /64: %d", st)
		}
		for i := range 20 {
			if st := fail("::ffff:198.51.100.1"); st != http.StatusUnauthorized {
				t.Fatalf("IPv4-mapped failure %d: %d", i, st)
			}
		}
		if st := fail("198.51.100.1"); st != http.StatusTooManyRequests {
			t.Fatalf("the IPv4 address of a throttled mapped one: %d", st)
		}
		if st := fail("198.51.100.2"); st != http.StatusUnauthorized {
			t.Fatalf("the next IPv4 address: %d", st)
		}
	}, behindProxy)
}

// Behind a trusted proxy, the dashboard's audit records name the client,
// not the proxy.
func TestTrustedProxiesAuditOrigin(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		d := h.dash()
		form := url.Values{"csrf": {d.csrf("/dashboard/signin")}, "email": {"ada@example.com"}, "password": {password}}
		r := d.send("POST", "/dashboard/signin", form, http.Header{"X-Forwarded-For": {"198.51.100.1, 203.0.113.7"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d %.300s", r.status, r.body)
		}
		recs := auditLog(t, h.api)
		if len(recs) == 0 || recs[0].Event.Action != "signin" || recs[0].Context.IP != "203.0.113.7" {
			t.Fatalf("sign-in record %+v", recs)
		}
	}, behindProxy)
}

// failAuthFrom answers the status of a request with a wrong secret from the
// client address xff names (behind a trusted proxy).
func (h *harness) failAuthFrom(xff string) int {
	h.t.Helper()
	bad := basic(h.clientID, "hsk_wrong_secret_wrong_secret_wrong_secret")
	return h.do("GET", "/jwe/key", nil, http.Header{"Authorization": {bad}, "X-Forwarded-For": {xff}}).status
}
