// Package netguard keeps outbound webhook requests away from internal
// networks (SSRF). URLs are checked when a developer registers them, and the
// dialer checks again at delivery time against the address it actually
// connects to, so a DNS answer that changes in between (DNS rebinding) cannot
// reach a blocked address.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is wrapped by every refusal caused by the destination address.
var ErrBlocked = errors.New("netguard: destination not allowed")

// MaxURLLength is the longest webhook URL CheckURL accepts, in bytes.
const MaxURLLength = 2048

// defaultTimeout is used by NewHTTPClient when given a timeout <= 0.
const defaultTimeout = 30 * time.Second

// Policy says which outbound destinations are allowed.
type Policy struct {
	// AllowPrivate allows http, loopback and private destinations
	// (development). Cloud metadata addresses stay blocked even then.
	// Default false: https only, public addresses only.
	AllowPrivate bool
	// Resolver resolves hosts; nil means net.DefaultResolver. (Tests inject one.)
	Resolver interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}
}

// checkError carries a message fit to show the developer; its cause
// (ErrBlocked, a DNS error, a parse error) is kept for errors.Is and logs but
// left out of the text, so resolver addresses do not leak to clients.
type checkError struct {
	msg   string
	cause error
}

func (e *checkError) Error() string { return e.msg }
func (e *checkError) Unwrap() error { return e.cause }

func invalid(format string, args ...any) error {
	return &checkError{msg: fmt.Sprintf(format, args...)}
}

func blocked(format string, args ...any) error {
	return &checkError{msg: fmt.Sprintf(format, args...), cause: ErrBlocked}
}

// metadataAddrs are cloud instance metadata endpoints. They are blocked in
// every mode: a development build accidentally running in the cloud must not
// hand out instance credentials.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OCI, DigitalOcean
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// metadataHosts are metadata host names, blocked in every mode.
var metadataHosts = []string{"metadata.google.internal"}

// nat64 is the well-known NAT64 prefix (RFC 6052); its last 32 bits are an
// IPv4 address, which is what the gateway will actually reach.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// reservedPrefixes are the special-purpose ranges that netip's Is* methods
// do not cover, with the phrase used in error messages.
var reservedPrefixes = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a reserved (this network) address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved (IETF protocol) address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "a broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/96"), "a reserved (IPv4-compatible) address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 tunnel address"},
}

// classify returns why ip is not a public destination ("a private address"),
// or "" when it is. ip must be valid, unmapped and without a zone.
func classify(ip netip.Addr) string {
	switch {
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsMulticast():
		return "a multicast address"
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		if kind := classify(netip.AddrFrom4([4]byte(b[12:]))); kind != "" {
			return "a NAT64 form of " + kind
		}
		return ""
	}
	for _, r := range reservedPrefixes {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	if !ip.IsGlobalUnicast() {
		return "a reserved address"
	}
	return ""
}

// blockedKind returns why the policy refuses ip, or "" when it may be dialed.
func (p Policy) blockedKind(ip netip.Addr) string {
	if !ip.IsValid() {
		return "an invalid address"
	}
	// Prefix.Contains never matches an address with a zone, and
	// ::ffff:127.0.0.1 must be judged as 127.0.0.1.
	ip = ip.WithZone("").Unmap()
	if slices.Contains(metadataAddrs, ip) {
		return "a cloud metadata address"
	}
	if p.AllowPrivate {
		return ""
	}
	return classify(ip)
}

// CheckIP reports whether ip may be dialed under the policy. A refusal wraps
// ErrBlocked.
func (p Policy) CheckIP(ip netip.Addr) error {
	if kind := p.blockedKind(ip); kind != "" {
		return blocked("netguard: %s is %s", ip, kind)
	}
	return nil
}

// hostNameProblem returns why a host name (lower case, no trailing dot, not
// an IP literal) is refused before any resolution, and whether the refusal is
// about the destination (so wraps ErrBlocked).
func (p Policy) hostNameProblem(name string) (problem string, isBlocked bool) {
	if name == "" {
		return "is empty", false
	}
	labels := strings.Split(name, ".")
	if isNumericLabel(labels[len(labels)-1]) {
		// "127.1", "2130706433" or "0x7f.1": not an IP literal to us, but
		// some resolvers read them as one. No real domain ends in a number.
		return "is not a valid IP address or domain name", false
	}
	if slices.Contains(metadataHosts, name) {
		return "is a cloud metadata host", true
	}
	if p.AllowPrivate {
		return "", false
	}
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return "is a local host name", true
	case strings.HasSuffix(name, ".internal"):
		return "is a private (.internal) name", true
	case strings.HasSuffix(name, ".local"):
		return "is a multicast DNS (.local) name", true
	case len(labels) == 1:
		// A single label is resolved through the search domains of our own
		// network ("redis", "metadata"), never to the developer's server.
		return "is not a fully qualified domain name", true
	}
	return "", false
}

func isNumericLabel(label string) bool {
	if label == "" {
		return false
	}
	if h, ok := strings.CutPrefix(label, "0x"); ok {
		_, err := strconv.ParseUint(h, 16, 64)
		return h == "" || err == nil
	}
	return strings.Trim(label, "0123456789") == ""
}

