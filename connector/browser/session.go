package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// screenshotTimeout bounds masking and capturing a failed step's page.
const screenshotTimeout = 10 * time.Second

// retryPause is the pause before the first retry of a step; it grows with
// each attempt.
const retryPause = 200 * time.Millisecond

// SessionOptions configure a Session.
type SessionOptions struct {
	State   []byte   // cookies from an earlier Session.SaveState, restored before the first navigation; nil for a fresh login
	Secrets []string // strings masked in screenshots and errors (password, OTP, card number, CVV...)
	Label   string   // for logs and screenshot names, e.g. "refshop/login"; never a secret
}

// Session is one isolated browser context (like an incognito window): its own
// cookies, storage and cache, never shared with another session. One per user
// login. A Session runs one step at a time; do not share it between
// goroutines.
type Session struct {
	pool   *Pool
	proc   *process // the Chromium the session lives in
	label  string
	ctx    context.Context // chromedp context of the session's tab
	cancel context.CancelFunc

	mu      sync.Mutex
	secrets []string

	closeOnce sync.Once
}

// NewSession opens a session in a new browser context, waiting for a free slot
// while ctx allows.
func (p *Pool) NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	s, err := p.newSession(ctx, o)
	if err != nil {
		p.release()
		return nil, err
	}
	p.started.Add(1)
	p.log.Debug("browser: session opened", "label", o.Label)
	return s, nil
}

func (p *Pool) newSession(ctx context.Context, o SessionOptions) (*Session, error) {
	proc, err := p.browser(ctx)
	if err != nil {
		return nil, err
	}
	sctx, scancel := chromedp.NewContext(proc.ctx, chromedp.WithNewBrowserContext())
	// The first Do binds the tab to sctx, so it must not carry ctx's
	// deadline; ctx only bounds the opening.
	stop := context.AfterFunc(ctx, scancel)
	err = chromedp.Do(sctx)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		scancel()
		return nil, fmt.Errorf("browser: open session %s: %w", o.Label, err)
	}
	s := &Session{pool: p, proc: proc, label: o.Label, ctx: sctx, cancel: scancel}
	for _, v := range o.Secrets {
		s.AddSecret(v)
	}
	if o.State != nil {
		if err := s.restoreState(ctx, o.State); err != nil {
			scancel()
			return nil, err
		}
	}
	return s, nil
}

// Context returns the session's chromedp context, for chromedp.Run and
// chromedp.Do with any action. Calls on it have no step timeout and take no
// failure screenshot; prefer Run.
func (s *Session) Context() context.Context { return s.ctx }

// AddSecret adds a string to mask from now on, such as an OTP typed later.
func (s *Session) AddSecret(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, v)
}

func (s *Session) secretList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.secrets...)
}

// stepContext derives from the session's chromedp context a context that
// ends after d, at ctx's deadline if sooner, or when ctx is canceled.
func (s *Session) stepContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	c, cancel := context.WithDeadline(s.ctx, deadline)
	// Only ctx's cancellation is copied: its deadline is c's own already, and
	// copying that too would race it and report "canceled" for a timeout.
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return c, func() {
		stop()
		cancel()
	}
}

