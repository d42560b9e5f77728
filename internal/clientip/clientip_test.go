package clientip

import (
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestFromRequest(t *testing.T) {
	t.Parallel()
	// A load balancer in 10.0.0.0/8 and a CDN edge at 198.51.100.7 and
	// 2001:db8:cd::/48.
	trusted, err := ParseProxies("10.0.0.0/8, 198.51.100.7, 2001:db8:cd::/48")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		remote  string
		xff     []string // one element per X-Forwarded-For header; nil: none
		trusted []netip.Prefix
		want    string
	}{
		// Nobody trusted: the header is never read.
		{"no proxies, no header", "203.0.113.9:5000", nil, nil, "203.0.113.9"},
		{"no proxies, header ignored", "203.0.113.9:5000", []string{"192.0.2.1"}, nil, "203.0.113.9"},
		{"no proxies, IPv6 peer", "[2001:db8::9]:5000", []string{"192.0.2.1"}, nil, "2001:db8::9"},

		// Spoofing: a client that is not a trusted proxy cannot name itself.
		{"untrusted peer sends XFF", "203.0.113.9:5000", []string{"192.0.2.1"}, trusted, "203.0.113.9"},
		{"untrusted peer names a trusted proxy", "203.0.113.9:5000", []string{"10.0.0.1"}, trusted, "203.0.113.9"},
		{"untrusted peer inside a mapped address", "[::ffff:203.0.113.9]:5000", []string{"192.0.2.1"}, trusted, "203.0.113.9"},
		{"client's own XFF left of the proxy's entry", "10.0.0.1:5000", []string{"192.0.2.1, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"client names a trusted proxy left of its own entry", "10.0.0.1:5000", []string{"10.9.9.9, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"client sends its own XFF header first", "10.0.0.1:5000", []string{"192.0.2.1", "203.0.113.9"}, trusted, "203.0.113.9"},

		// Trusted peer.
		{"one proxy", "10.0.0.1:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"trusted peer without XFF", "10.0.0.1:5000", nil, trusted, "10.0.0.1"},
		{"trusted peer with an empty XFF", "10.0.0.1:5000", []string{""}, trusted, "10.0.0.1"},
		{"chain of proxies", "10.0.0.1:5000", []string{"203.0.113.9, 198.51.100.7, 10.2.3.4"}, trusted, "203.0.113.9"},
		{"chain over several headers", "10.0.0.1:5000", []string{"203.0.113.9", "198.51.100.7", "10.2.3.4"}, trusted, "203.0.113.9"},
		{"untrusted hop inside the chain", "10.0.0.1:5000", []string{"203.0.113.9, 192.0.2.50, 10.2.3.4"}, trusted, "192.0.2.50"},
		{"every hop trusted", "10.0.0.1:5000", []string{"10.7.7.7, 10.2.3.4"}, trusted, "10.7.7.7"},
		{"whitespace and empty elements", "10.0.0.1:5000", []string{"  203.0.113.9 ,, \t10.2.3.4\t, "}, trusted, "203.0.113.9"},

		// Forms of an address.
		{"IPv4 with a port", "10.0.0.1:5000", []string{"203.0.113.9:41234"}, trusted, "203.0.113.9"},
		{"IPv6", "10.0.0.1:5000", []string{"2001:db8::9"}, trusted, "2001:db8::9"},
		{"IPv6 in brackets", "10.0.0.1:5000", []string{"[2001:db8::9]"}, trusted, "2001:db8::9"},
		{"IPv6 in brackets with a port", "10.0.0.1:5000", []string{"[2001:db8::9]:443"}, trusted, "2001:db8::9"},
		{"IPv6 proxy", "[2001:db8:cd::1]:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"IPv4-mapped peer is trusted as IPv4", "[::ffff:10.0.0.1]:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"IPv4-mapped entry", "10.0.0.1:5000", []string{"::ffff:203.0.113.9"}, trusted, "203.0.113.9"},
		{"IPv6 zone dropped", "10.0.0.1:5000", []string{"fe80::1%eth0"}, trusted, "fe80::1"},

		// Garbage stops the walk at the last good address.
		{"garbage only", "10.0.0.1:5000", []string{"not-an-ip"}, trusted, "10.0.0.1"},
		{"unknown", "10.0.0.1:5000", []string{"unknown"}, trusted, "10.0.0.1"},
		{"garbage past a trusted hop", "10.0.0.1:5000", []string{"203.0.113.9, bogus, 198.51.100.7"}, trusted, "198.51.100.7"},
		{"garbage left of the client", "10.0.0.1:5000", []string{"bogus, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"space-separated addresses", "10.0.0.1:5000", []string{"203.0.113.9 192.0.2.1"}, trusted, "10.0.0.1"},
		{"CIDR as an entry", "10.0.0.1:5000", []string{"203.0.113.0/24"}, trusted, "10.0.0.1"},
		{"unbalanced bracket", "10.0.0.1:5000", []string{"[2001:db8::9"}, trusted, "10.0.0.1"},
		{"Forwarded syntax is not read", "10.0.0.1:5000", []string{"for=203.0.113.9"}, trusted, "10.0.0.1"},

		// A peer that is not an IP address is keyed as it is.
		{"non-IP peer", "@", []string{"203.0.113.9"}, trusted, "@"},
		{"peer without a port", "203.0.113.9", nil, trusted, "203.0.113.9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := http.NewRequest("GET", "http://hitch.example/", nil)
			if err != nil {
				t.Fatal(err)
			}
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := FromRequest(r, tc.trusted); got != tc.want {
				t.Errorf("FromRequest(%s, XFF %q) = %q, want %q", tc.remote, tc.xff, got, tc.want)
			}
		})
	}
}

func TestParseProxies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"10.0.0.0/8", []string{"10.0.0.0/8"}, ""},
		{" 10.0.0.0/8 , 192.0.2.1,2001:db8::/32 ", []string{"10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"}, ""},
		{"2001:db8::1", []string{"2001:db8::1/128"}, ""},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}, ""},
		{"::ffff:10.0.0.1", []string{"10.0.0.1/32"}, ""},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}, ""},
		{"10.0.0.0/8,", nil, "empty entry"},
		{"10.0.0.0/8,,192.0.2.1", nil, "empty entry"},
		{"proxy.internal", nil, `"proxy.internal" is not an IP address`},
		{"10.0.0.0/33", nil, `"10.0.0.0/33" is not an IP address`},
		{"10.0.0.0/8 192.0.2.1", nil, "is not an IP address"},
		{"10.0.0.1:8080", nil, "is not an IP address"},
		{"fe80::1%eth0", nil, "is not an IP address"},
	}
	for _, tc := range cases {
		got, err := ParseProxies(tc.list)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseProxies(%q) error %v, want %q", tc.list, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseProxies(%q): %v", tc.list, err)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if !slices.Equal(s, tc.want) {
			t.Errorf("ParseProxies(%q) = %v, want %v", tc.list, s, tc.want)
		}
	}
}

func TestLimitKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ ip, want string }{
		{"203.0.113.9", "203.0.113.9"},
		{"::ffff:203.0.113.9", "203.0.113.9"},
		{"2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::9", "2001:db8:1:3::/64"},
		{"::1", "::/64"},
		{"@", "@"}, // not an IP address (a Unix socket): keyed as it is
	}
	for _, tc := range cases {
		if got := LimitKey(tc.ip); got != tc.want {
			t.Errorf("LimitKey(%q) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	// Every address FromRequest returns keys as LimitKey says.
	r := &http.Request{RemoteAddr: "[2001:db8:1:2::abcd%eth0]:5000", Header: http.Header{}}
	if got := LimitKey(FromRequest(r, nil)); got != "2001:db8:1:2::/64" {
		t.Errorf("zoned IPv6 peer keyed %q", got)
	}
}
