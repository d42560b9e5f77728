package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/store"
)

// Allowed origins: the web origins a developer lets embed its hosted flow in
// a frame. /link is served with frame-ancestors naming exactly those, and
// Hitch's own origin ('self', for the development demo). docs/link.md has
// the rules and the defaults.

const (
	// MaxAllowedOrigins bounds a developer's list.
	MaxAllowedOrigins = 20
	// maxOriginLength bounds one origin as given, in characters (a 253
	// character host name with its scheme and port fits).
	maxOriginLength = 300
	// maxClientIDLength bounds a client_id looked up for a frame policy;
	// longer ones belong to no developer.
	maxClientIDLength = 255
)

// ErrTooManyOrigins: more than MaxAllowedOrigins distinct origins.
var ErrTooManyOrigins = fmt.Errorf("link: at most %d allowed origins", MaxAllowedOrigins)

// OriginError says why an origin was refused; its message is made for the
// developer.
type OriginError struct {
	Origin string
	Reason string
}

func (e *OriginError) Error() string {
	return strconv.Quote(e.Origin) + " " + e.Reason
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ParseOrigin checks one origin and returns it in canonical form: scheme
// and host in lower case, the scheme's default port left out. An origin is
// https://host[:port] with a DNS name or an IP address, no user, path,
// query, fragment or wildcard; development also takes http for loopback
// hosts (localhost, *.localhost, 127.0.0.0/8). IPv6 addresses are refused:
// a CSP source expression cannot name one.
func ParseOrigin(raw string, development bool) (string, error) {
	bad := func(reason string) (string, error) { return "", &OriginError{Origin: raw, Reason: reason} }
	if raw == "" {
		return bad("is empty")
	}
	if utf8.RuneCountInString(raw) > maxOriginLength || !utf8.ValidString(raw) {
		return bad(fmt.Sprintf("is not an origin of at most %d characters", maxOriginLength))
	}
	if strings.Contains(raw, "*") {
		return bad("has a wildcard: list each origin")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return bad("is not an origin: write scheme://host or scheme://host:port")
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return bad("has more than an origin: leave out any user, path (even a final /), query and fragment")
	}
	// Before lower-casing: strings.ToLower maps some non-ASCII letters
	// (İ, the Kelvin sign) to ASCII ones, which would name another site.
	for _, r := range u.Hostname() {
		if r > 0x7f {
			return bad("has a host name that is not ASCII: write its xn-- (punycode) form")
		}
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" && strings.HasSuffix(u.Host, ":") {
		return bad("has an empty port")
	}
	loopback := false
	if ip, err := netip.ParseAddr(host); err == nil {
		if !ip.Is4() {
			// CSP source expressions have no syntax for IPv6 literals:
			// browsers would ignore the entry.
			return bad("has an IPv6 address, which a frame-ancestors policy cannot name: use a host name")
		}
		host, loopback = ip.String(), ip.IsLoopback()
	} else {
		if len(host) > 253 || strings.Contains(u.Host, "[") {
			return bad("has an invalid host")
		}
		labels := strings.Split(host, ".")
		for _, label := range labels {
			if !dnsLabel.MatchString(label) {
				return bad("has an invalid host name")
			}
		}
		// 127.1 or 0x7f.0.0.1 are not the host names they look like:
		// browsers read them as addresses.
		if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") ||
			strings.HasPrefix(labels[0], "0x") {
			return bad("has a host that is neither a host name nor a dotted IPv4 address")
		}
		loopback = host == "localhost" || strings.HasSuffix(host, ".localhost")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return bad("has an invalid port")
		}
	}
	switch u.Scheme {
	case "https":
		if port == "443" {
			port = ""
		}
	case "http":
		if !development || !loopback {
			return bad("must use https (http is allowed only for localhost, in development)")
		}
		if port == "80" {
			port = ""
		}
	default:
		return bad("must use https")
	}
	hostPort := host
	if port != "" {
		hostPort = net.JoinHostPort(host, port)
	}
	return u.Scheme + "://" + hostPort, nil
}

// ParseOrigins checks a whole list: each origin as ParseOrigin does, then
// duplicates (in canonical form) dropped, and at most MaxAllowedOrigins
// left. It returns the list sorted.
func ParseOrigins(raw []string, development bool) ([]string, error) {
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		o, err := ParseOrigin(r, development)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxAllowedOrigins {
		return nil, ErrTooManyOrigins
	}
	return out, nil
}

// FrameAncestorsFor is the source list of /link's frame-ancestors for a
// developer with these allowed origins: Hitch itself and exactly those.
// With none, the environment's default: any origin in development (as
// before origins could be registered), Hitch itself only in production.
func FrameAncestorsFor(environment string, origins []string) string {
	sources := []string{"'self'"}
	for _, o := range origins {
		// Stored origins passed ParseOrigin; a row edited by hand that
		// could break out of the directive is left out.
		if storedOrigin.MatchString(o) {
			sources = append(sources, o)
		}
	}
	if len(sources) == 1 && len(origins) == 0 && environment == "development" {
		return "*"
	}
	return strings.Join(sources, " ")
}

