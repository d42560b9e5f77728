package refconnector

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// forgotResult is the answer of the password-reset page.
type forgotResult struct {
	Exists    string `json:"exists"`     // "true" or "false"
	CreatedAt string `json:"created_at"` // YYYY-MM-DD when it exists
}

const forgotResultJS = `(() => {
  const r = document.querySelector('#forgot-result');
  return r ? {exists: r.getAttribute('data-account-exists') || '', created_at: r.getAttribute('data-created-at') || ''}
           : {exists: '', created_at: ''};
})()`

// Detect asks the shop's password-reset page whether an account has the
// request's e-mail (else its phone number). It returns the account, signed
// in with a password, with the day it was created; nil when there is none,
// or when the request has neither (a processor token says nothing here).
func (s *Site) Detect(ctx context.Context, sess *browser.Session, r *connector.DetectionRequest) (*connector.DetectedAccount, error) {
	var id, source string
	switch {
	case r != nil && r.Email != nil && strings.TrimSpace(*r.Email) != "":
		id, source = strings.TrimSpace(*r.Email), "email"
	case r != nil && r.PhoneNumber != nil && strings.TrimSpace(*r.PhoneNumber) != "":
		id, source = strings.TrimSpace(*r.PhoneNumber), "phone"
	default:
		return nil, nil
	}
	var res forgotResult
	err := sess.Run(ctx, "ask for a password reset",
		browser.Navigate(s.url("/signin/forgot")),
		chromedp.SendKeys(chromedp.ID("identifier"), id),
		submit("#forgot-submit"),
		evaluate(forgotResultJS, &res),
	)
	if err != nil {
		return nil, err
	}
	switch res.Exists {
	case "false":
		return nil, nil
	case "true":
	default:
		return nil, fmt.Errorf("%w: no answer on the password-reset page", errNoAccountPage)
	}
	acct := &connector.DetectedAccount{MerchantID: MerchantID, Source: source, LoginMethod: "PASSWORD"}
	if acct.AccountCreatedAt, err = day(res.CreatedAt); err != nil {
		return nil, fmt.Errorf("refconnector: account creation %w", err)
	}
	return acct, nil
}
