package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a table and counts lookups; no real DNS.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	calls int
}

func newResolver(hosts map[string][]string) *fakeResolver {
	return &fakeResolver{hosts: hosts}
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	addrs, ok := r.hosts[host]
	if !ok {
		// Server is set to show that the resolver's address never reaches
		// the developer-facing message.
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.0.0.2:53", IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(addrs))
	for _, a := range addrs {
		// net.ParseIP returns IPv4 in 16-byte form, as resolvers may.
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

// set changes the answer for host, as a rebinding DNS server would.
func (r *fakeResolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[host] = addrs
}

func (r *fakeResolver) lookups() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

const publicV4 = "93.184.215.14"

func TestCheckIPBlockedInProduction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		kind string
	}{
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"10.0.0.5", "private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.254", "CGNAT"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.0.1", "link-local"},
		{"169.254.169.254", "cloud metadata"},
		{"100.100.100.200", "cloud metadata"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.8", "IETF protocol"},
		{"192.0.2.10", "documentation"},
		{"192.168.1.1", "private"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fd00:ec2::254", "cloud metadata"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf::1", "link-local"},
		{"ff01::1", "multicast"},
		{"ff02::1", "multicast"},
		{"ff05::1:3", "multicast"},
		{"2001:db8::1", "documentation"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.5", "private"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"::ffff:100.64.0.1", "CGNAT"},
		{"64:ff9b::7f00:1", "NAT64 form of a loopback"},
		{"64:ff9b::a00:5", "NAT64 form of a private"},
		{"64:ff9b::a9fe:a9fe", "NAT64 form of a link-local"},
		{"64:ff9b:1::1", "local NAT64"},
		{"::7f00:1", "IPv4-compatible"},
		{"2002:7f00:1::1", "6to4"},
		{"2001:0:4136:e378::1", "Teredo"},
		{"100::1", "discard"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			err := Policy{}.CheckIP(netip.MustParseAddr(tt.addr))
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("CheckIP(%s) = %v, want ErrBlocked", tt.addr, err)
			}
			if !strings.Contains(err.Error(), tt.kind) || !strings.Contains(err.Error(), tt.addr) {
				t.Errorf("CheckIP(%s) = %q, want it to name the address and %q", tt.addr, err, tt.kind)
			}
		})
	}
	t.Run("zero Addr", func(t *testing.T) {
		t.Parallel()
		if err := (Policy{}).CheckIP(netip.Addr{}); !errors.Is(err, ErrBlocked) {
			t.Fatalf("CheckIP(zero) = %v, want ErrBlocked", err)
		}
	})
}

func TestCheckIPAllowedInProduction(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{
		"8.8.8.8",
		"1.1.1.1",
		publicV4,
		"9.255.255.255",   // below 10/8
		"11.0.0.0",        // above 10/8
		"100.63.255.255",  // below 100.64/10
		"100.128.0.0",     // above 100.64/10
		"126.255.255.255", // below 127/8
		"128.0.0.1",       // above 127/8
		"169.253.255.255", // below 169.254/16
		"172.15.255.255",  // below 172.16/12
		"172.32.0.0",      // above 172.16/12
		"192.0.1.1",       // between 192.0.0/24 and 192.0.2/24
		"192.167.255.255", // below 192.168/16
		"192.169.0.0",     // above 192.168/16
		"198.17.255.255",  // below 198.18/15
		"198.20.0.0",      // above 198.18/15
		"223.255.255.255", // below 224/4
		"2606:4700:4700::1111",
		"2a00:1450:4001:80b::200e",
		"2001:db9::1",      // above 2001:db8::/32
		"::ffff:8.8.8.8",   // mapped public
		"64:ff9b::808:808", // NAT64 of a public address
	} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			if err := (Policy{}).CheckIP(netip.MustParseAddr(addr)); err != nil {
				t.Fatalf("CheckIP(%s) = %v, want nil", addr, err)
			}
		})
	}
}