// Run runs the actions as the step named step, each attempt bounded by
// Options.StepTimeout and ctx. A Transient error is retried up to
// Options.Retries times. On final failure Run writes a screenshot of the page
// with every secret masked and returns a *StepError naming the step, with
// every secret masked.
func (s *Session) Run(ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) error {
	o := s.pool.opts
	var err error
	attempts := 0
	for {
		attempts++
		sctx, cancel := s.stepContext(ctx, o.StepTimeout)
		err = chromedp.Do(sctx, actions...)
		cancel()
		if err == nil {
			return nil
		}
		if !IsTransient(err) || attempts > o.Retries || ctx.Err() != nil {
			break
		}
		s.pool.log.Warn("browser: step failed; retrying", "label", s.label, "step", step,
			"attempt", attempts, "error", maskSecrets(err.Error(), s.secretList()))
		if pause(ctx, time.Duration(attempts)*retryPause) != nil {
			break
		}
	}
	return s.fail(ctx, step, attempts, err)
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fail builds the StepError of a failed step, after a screenshot if wanted.
func (s *Session) fail(ctx context.Context, step string, attempts int, err error) error {
	secrets := s.secretList()
	e := &StepError{
		Label:     maskSecrets(s.label, secrets),
		Step:      maskSecrets(step, secrets),
		Attempts:  attempts,
		msg:       maskSecrets(err.Error(), secrets),
		cause:     err,
		transient: IsTransient(err),
	}
	// A caller that gave up wants no evidence of a page that did not fail.
	if s.pool.opts.ScreenshotDir != "" && !errors.Is(ctx.Err(), context.Canceled) && s.ctx.Err() == nil {
		path, serr := s.screenshot(e.Label, e.Step, secrets)
		if serr != nil {
			s.pool.log.Warn("browser: no failure screenshot", "label", e.Label, "step", e.Step,
				"error", maskSecrets(serr.Error(), secrets))
		} else {
			e.Screenshot = path
			s.pool.failed.Add(1)
		}
	}
	s.pool.log.Warn("browser: step failed", "label", e.Label, "step", e.Step,
		"attempts", attempts, "screenshot", e.Screenshot, "error", e.msg)
	return e
}

// screenshot masks the page, captures it, puts the page back and writes the
// image. Without masking there is no capture.
func (s *Session) screenshot(label, step string, secrets []string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, screenshotTimeout)
	defer cancel()
	world, err := chromedp.Run(ctx, maskPage(secrets))
	if err != nil {
		return "", fmt.Errorf("mask page: %w", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if uerr := chromedp.Do(ctx, unmaskPage(world)); uerr != nil {
		s.pool.log.Warn("browser: page left masked", "label", label, "error", maskSecrets(uerr.Error(), secrets))
	}
	if err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	return writeScreenshot(s.pool.opts.ScreenshotDir, label, step, png)
}

// writeScreenshot writes png as <time>-<label>-<step>.png in dir, readable by
// the owner only, never overwriting a file.
func writeScreenshot(dir, label, step string, png []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	base := time.Now().UTC().Format("20060102T150405.000Z") + "-" + fileSafe(label) + "-" + fileSafe(step)
	for i := 1; ; i++ {
		name := base + ".png"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.png", base, i)
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(png)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return "", werr
		}
		return path, nil
	}
}

// fileSafe keeps letters, digits, '.', '_' and '-', and replaces the rest
// with '_', so a label such as "refshop/login" stays one file name.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
	if s == "" {
		s = "_"
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// SaveState returns all cookies of the session's browser context as JSON. The
// bytes hold live session values: seal them before storing.
func (s *Session) SaveState(ctx context.Context) ([]byte, error) {
	c, cancel := s.stepContext(ctx, s.pool.opts.StepTimeout)
	defer cancel()
	res, err := chromedp.CallBrowser(c, storage.GetCookies, storage.GetCookiesParams{
		BrowserContextID: chromedp.FromContext(s.ctx).BrowserContextID,
	})
	if err != nil {
		return nil, fmt.Errorf("browser %s: save state: %s", s.label, maskSecrets(err.Error(), s.secretList()))
	}
	return encodeState(res.Cookies)
}

// restoreState sets the cookies of state in the session's browser context.
func (s *Session) restoreState(ctx context.Context, state []byte) error {
	cookies, err := decodeState(state)
	if err != nil {
		return err
	}
	c, cancel := s.stepContext(ctx, s.pool.opts.StepTimeout)
	defer cancel()
	_, err = chromedp.CallBrowser(c, storage.SetCookies, storage.SetCookiesParams{
		Cookies:          cookies,
		BrowserContextID: chromedp.FromContext(s.ctx).BrowserContextID,
	})
	if err != nil {
		return fmt.Errorf("browser %s: restore state: %s", s.label, maskSecrets(err.Error(), s.secretList()))
	}
	return nil
}

// Close disposes of the session's browser context and frees its slot. It is
// safe to call more than once.
func (s *Session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		err = chromedp.Cancel(s.ctx)
		s.cancel()
		s.pool.release()
		s.pool.log.Debug("browser: session closed", "label", s.label)
	})
	// A browser context cannot outlive its Chromium, so once Chromium is
	// gone there is nothing left to dispose of.
	if err != nil && !errors.Is(err, context.Canceled) && s.proc.ctx.Err() == nil {
		return fmt.Errorf("browser %s: close session: %w", s.label, err)
	}
	return nil
}