// storedOrigin is the shape of ParseOrigin's results.
var storedOrigin = regexp.MustCompile(`^https?://[a-z0-9.:-]+$`)

// AllowedOrigins returns the developer's allowed origins, sorted.
func (s *Service) AllowedOrigins(ctx context.Context, clientID string) ([]string, error) {
	return s.cfg.Store.LinkOriginList(ctx, clientID)
}

// SetAllowedOrigins validates origins (ParseOrigins) and makes them the
// developer's whole list (none clears it); also runs in the same
// transaction (the dashboard's audit record). It returns the list stored.
// Errors: *OriginError, ErrTooManyOrigins.
func (s *Service) SetAllowedOrigins(ctx context.Context, clientID string, origins []string,
	also ...func(store.Executor, []string) error) ([]string, error) {
	list, err := ParseOrigins(origins, s.cfg.Environment == "development")
	if err != nil {
		return nil, err
	}
	err = s.cfg.Store.InTx(ctx, func(ex store.Executor) error {
		if err := ex.LinkOriginSet(ctx, clientID, list, s.cfg.Now().UTC()); err != nil {
			return err
		}
		for _, fn := range also {
			if err := fn(ex, list); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.frames.forget(clientID)
	return list, nil
}

// FrameAncestors is the frame-ancestors source list of /link opened for
// the developer clientID (the client_id of the flow's URL): its allowed
// origins, or the environment's default when it has none, is unknown or
// clientID is empty.
//
// A URL without a client_id may be framed by any page: such a page never
// runs a session (link.js loads itself again under the init's client_id,
// or ends on an error), and serving it to every frame keeps embeds of an
// older SDK, which names no developer in the URL, working.
//
// Answers are kept for frameCacheTTL: a change made on another node
// reaches this one's flows within that time.
func (s *Service) FrameAncestors(ctx context.Context, clientID string) (string, error) {
	if clientID == "" {
		return "*", nil
	}
	if len(clientID) > maxClientIDLength || !utf8.ValidString(clientID) ||
		strings.ContainsFunc(clientID, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return FrameAncestorsFor(s.cfg.Environment, nil), nil
	}
	now := s.cfg.Now()
	if v, ok := s.frames.get(clientID, now); ok {
		return v, nil
	}
	origins, err := s.AllowedOrigins(ctx, clientID)
	if err != nil {
		return "", err
	}
	v := FrameAncestorsFor(s.cfg.Environment, origins)
	s.frames.put(clientID, v, now)
	return v, nil
}

// frameCacheTTL is how long a developer's frame-ancestors are kept, and
// frameCacheSize how many developers' (unknown client_ids included, so
// that made-up ones cost a read each TTL at most while the cache holds).
const (
	frameCacheTTL  = 30 * time.Second
	frameCacheSize = 10_000
)

type frameEntry struct {
	value   string
	expires time.Time
}

// frameCache is a small map with expiry, emptied when full.
type frameCache struct {
	mu      sync.Mutex
	entries map[string]frameEntry
}

func newFrameCache() *frameCache { return &frameCache{entries: map[string]frameEntry{}} }

func (c *frameCache) get(clientID string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[clientID]
	if !ok || !now.Before(e.expires) {
		return "", false
	}
	return e.value, true
}

func (c *frameCache) put(clientID, value string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= frameCacheSize {
		clear(c.entries)
	}
	c.entries[clientID] = frameEntry{value: value, expires: now.Add(frameCacheTTL)}
}

func (c *frameCache) forget(clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, clientID)
}

// IsOriginError reports whether err refuses the origins a developer gave
// (an *OriginError or ErrTooManyOrigins), as opposed to a failure.
func IsOriginError(err error) bool {
	var oe *OriginError
	return errors.As(err, &oe) || errors.Is(err, ErrTooManyOrigins)
}

// maxOriginsName keeps the record's target name under the audit log's
// field limit (4 KiB), which would otherwise cut the last origin short
// and make it read as another one.
const maxOriginsName = 4000

// OriginsAuditName names a stored list in its audit record: the origins,
// space-separated, or as many whole ones as fit and how many more; nil for
// none.
func OriginsAuditName(stored []string) *string {
	if len(stored) == 0 {
		return nil
	}
	var b strings.Builder
	for i, o := range stored {
		sep := min(i, 1)
		need := b.Len() + sep + len(o)
		if rest := len(stored) - i - 1; rest > 0 {
			need += len(fmt.Sprintf(" (and %d more)", rest))
		}
		if need > maxOriginsName {
			fmt.Fprintf(&b, " (and %d more)", len(stored)-i)
			break
		}
		if sep > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o)
	}
	name := b.String()
	return &name
}
