package main

import (
	"context"
	"time"

	"github.com/hitchdev/hitch/bench/internal/loadgen"
	"github.com/hitchdev/hitch/bench/internal/proc"
)

// requestTimeout bounds one request of the load generator.
const requestTimeout = 5 * time.Second

// target is one server under load.
type target struct {
	name   string
	store  string // "-" for the bare handler
	method string
	url    string
	body   []byte // the request's JSON body, nil for none
	user   string
	pass   string
	want   []byte // the body every answer must have
	// server is the process answering, sampled for memory.
	server *proc.Child
}

// measureTarget loads t for the warm-up and measured phases while sampling
// its server's resident memory, and meters the CPU time its server (and on
// PostgreSQL the database's processes) use in the measured phase.
func measureTarget(ctx context.Context, t target, o options) (targetResult, error) {
	sampler := proc.SampleRSS(t.server.PID())
	readers := []proc.CPUReader{proc.OfProcess(t.server.PID())}
	if t.store == "postgres" {
		readers = append(readers, proc.OfCommand("postgres"))
	}
	meter := proc.MeterCPU(time.Now().Add(o.warmup), readers...)
	stats, err := loadgen.Run(ctx, loadgen.Load{
		Method: t.method, URL: t.url, Body: t.body, User: t.user, Pass: t.pass, Want: t.want,
		Conns: o.conns, Warmup: o.warmup, Duration: o.duration, RequestTimeout: requestTimeout,
	})
	cpu := meter.Stop()
	peak := sampler.Stop()
	hwm, _ := proc.StatusBytes(t.server.PID(), "VmHWM")
	if err != nil {
		return targetResult{}, err
	}
	select {
	case <-t.server.Exited():
		return targetResult{}, t.server.ExitErr("under load")
	default:
	}
	return newTargetResult(t, o.conns, stats, peak, hwm, cpu), nil
}
