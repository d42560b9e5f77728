// Package refconnector is the reference connector: the connector.Site of the
// Hitch Reference Shop (examples/refshop, catalog merchant 114), written with
// Hitch's connector SDK and driving real Chromium. It signs users in through
// the shop's own pages (whose script computes the sign-in proof), answers
// e-mailed codes and security questions through the SDK's Asker, reads orders
// and subscriptions, switches and reads the default card, and detects
// accounts through the password-reset page.
//
// Connector authors can copy it: every page is driven through the
// connector/browser runtime, so failures name their step, retry what may
// pass, and never show a password, code or card number.
package refconnector

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// MerchantID is the reference shop's id in Hitch's merchant catalog.
const MerchantID = 114

// Site is the connector.Site of the reference shop at BaseURL.
type Site struct{ BaseURL string }

// New returns the site of the reference shop at baseURL, such as
// "http://127.0.0.1:8090".
func New(baseURL string) *Site { return &Site{BaseURL: strings.TrimRight(baseURL, "/")} }

var _ connector.Site = (*Site)(nil)

// MerchantID is the catalog merchant the site is.
func (s *Site) MerchantID() int64 { return MerchantID }

// url is the absolute URL of a path on the shop.
func (s *Site) url(path string) string { return s.BaseURL + path }

// open loads the page at the absolute URL u, which needs a signed-in
// session, and returns connector.ErrLoggedOut when the shop sent the
// browser to sign in instead.
func (s *Site) open(ctx context.Context, sess *browser.Session, step, u string) error {
	var location string
	err := sess.Run(ctx, step, browser.Navigate(u), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var err error
		location, err = chromedp.Location()(ctx, t)
		return err
	}))
	if err != nil {
		return err
	}
	at, err := url.Parse(location)
	if err != nil {
		return fmt.Errorf("refconnector: %s: the browser is at an invalid URL", step)
	}
	if strings.HasPrefix(at.Path, "/signin") {
		return connector.ErrLoggedOut
	}
	return nil
}

// submit clicks the submit button sel and waits until the page it leads to
// has loaded. A 5xx answer is an error but not a transient one: a form post
// is never sent twice.
func submit(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
		if err != nil {
			return fmt.Errorf("submit %s: %w", sel, err)
		}
		if resp != nil && resp.Status >= 500 {
			return fmt.Errorf("submit %s: status %d", sel, resp.Status)
		}
		return nil
	})
}

// evaluate runs the JavaScript expression in the page and decodes its
// value into out.
func evaluate[T any](expression string, out *T, opts ...chromedp.EvaluateOption) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := chromedp.Evaluate[T](expression, opts...)(ctx, t)
		if err != nil {
			return err
		}
		*out = v
		return nil
	})
}

// errNoAccountPage is a page the connector does not know where it expected
// one of the shop's own.
var errNoAccountPage = errors.New("refconnector: the shop showed a page the connector does not know")