func TestCheckIPAllowPrivate(t *testing.T) {
	t.Parallel()
	dev := Policy{AllowPrivate: true}
	for _, addr := range []string{"127.0.0.1", "::1", "10.0.0.5", "192.168.1.1", "fd12::1", "::ffff:127.0.0.1", "8.8.8.8"} {
		if err := dev.CheckIP(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("dev CheckIP(%s) = %v, want nil", addr, err)
		}
	}
	// Metadata endpoints stay blocked even in development.
	for _, addr := range []string{"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200"} {
		if err := dev.CheckIP(netip.MustParseAddr(addr)); !errors.Is(err, ErrBlocked) {
			t.Errorf("dev CheckIP(%s) = %v, want ErrBlocked", addr, err)
		}
	}
}

func testHosts() map[string][]string {
	return map[string][]string{
		"hooks.example.com":   {publicV4},
		"v6.example.com":      {"2606:4700::6810:84e5"},
		"dual.example.com":    {publicV4, "2606:4700::6810:84e5"},
		"private.example.com": {"10.0.0.5"},
		"mixed.example.com":   {publicV4, "10.0.0.5"},
		"mixed6.example.com":  {"2606:4700::6810:84e5", "::1"},
		"mapped.example.com":  {"::ffff:127.0.0.1"},
		"meta.example.com":    {"169.254.169.254"},
		"empty.example.com":   {},
		// Lying answers for names that must be refused before resolution.
		"localhost":                {publicV4},
		"metadata.google.internal": {publicV4},
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	longOK := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))
	tests := []struct {
		name        string
		dev         bool
		raw         string
		wantErr     string // exact message; "" means accepted
		wantBlocked bool
	}{
		// Production: accepted.
		{name: "https", raw: "https://hooks.example.com/webhooks"},
		{name: "any port and query", raw: "https://hooks.example.com:8443/webhooks?x=1"},
		{name: "scheme case", raw: "HTTPS://Hooks.Example.COM/webhooks"},
		{name: "trailing dot", raw: "https://hooks.example.com./webhooks"},
		{name: "ipv6 host", raw: "https://v6.example.com/"},
		{name: "dual stack", raw: "https://dual.example.com/"},
		{name: "public ipv4 literal", raw: "https://8.8.8.8/hook"},
		{name: "public ipv6 literal", raw: "https://[2606:4700:4700::1111]/hook"},
		{name: "exactly max length", raw: longOK},

		// Production: shape and scheme.
		{name: "empty", raw: "", wantErr: "url is required"},
		{name: "too long", raw: longOK + "a", wantErr: "url must be at most 2048 characters"},
		{name: "relative path", raw: "/webhooks", wantErr: "url must be absolute, like https://example.com/webhooks"},
		{name: "no scheme", raw: "hooks.example.com/webhooks", wantErr: "url must be absolute, like https://example.com/webhooks"},
		{name: "opaque", raw: "https:hooks.example.com", wantErr: "url must be absolute, like https://example.com/webhooks"},
		{name: "http in production", raw: "http://hooks.example.com/", wantErr: "url must use https"},
		{name: "ftp in production", raw: "ftp://hooks.example.com/", wantErr: "url must use https"},
		{name: "user and password", raw: "https://user:pass@hooks.example.com/", wantErr: "url must not contain a user name or password"},
		{name: "user only", raw: "https://user@hooks.example.com/", wantErr: "url must not contain a user name or password"},
		{name: "fragment", raw: "https://hooks.example.com/#top", wantErr: "url must not contain a fragment"},
		{name: "empty fragment", raw: "https://hooks.example.com/#", wantErr: "url must not contain a fragment"},
		{name: "no host", raw: "https:///webhooks", wantErr: "url must have a host"},
		{name: "port zero", raw: "https://hooks.example.com:0/", wantErr: "url port must be between 1 and 65535"},
		{name: "port too big", raw: "https://hooks.example.com:70000/", wantErr: "url port must be between 1 and 65535"},
		{name: "short ipv4", raw: "https://127.1/", wantErr: `url host "127.1" is not a valid IP address or domain name`},
		{name: "decimal ipv4", raw: "https://2130706433/", wantErr: `url host "2130706433" is not a valid IP address or domain name`},
		{name: "hex ipv4", raw: "https://0x7f.0.0.1/", wantErr: `url host "0x7f.0.0.1" is not a valid IP address or domain name`},

		// Production: names refused before resolution.
		{name: "localhost", raw: "https://localhost/", wantErr: `url host "localhost" is a local host name`, wantBlocked: true},
		{name: "localhost upper with dot", raw: "https://LOCALHOST./", wantErr: `url host "LOCALHOST." is a local host name`, wantBlocked: true},
		{name: "sub.localhost", raw: "https://api.localhost:8443/", wantErr: `url host "api.localhost" is a local host name`, wantBlocked: true},
		{name: "gcp metadata", raw: "https://metadata.google.internal/computeMetadata/v1/", wantErr: `url host "metadata.google.internal" is a cloud metadata host`, wantBlocked: true},
		{name: ".internal", raw: "https://db.internal/", wantErr: `url host "db.internal" is a private (.internal) name`, wantBlocked: true},
		{name: ".local", raw: "https://printer.local/", wantErr: `url host "printer.local" is a multicast DNS (.local) name`, wantBlocked: true},
		{name: "single label", raw: "https://metadata/", wantErr: `url host "metadata" is not a fully qualified domain name`, wantBlocked: true},

		// Production: IP literals.
		{name: "loopback literal", raw: "https://127.0.0.1/", wantErr: "url host is a loopback address (127.0.0.1)", wantBlocked: true},
		{name: "ipv6 loopback literal", raw: "https://[::1]:8443/", wantErr: "url host is a loopback address (::1)", wantBlocked: true},
		{name: "mapped loopback literal", raw: "https://[::ffff:127.0.0.1]/", wantErr: "url host is a loopback address (::ffff:127.0.0.1)", wantBlocked: true},
		{name: "private literal", raw: "https://10.0.0.5/", wantErr: "url host is a private address (10.0.0.5)", wantBlocked: true},
		{name: "aws metadata literal", raw: "https://169.254.169.254/latest/meta-data/", wantErr: "url host is a cloud metadata address (169.254.169.254)", wantBlocked: true},
		{name: "aws ipv6 metadata literal", raw: "https://[fd00:ec2::254]/", wantErr: "url host is a cloud metadata address (fd00:ec2::254)", wantBlocked: true},
		{name: "link-local with zone", raw: "https://[fe80::1%25eth0]/", wantErr: "url host is a link-local address (fe80::1%eth0)", wantBlocked: true},
		{name: "unspecified literal", raw: "https://0.0.0.0/", wantErr: "url host is an unspecified address (0.0.0.0)", wantBlocked: true},

		// Production: resolution.
		{name: "resolves private", raw: "https://private.example.com/", wantErr: "url resolves to a private address (10.0.0.5)", wantBlocked: true},
		{name: "one public one private", raw: "https://mixed.example.com/", wantErr: "url resolves to a private address (10.0.0.5)", wantBlocked: true},
		{name: "one public one loopback v6", raw: "https://mixed6.example.com/", wantErr: "url resolves to a loopback address (::1)", wantBlocked: true},
		{name: "resolves mapped loopback", raw: "https://mapped.example.com/", wantErr: "url resolves to a loopback address (127.0.0.1)", wantBlocked: true},
		{name: "resolves metadata", raw: "https://meta.example.com/", wantErr: "url resolves to a cloud metadata address (169.254.169.254)", wantBlocked: true},
		{name: "does not resolve", raw: "https://missing.example.com/", wantErr: `url host "missing.example.com" could not be resolved`},
		{name: "empty answer", raw: "https://empty.example.com/", wantErr: `url host "empty.example.com" could not be resolved`},

		// Development.
		{name: "dev http localhost", dev: true, raw: "http://localhost:8080/hook"},
		{name: "dev http loopback", dev: true, raw: "http://127.0.0.1:3000/"},
		{name: "dev http ipv6 loopback", dev: true, raw: "http://[::1]:8080/"},
		{name: "dev https private", dev: true, raw: "https://10.0.0.5/"},
		{name: "dev docker host", dev: true, raw: "http://host.docker.internal:8080/"},
		{name: "dev compose service", dev: true, raw: "http://receiver:8080/hook"},
		{name: "dev unresolvable is fine", dev: true, raw: "http://missing.example.com/"},
		{name: "dev ftp", dev: true, raw: "ftp://localhost/", wantErr: "url must use http or https"},
		{name: "dev userinfo", dev: true, raw: "http://u:p@localhost/", wantErr: "url must not contain a user name or password"},
		{name: "dev fragment", dev: true, raw: "http://localhost/#x", wantErr: "url must not contain a fragment"},
		{name: "dev metadata literal", dev: true, raw: "http://169.254.169.254/", wantErr: "url host is a cloud metadata address (169.254.169.254)", wantBlocked: true},
		{name: "dev metadata name", dev: true, raw: "http://metadata.google.internal/", wantErr: `url host "metadata.google.internal" is a cloud metadata host`, wantBlocked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Policy{AllowPrivate: tt.dev, Resolver: newResolver(testHosts())}
			u, err := p.CheckURL(t.Context(), tt.raw)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want nil", tt.raw, err)
				}
				if u == nil || u.Host == "" {
					t.Fatalf("CheckURL(%q) returned URL %v, want a parsed URL", tt.raw, u)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckURL(%q) = nil error, want %q", tt.raw, tt.wantErr)
			}
			if u != nil {
				t.Errorf("CheckURL(%q) returned URL %v with an error", tt.raw, u)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("CheckURL(%q) error = %q, want %q", tt.raw, err, tt.wantErr)
			}
			if got := errors.Is(err, ErrBlocked); got != tt.wantBlocked {
				t.Errorf("errors.Is(err, ErrBlocked) = %v, want %v", got, tt.wantBlocked)
			}
		})
	}
}

