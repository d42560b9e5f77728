package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/client"
)

// run builds and starts Hitch with the fixture, runs the bare decrypt loop
// while Hitch idles, then loads Hitch, and reports. Every child process,
// temporary directory and PostgreSQL schema it made is gone when it
// returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-card-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()
	rep := newReport(o, launcher.Store())

	h, base, err := startHitch(ctx, launcher, o.debugAddr)
	if err != nil {
		return err
	}
	load, bits, err := prepareHitch(ctx, launcher, base, o)
	if err != nil {
		return err
	}
	rep.KeyBits = bits
	bare, err := newBareDecrypts(bits)
	if err != nil {
		return err
	}

	launcher.Progress("bare loop: %d goroutines decrypting, %v warm-up, %v measured, hitch idle", o.conns, o.warmup, o.duration)
	if rep.Bare, err = measureBare(ctx, bare, h, o); err != nil {
		return err
	}
	launcher.Progress("loading hitch (pid %d): %d connections, %v warm-up, %v measured", h.PID(), o.conns, o.warmup, o.duration)
	if rep.Hitch, err = measureHitch(ctx, load, h, o); err != nil {
		return err
	}
	rep.finish(launcher.WarnLogs())

	rep.writeMarkdown(out)
	if o.jsonPath != "" {
		if err := benchreport.WriteJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	if n := rep.totalErrors(); n > 0 {
		return fmt.Errorf("%d requests or decrypts failed", n)
	}
	return nil
}

// startHitch starts Hitch (with --debug-addr when given) and returns it
// once it is ready.
func startHitch(ctx context.Context, launcher *hitch.Launcher, debugAddr string) (*proc.Child, string, error) {
	var flags []string
	if debugAddr != "" {
		flags = append(flags, "--debug-addr", debugAddr)
	}
	c, base, err := launcher.Start(ctx, "load", flags...)
	if err != nil {
		return nil, "", err
	}
	if _, err := c.WaitReady(ctx, base+"/readyz"); err != nil {
		return nil, "", err
	}
	return c, base, nil
}

// prepareHitch links the fixture's accounts, encrypts the pool of JWEs for
// Hitch's current key and posts one card, which must be accepted. It
// returns the load to run and the key's size.
func prepareHitch(ctx context.Context, launcher *hitch.Launcher, base string, o options) (cardLoad, int, error) {
	api := launcher.API(base)
	launcher.Progress("linking merchants 1 to %d to %s for the card switcher", o.accounts, hitch.ExternalUserID)
	if err := linkCardSwitcher(ctx, api, o.accounts); err != nil {
		return cardLoad{}, 0, err
	}
	jwk, err := client.New(base, hitch.DevClientID, launcher.Secret).JWEKey(ctx)
	if err != nil {
		return cardLoad{}, 0, fmt.Errorf("GET /jwe/key: %w", err)
	}
	bits, err := keyBits(jwk)
	if err != nil {
		return cardLoad{}, 0, err
	}
	jwes, err := encryptPool(jwk, poolSize)
	if err != nil {
		return cardLoad{}, 0, err
	}
	bodies := cardBodies(jwes, o.accounts)
	status, answer, err := api.Do(ctx, http.MethodPost, "/card", bodies[0])
	switch {
	case err != nil:
		return cardLoad{}, 0, fmt.Errorf("POST /card: %w", err)
	case status != http.StatusOK:
		return cardLoad{}, 0, fmt.Errorf("POST /card: status %d: %.500s", status, answer)
	}
	if err := checkCardAnswer(answer); err != nil {
		return cardLoad{}, 0, fmt.Errorf("POST /card: %w", err)
	}
	launcher.Progress("%d JWEs for kid %s (%d-bit key), first accepted: %s", len(jwes), jwk.Kid, bits, bytes.TrimSpace(answer))
	return cardLoad{base: base, user: hitch.DevClientID, pass: launcher.Secret, bodies: bodies, conns: o.conns}, bits, nil
}

// measureBare runs the bare loop, metering the CPU of this process, of
// idle Hitch and of the machine.
func measureBare(ctx context.Context, bare *bareDecrypts, h *proc.Child, o options) (result, error) {
	meter := newPhaseMeter(o.warmup, h)
	stats, err := bare.run(ctx, o.conns, o.warmup, o.duration)
	if err != nil {
		return result{}, err
	}
	return newResult(stats, meter.Stop(), cpuBench), nil
}

// measureHitch loads Hitch, metering its CPU, the load generator's and the
// machine's, and sampling Hitch's resident memory.
func measureHitch(ctx context.Context, load cardLoad, h *proc.Child, o options) (result, error) {
	sampler := proc.SampleRSS(h.PID())
	meter := newPhaseMeter(o.warmup, h)
	stats, err := load.run(ctx, o.warmup, o.duration)
	peak := sampler.Stop()
	if err != nil {
		return result{}, err
	}
	select {
	case <-h.Exited():
		return result{}, h.ExitErr("under load")
	default:
	}
	res := newResult(stats, meter.Stop(), cpuHitch)
	res.PeakRSSBytes = peak
	if res.Drain, err = waitIdle(ctx, proc.OfProcess(h.PID())); err != nil {
		return result{}, err
	}
	return res, nil
}

// After the load Hitch's job workers may still be working through the
// tasks it opened: work its req/s did not pay for. waitIdle watches
// Hitch's CPU in windows of idleWindow until one holds at most idleCPU, or
// drainTimeout has passed.
const (
	idleWindow   = 200 * time.Millisecond
	idleCPU      = 20 * time.Millisecond // what its queue polling takes, and then some
	drainTimeout = time.Minute
)

// waitIdle returns how long, after the load, the process read stayed
// busy, and the CPU it used meanwhile; zeros where its CPU cannot be read.
func waitIdle(ctx context.Context, read proc.CPUReader) (drain, error) {
	first, err := read()
	if err != nil {
		return drain{}, nil
	}
	start, prev := time.Now(), first
	for {
		select {
		case <-ctx.Done():
			return drain{}, ctx.Err()
		case <-time.After(idleWindow):
		}
		now, err := read()
		if err != nil {
			return drain{}, nil
		}
		elapsed := time.Since(start)
		if now-prev <= idleCPU || elapsed >= drainTimeout {
			return drain{Seconds: (elapsed - idleWindow).Seconds(), CPUSeconds: (prev - first).Seconds(),
				TimedOut: now-prev > idleCPU}, nil
		}
		prev = now
	}
}

// newPhaseMeter meters, from the end of the warm-up about to start, the
// CPU of Hitch, of this process and of the machine, in the order newResult
// takes them.
func newPhaseMeter(warmup time.Duration, h *proc.Child) *proc.CPUMeter {
	return proc.MeterCPU(time.Now().Add(warmup), proc.OfProcess(h.PID()), proc.OfProcess(os.Getpid()), proc.MachineCPU)
}