// CheckURL validates a webhook URL for registration: absolute, scheme https
// (or http when AllowPrivate), a host, no userinfo (credentials in URLs leak
// into logs), no fragment, at most MaxURLLength bytes, any port, and, unless
// AllowPrivate, every address the host resolves to must be public. A host
// that is an IP literal is checked directly. The error message is fit to
// show the developer; refusals caused by the destination wrap ErrBlocked.
func (p Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, invalid("url is required")
	}
	if len(raw) > MaxURLLength {
		return nil, invalid("url must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		msg := "url is not valid"
		if uerr, ok := errors.AsType[*url.Error](err); ok {
			msg += ": " + uerr.Err.Error()
		}
		return nil, &checkError{msg: msg, cause: err}
	}
	if !u.IsAbs() || u.Opaque != "" {
		return nil, invalid("url must be absolute, like https://example.com/webhooks")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowPrivate:
	case p.AllowPrivate:
		return nil, invalid("url must use http or https")
	default:
		return nil, invalid("url must use https")
	}
	if u.User != nil {
		return nil, invalid("url must not contain a user name or password")
	}
	// url.Parse drops an empty fragment ("https://x/#"), so look at the text.
	if strings.Contains(raw, "#") {
		return nil, invalid("url must not contain a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, invalid("url must have a host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, invalid("url port must be between 1 and 65535")
		}
	}

	if ip, err := netip.ParseAddr(host); err == nil {
		if kind := p.blockedKind(ip); kind != "" {
			return nil, blocked("url host is %s (%s)", kind, ip)
		}
		// A zone names an interface of the sender's machine, which no
		// webhook URL needs; its escaping does not survive printing the
		// URL and parsing it again.
		if ip.Zone() != "" {
			return nil, invalid("url host must not name an IPv6 zone")
		}
		return u, nil
	}
	name := normalizeHost(host)
	if problem, isBlocked := p.hostNameProblem(name); problem != "" {
		if isBlocked {
			return nil, blocked("url host %q %s", host, problem)
		}
		return nil, invalid("url host %q %s", host, problem)
	}
	if p.AllowPrivate {
		// Development hosts may not be up yet; the dialer checks at delivery.
		return u, nil
	}
	ips, err := p.lookup(ctx, name)
	if err != nil {
		return nil, &checkError{msg: fmt.Sprintf("url host %q could not be resolved", host), cause: err}
	}
	for _, ip := range ips {
		if kind := p.blockedKind(ip); kind != "" {
			return nil, blocked("url resolves to %s (%s)", kind, ip)
		}
	}
	return u, nil
}

func normalizeHost(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// lookup resolves name to unmapped addresses; an empty answer is an error.
func (p Policy) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	answers, err := r.LookupIPAddr(ctx, name)
	if err != nil {
		return nil, err
	}
	ips := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return nil, fmt.Errorf("netguard: resolver returned malformed address %v", a.IP)
		}
		ips = append(ips, ip.Unmap().WithZone(a.Zone))
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("netguard: no addresses for %s", name)
	}
	return ips, nil
}

// DialContext returns a dial function for http.Transport.DialContext that
// resolves the host itself, refuses the connection if any address it
// resolves to is blocked, and dials only the checked IPs — so a DNS answer
// that changes between CheckURL and delivery (DNS rebinding) cannot reach a
// blocked address. timeout bounds resolution and connection together; zero
// means only ctx bounds them. Dialer.Control re-checks the final socket
// address as a second guard.
func (p Policy) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := p.dialer(timeout)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch network {
		case "tcp", "tcp4", "tcp6":
		default:
			return nil, fmt.Errorf("netguard: dial %s %s: unsupported network", network, addr)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel() // an established connection outlives its dial context
		}
		ips, err := p.dialTargets(ctx, network, host)
		if err != nil {
			return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
		}
		var firstErr error
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return conn, nil
			}
			if firstErr == nil {
				firstErr = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, firstErr
	}
}

// dialer is the net.Dialer behind DialContext.
func (p Policy) dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: p.control}
}

// control runs after the socket is created and before it connects, with the
// literal address being dialed.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blocked("netguard: unexpected dial address %q", address)
	}
	return p.CheckIP(ap.Addr())
}

// dialTargets returns the checked addresses to try for host, in resolver
// order, restricted to the family network asks for.
func (p Policy) dialTargets(ctx context.Context, network, host string) ([]netip.Addr, error) {
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip.Unmap()}
	} else {
		name := normalizeHost(host)
		if problem, isBlocked := p.hostNameProblem(name); problem != "" {
			if isBlocked {
				return nil, blocked("host %q %s", host, problem)
			}
			return nil, fmt.Errorf("host %q %s", host, problem)
		}
		if ips, err = p.lookup(ctx, name); err != nil {
			return nil, err
		}
	}
	// One blocked answer refuses the host outright, as CheckURL does.
	for _, ip := range ips {
		if err := p.CheckIP(ip); err != nil {
			return nil, err
		}
	}
	ips = slices.DeleteFunc(ips, func(ip netip.Addr) bool {
		return (network == "tcp4" && !ip.Is4()) || (network == "tcp6" && !ip.Is6())
	})
	if len(ips) == 0 {
		return nil, fmt.Errorf("no %s address for %s", network, host)
	}
	return ips, nil
}

// NewHTTPClient returns a client for webhook delivery: guarded dialing,
// timeout bounding each request end to end (<= 0 means 30 seconds),
// redirects returned rather than followed (a redirect could point anywhere),
// and no proxy from the environment (a proxy would dial on our behalf,
// bypassing the guard).
//
// maxIdle is how many idle connections per receiver to keep (at least 16):
// as many as deliveries run at once, so a busy receiver is not redialed.
func NewHTTPClient(p Policy, timeout time.Duration, maxIdle int) *http.Client {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext(timeout),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           max(100, maxIdle),
		MaxIdleConnsPerHost:    max(16, maxIdle),
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    min(timeout, 10*time.Second),
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10, // endpoints are untrusted
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