func TestCheckURLParseError(t *testing.T) {
	t.Parallel()
	_, err := Policy{}.CheckURL(t.Context(), "https://hooks.example.com/\x00")
	if err == nil || !strings.HasPrefix(err.Error(), "url is not valid: ") {
		t.Fatalf("CheckURL with a control character = %v, want a 'url is not valid' error", err)
	}
}

func TestCheckURLResolveErrorKeepsCauseHidesResolver(t *testing.T) {
	t.Parallel()
	_, err := Policy{Resolver: newResolver(testHosts())}.CheckURL(t.Context(), "https://missing.example.com/")
	if err == nil {
		t.Fatal("CheckURL of an unresolvable host succeeded")
	}
	if strings.Contains(err.Error(), "10.0.0.2") {
		t.Errorf("error %q leaks the resolver address", err)
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); !ok || !dnsErr.IsNotFound {
		t.Errorf("error %v does not wrap the DNS error", err)
	}
}

func TestCheckURLRefusesLocalNamesBeforeResolution(t *testing.T) {
	t.Parallel()
	r := newResolver(testHosts()) // claims localhost is public
	p := Policy{Resolver: r}
	for _, raw := range []string{"https://localhost/", "https://metadata.google.internal/", "https://x.localhost/"} {
		if _, err := p.CheckURL(t.Context(), raw); !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, want ErrBlocked", raw, err)
		}
	}
	if n := r.lookups(); n != 0 {
		t.Errorf("resolver called %d times, want 0", n)
	}
}

