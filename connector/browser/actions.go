package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"
)

// transientLoadErrors are the network errors of a page load worth another
// try: the server or the path to it failed for a moment.
var transientLoadErrors = []string{
	"net::ERR_CONNECTION_RESET",
	"net::ERR_CONNECTION_CLOSED",
	"net::ERR_CONNECTION_REFUSED",
	"net::ERR_CONNECTION_TIMED_OUT",
	"net::ERR_TIMED_OUT",
	"net::ERR_EMPTY_RESPONSE",
	"net::ERR_NETWORK_CHANGED",
	"net::ERR_HTTP2_PROTOCOL_ERROR",
}

// Navigate loads url in the session's page and waits for it to load. It fails
// with a Transient error when the document answers 5xx, when a network error
// that may pass (a reset connection) stops the load, or when the load times out.
func Navigate(rawURL string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		resp, err := chromedp.NavigateResponse(rawURL)(ctx, t)
		var le *chromedp.LoadError
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return Transient(fmt.Errorf("navigate %s: %w", redactURL(rawURL), err))
		case errors.As(err, &le) && isTransientLoadError(le.ErrorText):
			return Transient(fmt.Errorf("navigate %s: %w", redactURL(rawURL), err))
		case err != nil:
			return fmt.Errorf("navigate %s: %w", redactURL(rawURL), err)
		case resp != nil && resp.Status >= 500:
			return Transient(fmt.Errorf("navigate %s: status %d", redactURL(rawURL), resp.Status))
		}
		return nil
	})
}

func isTransientLoadError(text string) bool {
	for _, e := range transientLoadErrors {
		if strings.Contains(text, e) {
			return true
		}
	}
	return false
}

// redactURL drops the query, fragment and user info, which can carry tokens.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}

// Text sets out to the trimmed text content of the first element matching the
// CSS selector sel, waiting until one is in the DOM.
func Text(sel string, out *string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		s, err := chromedp.TextContent(chromedp.CSS(sel))(ctx, t)
		if err != nil {
			return err
		}
		*out = strings.TrimSpace(s)
		return nil
	})
}

// Attr sets out to the attribute name of the first element matching the CSS
// selector sel, waiting until one is in the DOM. An element without the
// attribute is an error, so a changed page is not read as an empty value.
func Attr(sel, name string, out *string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		r, err := chromedp.AttributeValue(chromedp.CSS(sel), name)(ctx, t)
		if err != nil {
			return err
		}
		if !r.Exists {
			return fmt.Errorf("attribute %q missing on %q", name, sel)
		}
		*out = r.Value
		return nil
	})
}

// Texts sets out to the trimmed text content of every element matching the
// CSS selector sel, in document order. It does not wait: no match gives an
// empty slice, so wait for the list first when it loads late.
func Texts(sel string, out *[]string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		q, err := json.Marshal(sel)
		if err != nil {
			return err
		}
		v, err := chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+string(q)+`), (e) => e.textContent.trim())`)(ctx, t)
		if err != nil {
			return err
		}
		if v == nil {
			v = []string{}
		}
		*out = v
		return nil
	})
}

// Exists sets out to whether an element matches the CSS selector sel now. It
// does not wait.
func Exists(sel string, out *bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		q, err := json.Marshal(sel)
		if err != nil {
			return err
		}
		v, err := chromedp.Evaluate[bool](`document.querySelector(`+string(q)+`) !== null`)(ctx, t)
		if err != nil {
			return err
		}
		*out = v
		return nil
	})
}
