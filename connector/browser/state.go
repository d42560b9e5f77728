package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
)

// stateVersion is the format version SaveState writes and NewSession reads.
const stateVersion = 1

// savedState is the JSON form of a session's cookies. It has its own field
// names so that a cdproto upgrade cannot change what earlier sessions sealed.
type savedState struct {
	Version int           `json:"version"`
	Cookies []savedCookie `json:"cookies"`
}

type savedCookie struct {
	Name         string        `json:"name"`
	Value        string        `json:"value"`
	Domain       string        `json:"domain"` // a leading "." marks a domain cookie; otherwise host-only
	Path         string        `json:"path"`
	Expires      float64       `json:"expires"` // seconds since the Unix epoch; 0 for a session cookie
	HTTPOnly     bool          `json:"httpOnly"`
	Secure       bool          `json:"secure"`
	SameSite     string        `json:"sameSite,omitempty"`
	SourceScheme string        `json:"sourceScheme,omitempty"`
	SourcePort   int64         `json:"sourcePort,omitempty"`
	PartitionKey *partitionKey `json:"partitionKey,omitempty"`
}

type partitionKey struct {
	TopLevelSite         string `json:"topLevelSite"`
	HasCrossSiteAncestor bool   `json:"hasCrossSiteAncestor"`
}

// encodeState serializes cookies as read from the browser.
func encodeState(cookies []*network.Cookie) ([]byte, error) {
	st := savedState{Version: stateVersion, Cookies: make([]savedCookie, 0, len(cookies))}
	for _, c := range cookies {
		sc := savedCookie{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite),
			SourceScheme: string(c.SourceScheme), SourcePort: c.SourcePort,
		}
		if !c.Session && c.Expires > 0 {
			sc.Expires = c.Expires
		}
		if k := c.PartitionKey; k != nil {
			sc.PartitionKey = &partitionKey{TopLevelSite: k.TopLevelSite, HasCrossSiteAncestor: k.HasCrossSiteAncestor}
		}
		st.Cookies = append(st.Cookies, sc)
	}
	return json.Marshal(st)
}

// decodeState turns saved state back into cookies to set. Its errors never
// quote the state, which holds session values.
func decodeState(b []byte) ([]*network.CookieParam, error) {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, errors.New("browser: state is not valid JSON")
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("browser: state version %d, want %d", st.Version, stateVersion)
	}
	params := make([]*network.CookieParam, 0, len(st.Cookies))
	for _, c := range st.Cookies {
		p := &network.CookieParam{
			Name: c.Name, Value: c.Value, Path: c.Path,
			Secure: c.Secure, HTTPOnly: c.HTTPOnly,
			SameSite:     network.CookieSameSite(c.SameSite),
			SourceScheme: network.CookieSourceScheme(c.SourceScheme),
			SourcePort:   c.SourcePort,
		}
		// A domain without a leading dot belongs to a host-only cookie. Given
		// as Domain, Chromium would widen it to the subdomains; given as the
		// URL, the cookie stays host-only.
		if strings.HasPrefix(c.Domain, ".") {
			p.Domain = c.Domain
		} else {
			scheme := "http"
			if c.Secure {
				scheme = "https"
			}
			p.URL = scheme + "://" + c.Domain + c.Path
		}
		if c.Expires > 0 {
			p.Expires = cdp.TimeSinceEpoch(c.Expires)
		}
		if k := c.PartitionKey; k != nil {
			p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: k.TopLevelSite, HasCrossSiteAncestor: k.HasCrossSiteAncestor}
		}
		params = append(params, p)
	}
	return params, nil
}