// countingServer is a TLS server on 127.0.0.1 whose certificate covers
// example.com, counting the requests that reach it.
func countingServer(t *testing.T) (srv *httptest.Server, port string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		io.WriteString(w, "reached")
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return srv, port, hits
}

// trustingClient is NewHTTPClient trusting the test server's certificate.
func trustingClient(t *testing.T, p Policy, srv *httptest.Server) *http.Client {
	t.Helper()
	client := NewHTTPClient(p, 5*time.Second, 0)
	client.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	t.Cleanup(client.CloseIdleConnections)
	return client
}

func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		allowPriv   bool
		wantReached bool
	}{
		{name: "production refuses", allowPriv: false, wantReached: false},
		{name: "development reaches", allowPriv: true, wantReached: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, port, hits := countingServer(t)
			r := newResolver(map[string][]string{"example.com": {publicV4}})
			p := Policy{AllowPrivate: tt.allowPriv, Resolver: r}
			hook := "https://example.com:" + port + "/hook"

			if _, err := p.CheckURL(t.Context(), hook); err != nil {
				t.Fatalf("CheckURL at registration: %v", err)
			}
			r.set("example.com", "127.0.0.1") // the attacker's DNS rebinds
			before := r.lookups()

			resp, err := trustingClient(t, p, srv).Get(hook)
			if r.lookups() == before {
				t.Error("the dialer did not resolve the host itself")
			}
			if !tt.wantReached {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request reached the server: status %d", resp.StatusCode)
				}
				if !errors.Is(err, ErrBlocked) {
					t.Errorf("error = %v, want ErrBlocked", err)
				}
				if n := hits.Load(); n != 0 {
					t.Errorf("server hit %d times, want 0", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "reached" {
				t.Errorf("response %d %q, want 200 \"reached\"", resp.StatusCode, body)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("server hit %d times, want 1", n)
			}
		})
	}
}

