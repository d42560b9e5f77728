package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultExecPath is the Chromium that a Pool runs unless Options.ExecPath or
// $HITCH_CHROMIUM names another.
const DefaultExecPath = "/usr/bin/chromium"

// closeTimeout bounds the graceful shutdown of Chromium before it is killed.
const closeTimeout = 5 * time.Second

// Options configure a Pool. Zero values take the documented defaults.
type Options struct {
	ExecPath      string        // Chromium binary; default $HITCH_CHROMIUM, else /usr/bin/chromium
	Contexts      int           // concurrent browser contexts (sessions); default 4
	Headless      bool          // ignored: the browser is headless unless ShowBrowser
	ShowBrowser   bool          // show a window (needs a display); default false
	StepTimeout   time.Duration // per Session.Run attempt; default 30s
	Retries       int           // extra attempts of a step whose error is Transient; default 2, negative for none
	ScreenshotDir string        // where failed steps' screenshots go; "" keeps none
	Log           *slog.Logger  // default discards
	UserAgent     string        // optional User-Agent; default Chromium's own
}

func (o Options) withDefaults() Options {
	if o.ExecPath == "" {
		o.ExecPath = os.Getenv("HITCH_CHROMIUM")
	}
	if o.ExecPath == "" {
		o.ExecPath = DefaultExecPath
	}
	if o.Contexts <= 0 {
		o.Contexts = 4
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = 30 * time.Second
	}
	switch {
	case o.Retries == 0:
		o.Retries = 2
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// Stats is a snapshot of a Pool's use.
type Stats struct {
	InUse    int   // sessions open now
	Capacity int   // Options.Contexts
	Waiting  int   // NewSession calls waiting for a free slot
	Started  int64 // sessions opened since the pool started
	Failed   int64 // failure screenshots written
}

// Pool is one Chromium process shared by isolated contexts.
type Pool struct {
	opts  Options
	log   *slog.Logger
	slots chan struct{} // a token per open session

	mu        sync.Mutex
	proc      *process
	restarted bool // Chromium was restarted once already
	closed    bool

	waiting atomic.Int64
	started atomic.Int64
	failed  atomic.Int64
}

// process is one running Chromium.
type process struct {
	ctx         context.Context // the browser's chromedp context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc // kills Chromium and waits until it is reaped
}

// NewPool starts Chromium. ctx bounds the start only; the browser runs until
// Close.
func NewPool(ctx context.Context, o Options) (*Pool, error) {
	o = o.withDefaults()
	p := &Pool{opts: o, log: o.Log, slots: make(chan struct{}, o.Contexts)}
	proc, err := p.start(ctx)
	if err != nil {
		return nil, err
	}
	p.proc = proc
	return p, nil
}

// start runs a new Chromium process.
func (p *Pool) start(ctx context.Context) (*process, error) {
	if _, err := os.Stat(p.opts.ExecPath); err != nil {
		return nil, fmt.Errorf("browser: chromium: %w", err)
	}
	flags := chromedp.DefaultExecAllocatorOptions[:]
	if p.opts.ShowBrowser {
		flags = append(flags, chromedp.VisibleWindow)
	} else {
		flags = append(flags, chromedp.Flag("headless", "new"))
	}
	flags = append(flags,
		chromedp.ExecPath(p.opts.ExecPath),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 900),
	)
	// Chromium refuses to run as root with its sandbox on.
	if os.Geteuid() == 0 {
		flags = append(flags, chromedp.NoSandbox)
	}
	if p.opts.UserAgent != "" {
		flags = append(flags, chromedp.UserAgent(p.opts.UserAgent))
	}
	// The browser outlives ctx, which bounds the start only.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.WithoutCancel(ctx), flags...)
	bctx, bcancel := chromedp.NewContext(allocCtx)
	stop := context.AfterFunc(ctx, bcancel)
	err := chromedp.Do(bctx)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		bcancel()
		allocCancel()
		return nil, fmt.Errorf("browser: start chromium: %w", err)
	}
	p.log.Info("browser: chromium started", "pid", chromedp.FromContext(bctx).Browser.Process().Pid)
	return &process{ctx: bctx, cancel: bcancel, allocCancel: allocCancel}, nil
}

// stop kills the process and waits until it is reaped; graceful first closes
// Chromium the way it expects.
func (pr *process) stop(graceful bool) error {
	var err error
	if graceful && pr.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(pr.ctx, closeTimeout)
		err = chromedp.Cancel(ctx)
		cancel()
	}
	pr.cancel()
	pr.allocCancel()
	return err
}

// browser returns the running Chromium, restarting it once if it died.
func (p *Pool) browser(ctx context.Context) (*process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("browser: pool is closed")
	}
	if p.proc.ctx.Err() == nil {
		return p.proc, nil
	}
	if p.restarted {
		return nil, errors.New("browser: chromium exited and was already restarted once")
	}
	p.log.Warn("browser: chromium exited; restarting it")
	p.proc.stop(false)
	proc, err := p.start(ctx)
	if err != nil {
		return nil, err
	}
	p.proc, p.restarted = proc, true
	return proc, nil
}

// acquire takes a session slot, waiting while ctx allows.
func (p *Pool) acquire(ctx context.Context) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("browser: waiting for a free session: %w", ctx.Err())
	}
}

func (p *Pool) release() { <-p.slots }

// Close stops Chromium and waits until its processes are gone. Open sessions
// stop working.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if err := p.proc.stop(true); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("browser: close chromium: %w", err)
	}
	return nil
}

// Stats returns a snapshot of the pool's use.
func (p *Pool) Stats() Stats {
	return Stats{
		InUse:    len(p.slots),
		Capacity: cap(p.slots),
		Waiting:  int(p.waiting.Load()),
		Started:  p.started.Load(),
		Failed:   p.failed.Load(),
	}
}
