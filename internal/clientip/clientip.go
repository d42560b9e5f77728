// Package clientip finds the address of the client that sent a request,
// believing X-Forwarded-For only as far as it was written by reverse proxies
// the operator trusts (--trusted-proxies). Per-IP rate limits and the audit
// log key on this address (the limits on its /64 for IPv6: LimitKey).
//
// The walk is rightmost-untrusted: each proxy appends the address it was
// reached from, so X-Forwarded-For is read from the right, past trusted
// proxies, and the first address that is not a trusted proxy is the client.
// Everything left of it was written by the client and is never believed.
// The Forwarded header (RFC 7239) is not read: proxies that send it send
// X-Forwarded-For too, and reading two headers that may disagree would give
// a client two chances to pick its address.
package clientip

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// FromRequest returns the client address of r: the connection's peer
// (RemoteAddr without its port) unless the peer is in trusted, and then the
// rightmost address of X-Forwarded-For that is not in trusted. Every
// X-Forwarded-For header counts, in order, as one list. An entry that is not
// an IP address (with or without a port, IPv6 with or without brackets)
// stops the walk at the last address read, which a trusted proxy wrote. With
// no trusted proxies the header is never read.
func FromRequest(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, ok := parseAddr(host)
	if !ok {
		return host // not IP (a Unix socket, a test): keyed as it is
	}
	if !contains(trusted, peer) {
		return peer.String()
	}
	client := peer
	headers := r.Header.Values("X-Forwarded-For")
	for i := len(headers) - 1; i >= 0; i-- {
		entries := strings.Split(headers[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			entry := strings.TrimSpace(entries[j])
			if entry == "" {
				continue // empty list elements are allowed and ignored (RFC 9110 §5.6.1)
			}
			addr, ok := parseEntry(entry)
			if !ok {
				return client.String()
			}
			if !contains(trusted, addr) {
				return addr.String()
			}
			client = addr
		}
	}
	// Every hop is a trusted address: the client is inside the trusted
	// network, and the leftmost hop is the nearest to it.
	return client.String()
}

// LimitKey is the key of per-IP limits for a client address FromRequest
// returned: an IPv4 address is its own key, an IPv6 address counts as its
// /64 ("2001:db8:1:2::/64"), the block a single subscriber or host is
// usually given, so that rotating addresses inside it does not reset the
// limits. IPv4-mapped IPv6 counts as its IPv4 address. Anything that is not
// an IP address is its own key.
func LimitKey(ip string) string {
	addr, ok := parseAddr(ip)
	if !ok {
		return ip
	}
	if addr.Is4() {
		return addr.String()
	}
	return netip.PrefixFrom(addr, 64).Masked().String()
}

// ParseProxies parses a comma-separated list of CIDRs and single IP
// addresses (the --trusted-proxies setting). An empty list trusts nobody.
func ParseProxies(list string) ([]netip.Prefix, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		p, err := parseProxy(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parseProxy(entry string) (netip.Prefix, error) {
	if entry == "" {
		return netip.Prefix{}, errors.New("empty entry; want CIDRs or IP addresses separated by commas")
	}
	if !strings.Contains(entry, "/") {
		addr, err := netip.ParseAddr(entry)
		if err != nil || addr.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or a CIDR such as 10.0.0.0/8", entry)
		}
		addr = addr.Unmap()
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	p, err := netip.ParsePrefix(entry)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or a CIDR such as 10.0.0.0/8", entry)
	}
	// Addresses are compared unmapped, so an IPv4-mapped prefix becomes
	// the IPv4 prefix it stands for.
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// parseEntry reads one X-Forwarded-For entry: 192.0.2.1, 192.0.2.1:443,
// 2001:db8::1, [2001:db8::1] or [2001:db8::1]:443.
func parseEntry(s string) (netip.Addr, bool) {
	if addr, ok := parseAddr(s); ok {
		return addr, true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return parseAddr(s[1 : len(s)-1])
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return normalize(ap.Addr()), true
	}
	return netip.Addr{}, false
}

func parseAddr(s string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return normalize(addr), true
}

// normalize makes one key of the forms of an address: IPv4-mapped IPv6 is
// its IPv4 address, and an IPv6 zone (meaningful to this host only) is
// dropped.
func normalize(addr netip.Addr) netip.Addr {
	return addr.Unmap().WithZone("")
}

func contains(trusted []netip.Prefix, addr netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