// refusedListener returns a loopback listener and a function asserting that
// no connection ever arrived on it.
func refusedListener(t *testing.T) (port string, assertNoConn func()) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, func() {
		t.Helper()
		// A completed connect waits in the backlog, so Accept returns it at once.
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			t.Error("a connection reached the listener")
		}
	}
}

func TestDialContextRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		network string
		host    string // the port of a real loopback listener is appended
		blocked bool
	}{
		{name: "loopback literal", network: "tcp", host: "127.0.0.1", blocked: true},
		{name: "mapped loopback literal", network: "tcp", host: "::ffff:127.0.0.1", blocked: true},
		{name: "localhost name", network: "tcp", host: "localhost", blocked: true},
		{name: "resolves loopback", network: "tcp", host: "rebind.example.com", blocked: true},
		{name: "resolves public and loopback", network: "tcp", host: "mixed.example.com", blocked: true},
		{name: "metadata literal", network: "tcp", host: "169.254.169.254", blocked: true},
		{name: "unresolvable", network: "tcp", host: "missing.example.com"},
		{name: "no address of family", network: "tcp6", host: "v4only.example.com"},
		{name: "udp", network: "udp", host: "v4only.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			port, assertNoConn := refusedListener(t)
			r := newResolver(map[string][]string{
				"localhost":          {"127.0.0.1"},
				"rebind.example.com": {"127.0.0.1"},
				"mixed.example.com":  {publicV4, "127.0.0.1"},
				"v4only.example.com": {"127.0.0.1"},
			})
			// v4only resolves to loopback, so these cases run in development
			// mode to show the refusal is about family or network, not address.
			p := Policy{Resolver: r, AllowPrivate: !tt.blocked}
			dial := p.DialContext(time.Second)
			conn, err := dial(t.Context(), tt.network, net.JoinHostPort(tt.host, port))
			if err == nil {
				conn.Close()
				t.Fatal("dial succeeded, want refusal")
			}
			if got := errors.Is(err, ErrBlocked); got != tt.blocked {
				t.Errorf("dial error %v: errors.Is(ErrBlocked) = %v, want %v", err, got, tt.blocked)
			}
			assertNoConn()
		})
	}
}

func TestDialContextAllowPrivateConnects(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p := Policy{AllowPrivate: true, Resolver: newResolver(map[string][]string{"dev.example.com": {"127.0.0.1"}})}
	for _, host := range []string{"127.0.0.1", "dev.example.com"} {
		conn, err := p.DialContext(time.Second)(t.Context(), "tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Fatalf("dial %s: %v", host, err)
		}
		if got := conn.RemoteAddr().String(); got != ln.Addr().String() {
			t.Errorf("dial %s connected to %s, want %s", host, got, ln.Addr())
		}
		conn.Close()
		accepted, err := ln.Accept()
		if err != nil {
			t.Fatalf("accept after dialing %s: %v", host, err)
		}
		accepted.Close()
	}
}

