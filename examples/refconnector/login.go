package refconnector

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// signinState says which page of the sign-in the browser shows: kind is
// account, signin, verify, question or error, and message is the page's
// error line ("" when none).
type signinState struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Question is the security question on the question page.
	Question string `json:"question"`
}

// signinStateJS classifies the page the browser shows after a step of the
// sign-in.
const signinStateJS = `(() => {
  const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent.trim() : ''; };
  const has = (sel) => document.querySelector(sel) !== null;
  if (has('#account')) return {kind: 'account', message: '', question: ''};
  if (has('#verify-form')) return {kind: 'verify', message: text('#verify-error'), question: ''};
  if (has('#question-form')) return {kind: 'question', message: text('#question-error'), question: text('#question-text')};
  if (has('#signin-form')) return {kind: 'signin', message: text('#signin-error'), question: ''};
  if (has('#error-page')) return {kind: 'error', message: text('#error-message'), question: ''};
  return {kind: 'unknown', message: '', question: ''};
})()`

// maxSigninSteps bounds the pages of one sign-in, so that a site that keeps
// asking cannot hold a login forever.
const maxSigninSteps = 10

// Login signs in on the shop's sign-in page with the user's e-mail and
// password, then answers an e-mailed code or a security question through ask.
// A refusal is a *connector.Failure: "credentials" (wrong e-mail or
// password), "account" (locked), "too many attempts" (wrong second factors),
// "otp timeout" (the code expired).
func (s *Site) Login(ctx context.Context, sess *browser.Session, creds connector.UserCredentials, ask connector.Asker) error {
	sess.AddSecret(creds.Password)
	var st signinState
	if err := sess.Run(ctx, "open sign-in", browser.Navigate(s.url("/signin")), evaluate(signinStateJS, &st)); err != nil {
		return err
	}
	switch st.Kind {
	case "account":
		return nil // the session was signed in already
	case "signin":
	default:
		return fmt.Errorf("%w: %s on opening the sign-in page", errNoAccountPage, st.Kind)
	}
	// The page's script fills js_proof once the page has loaded; the form is
	// refused without it. A form the browser would not send (an empty
	// password, a user name that is no e-mail address) cannot be right.
	var valid bool
	err := sess.Run(ctx, "sign in",
		chromedp.SendKeys(chromedp.ID("email"), creds.Username),
		chromedp.SendKeys(chromedp.ID("password"), creds.Password),
		chromedp.Poll[chromedp.Void](`document.querySelector('#js_proof').value !== ''`,
			chromedp.WithPollingInterval(20*time.Millisecond)),
		evaluate(formValidJS("#signin-form"), &valid),
	)
	if err != nil {
		return err
	}
	if !valid {
		return &connector.Failure{Reason: "credentials"}
	}
	if err := sess.Run(ctx, "send sign-in", submit("#signin-submit"), evaluate(signinStateJS, &st)); err != nil {
		return err
	}
	// refused says the last answer was refused: by the shop, which shows an
	// error line, or by the browser, which would not send it.
	refused := false
	for range maxSigninSteps {
		var kind, question, field, form, button string
		switch st.Kind {
		case "account":
			return nil
		case "signin":
			return signinRefusal(st.Message)
		case "verify":
			kind, field, form, button = connector.ChallengeOTP, "code", "#verify-form", "#verify-submit"
		case "question":
			kind, question, field, form, button = connector.ChallengeQuestion, st.Question, "answer", "#question-form", "#question-submit"
		case "error":
			// The shop's answer to a form it did not accept (no script
			// proof, an old form token); its text is the shop's own.
			return fmt.Errorf("refconnector: the shop refused the sign-in form: %q", st.Message)
		default:
			return fmt.Errorf("%w: %s during sign-in", errNoAccountPage, st.Kind)
		}
		answer, err := ask(ctx, kind, question, refused || st.Message != "")
		if err != nil {
			return err
		}
		sess.AddSecret(answer)
		if err := sess.Run(ctx, "type "+field,
			evaluate(`document.getElementById(`+strconv.Quote(field)+`).value = ''`, new(string)),
			chromedp.SendKeys(chromedp.ID(field), strings.TrimSpace(answer)),
			evaluate(formValidJS(form), &valid),
		); err != nil {
			return err
		}
		if refused = !valid; refused {
			continue // the page stays as it is; ask again
		}
		if err := sess.Run(ctx, "send "+field, submit(button), evaluate(signinStateJS, &st)); err != nil {
			return err
		}
	}
	return fmt.Errorf("refconnector: the sign-in took more than %d steps", maxSigninSteps)
}

// formValidJS is whether the browser would send the form sel as filled.
func formValidJS(sel string) string {
	return `document.querySelector(` + strconv.Quote(sel) + `).checkValidity()`
}

// signinRefusal maps the error line of the sign-in page to the public
// service's failure reason.
func signinRefusal(msg string) error {
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "password is incorrect"):
		return &connector.Failure{Reason: "credentials"}
	case strings.Contains(lower, "locked"):
		return &connector.Failure{Reason: "account"}
	case strings.Contains(lower, "too many attempts"):
		return &connector.Failure{Reason: "too many attempts"}
	case strings.Contains(lower, "code has expired"):
		return &connector.Failure{Reason: "otp timeout"}
	case msg == "":
		return fmt.Errorf("%w: the sign-in form again, without a message", errNoAccountPage)
	}
	return fmt.Errorf("refconnector: sign-in refused: %q", msg)
}
