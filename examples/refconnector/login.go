package refconnector

import (
	"context"
	"fmt"
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
	// refused without it.
	err := sess.Run(ctx, "sign in",
		chromedp.SendKeys(chromedp.ID("email"), creds.Username),
		chromedp.SendKeys(chromedp.ID("password"), creds.Password),
		chromedp.Poll[chromedp.Void](`document.querySelector('#js_proof').value !== ''`,
			chromedp.WithPollingInterval(20*time.Millisecond)),
		submit("#signin-submit"),
		evaluate(signinStateJS, &st),
	)
	if err != nil {
		return err
	}
	for range maxSigninSteps {
		switch st.Kind {
		case "account":
			return nil
		case "signin":
			return signinRefusal(st.Message)
		case "verify":
			// An error line on the code page means the code just typed was
			// refused.
			code, err := ask(ctx, connector.ChallengeOTP, "", st.Message != "")
			if err != nil {
				return err
			}
			sess.AddSecret(code)
			if err := sess.Run(ctx, "sign-in code",
				chromedp.SendKeys(chromedp.ID("code"), strings.TrimSpace(code)),
				submit("#verify-submit"),
				evaluate(signinStateJS, &st),
			); err != nil {
				return err
			}
		case "question":
			answer, err := ask(ctx, connector.ChallengeQuestion, st.Question, st.Message != "")
			if err != nil {
				return err
			}
			sess.AddSecret(answer)
			if err := sess.Run(ctx, "security answer",
				chromedp.SendKeys(chromedp.ID("answer"), answer),
				submit("#question-submit"),
				evaluate(signinStateJS, &st),
			); err != nil {
				return err
			}
		case "error":
			// The shop's answer to a form it did not accept (no script
			// proof, an old form token); its text is the shop's own.
			return fmt.Errorf("refconnector: the shop refused the sign-in form: %q", st.Message)
		default:
			return fmt.Errorf("%w: %s during sign-in", errNoAccountPage, st.Kind)
		}
	}
	return fmt.Errorf("refconnector: the sign-in took more than %d pages", maxSigninSteps)
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