// The dialer's Control hook re-checks the literal socket address, so even a
// bug in resolution cannot connect to a blocked address.
func TestDialerControlRechecksSocketAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dev     bool
		address string
		blocked bool
	}{
		{address: "127.0.0.1:443", blocked: true},
		{address: "[::1]:443", blocked: true},
		{address: "[::ffff:10.0.0.1]:443", blocked: true},
		{address: "[fe80::1%eth0]:443", blocked: true},
		{address: "169.254.169.254:80", blocked: true},
		{address: "not-an-address", blocked: true},
		{address: publicV4 + ":443"},
		{address: "[2606:4700:4700::1111]:443"},
		{dev: true, address: "127.0.0.1:443"},
		{dev: true, address: "169.254.169.254:80", blocked: true},
	}
	for _, tt := range tests {
		d := Policy{AllowPrivate: tt.dev}.dialer(3 * time.Second)
		if d.Timeout != 3*time.Second {
			t.Errorf("dialer timeout = %v, want 3s", d.Timeout)
		}
		if d.Control == nil {
			t.Fatal("dialer has no Control hook")
		}
		err := d.Control("tcp", tt.address, nil)
		if got := errors.Is(err, ErrBlocked); got != tt.blocked {
			t.Errorf("dev=%v Control(%q) = %v, want blocked=%v", tt.dev, tt.address, err, tt.blocked)
		}
	}
}

func TestNewHTTPClientDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var targetHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/target", func(http.ResponseWriter, *http.Request) { targetHits.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client := NewHTTPClient(Policy{AllowPrivate: true}, 5*time.Second, 0)
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL + "/start")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status = %d, want 302", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/target" {
		t.Errorf("Location = %q, want /target", loc)
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("redirect target hit %d times, want 0", n)
	}
}

func TestNewHTTPClientTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()

	client := NewHTTPClient(Policy{AllowPrivate: true}, 200*time.Millisecond, 0)
	defer client.CloseIdleConnections()
	start := time.Now()
	resp, err := client.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("Get of a server that never answers succeeded")
	}
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("error = %v, want a timeout", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Get took %v, want about 200ms", elapsed)
	}
}

func TestNewHTTPClientTransport(t *testing.T) {
	t.Parallel()
	client := NewHTTPClient(Policy{}, 7*time.Second, 0)
	tr, ok := client.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T, want *http.Transport", client.Transport)
	}
	if tr.Proxy != nil {
		t.Error("transport uses a proxy; a proxy would dial around the guard")
	}
	if tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Error("transport must dial only through the guarded DialContext")
	}
	if !tr.ForceAttemptHTTP2 {
		t.Error("ForceAttemptHTTP2 = false")
	}
	if tr.MaxIdleConnsPerHost != 16 {
		t.Errorf("MaxIdleConnsPerHost = %d, want 16", tr.MaxIdleConnsPerHost)
	}
	if tr := NewHTTPClient(Policy{}, time.Second, 50).Transport.(*http.Transport); tr.MaxIdleConnsPerHost != 50 {
		t.Errorf("MaxIdleConnsPerHost = %d for 50 workers, want 50", tr.MaxIdleConnsPerHost)
	}
	if tr.TLSHandshakeTimeout <= 0 || tr.TLSHandshakeTimeout > 7*time.Second {
		t.Errorf("TLSHandshakeTimeout = %v, want within (0, 7s]", tr.TLSHandshakeTimeout)
	}
	if client.Timeout != 7*time.Second {
		t.Errorf("Timeout = %v, want 7s", client.Timeout)
	}
	if d := NewHTTPClient(Policy{}, 0, 0).Timeout; d != defaultTimeout {
		t.Errorf("Timeout for 0 = %v, want %v", d, defaultTimeout)
	}
}
