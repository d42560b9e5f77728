package main

import (
	"math"
	"slices"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// dist is a distribution of latencies in milliseconds.
type dist struct {
	Count int     `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P90Ms float64 `json:"p90_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// distOf is the exact distribution of ds, which it sorts. A few hundred
// samples need no histogram: the percentiles are the samples themselves.
func distOf(ds []time.Duration) dist {
	slices.Sort(ds)
	d := dist{Count: len(ds)}
	if len(ds) == 0 {
		return d
	}
	d.P50Ms = benchreport.Ms(nearestRank(ds, 0.50))
	d.P90Ms = benchreport.Ms(nearestRank(ds, 0.90))
	d.P99Ms = benchreport.Ms(nearestRank(ds, 0.99))
	d.MaxMs = benchreport.Ms(ds[len(ds)-1])
	return d
}

// nearestRank is the q-quantile of sorted, non-empty ds: the smallest
// sample at or above a q fraction of them (of 500, p99 is the 495th, the
// sixth slowest).
func nearestRank(ds []time.Duration, q float64) time.Duration {
	rank := min(max(int(math.Ceil(q*float64(len(ds)))), 1), len(ds))
	return ds[rank-1]
}

// summary joins the requests sent with the deliveries received.
type summary struct {
	Users int `json:"users"`
	// Accepted counts the requests Hitch answered with a 2xx; Failed those
	// it did not, by kind.
	Accepted   int              `json:"accepted"`
	Failed     map[string]int64 `json:"failed,omitempty"`
	FirstError string           `json:"first_error,omitempty"`
	// Received counts accepted users with at least one event; Missing those
	// with none.
	Received int `json:"received"`
	Missing  int `json:"missing"`
	// ExtraEvents counts events beyond the first a user received (another
	// event id), Redeliveries deliveries of an event id already received.
	ExtraEvents  int `json:"extra_events"`
	Redeliveries int `json:"redeliveries"`
	// Strangers counts deliveries for users no request named.
	Strangers int `json:"strangers"`
	// OtherEvents counts deliveries of other event types; Malformed those
	// that were not a usable envelope.
	OtherEvents map[string]int `json:"other_events,omitempty"`
	Malformed   int            `json:"malformed"`

	// Latency runs from just before a user's request was sent to the first
	// arrival of its event: the benchmark's subject.
	Latency dist `json:"latency"`
	// Answer runs from the same moment to the end of POST /detect's answer.
	Answer dist `json:"answer"`
	// ToEvent runs from the send to the envelope's timestamp (whole ms,
	// taken in the job that recorded the detections, before its commit),
	// and EventToReceipt from there to the arrival: together, Latency.
	ToEvent        dist `json:"to_event"`
	EventToReceipt dist `json:"event_to_receipt"`

	// SendSeconds runs from the first send to the last answer, WallSeconds
	// from the first send to the last arrival.
	SendSeconds float64 `json:"send_seconds"`
	SendPerSec  float64 `json:"send_per_sec"`
	WallSeconds float64 `json:"wall_seconds"`
	// Accounts found per event (detected and unsupported).
	AccountsMin  int     `json:"accounts_min"`
	AccountsMean float64 `json:"accounts_mean"`
	AccountsMax  int     `json:"accounts_max"`
}

// summarize joins sends, by user, with what the receiver got.
func summarize(sends []sent, byUser map[string][]delivery, other map[string]int, malformed int) summary {
	s := summary{Users: len(sends), Malformed: malformed}
	if len(other) > 0 {
		s.OtherEvents = other
	}
	var failures loadgen.Failures
	var latency, answer, toEvent, eventToReceipt []time.Duration
	var first, lastAnswer, lastReceipt time.Time
	named := make(map[string]bool, len(sends))
	accounts := 0
	s.AccountsMin = math.MaxInt
	for _, sd := range sends {
		named[sd.user] = true
		if sd.at.IsZero() {
			continue // never sent: interrupted
		}
		if first.IsZero() || sd.at.Before(first) {
			first = sd.at
		}
		lastAnswer = later(lastAnswer, sd.answered)
		if sd.err != nil {
			failures.Add(sd.errKind, sd.err)
			continue
		}
		s.Accepted++
		answer = append(answer, sd.answered.Sub(sd.at))
		ds := byUser[sd.user]
		if len(ds) == 0 {
			s.Missing++
			continue
		}
		s.Received++
		ids := map[string]bool{}
		for _, d := range ds {
			if ids[d.eventID] {
				s.Redeliveries++
			}
			ids[d.eventID] = true
		}
		s.ExtraEvents += len(ids) - 1
		d := ds[0]
		lastReceipt = later(lastReceipt, d.at)
		latency = append(latency, d.at.Sub(sd.at))
		if d.eventMs > 0 {
			ev := time.UnixMilli(d.eventMs)
			toEvent = append(toEvent, ev.Sub(sd.at))
			eventToReceipt = append(eventToReceipt, d.at.Sub(ev))
		}
		accounts += d.accounts
		s.AccountsMin, s.AccountsMax = min(s.AccountsMin, d.accounts), max(s.AccountsMax, d.accounts)
	}
	for u, ds := range byUser {
		if !named[u] {
			s.Strangers += len(ds)
		}
	}
	if failures.Count() > 0 {
		s.Failed, s.FirstError = failures.ByKind, failures.First
	}
	if s.Received > 0 {
		s.AccountsMean = float64(accounts) / float64(s.Received)
		s.WallSeconds = lastReceipt.Sub(first).Seconds()
	} else {
		s.AccountsMin = 0
	}
	if !first.IsZero() {
		s.SendSeconds = lastAnswer.Sub(first).Seconds()
		if s.SendSeconds > 0 {
			s.SendPerSec = float64(s.Accepted+int(failures.Count())) / s.SendSeconds
		}
	}
	s.Latency, s.Answer = distOf(latency), distOf(answer)
	s.ToEvent, s.EventToReceipt = distOf(toEvent), distOf(eventToReceipt)
	return s
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// failures counts what makes the run fail: requests that failed, users
// without their event or with more than one, redeliveries (the receiver
// answers 200 at once, so Hitch had no reason to send again), and
// deliveries nobody asked for or nobody could read. Other event types are
// only noted.
func (s summary) failures() int {
	return s.Users - s.Accepted + s.Missing + s.ExtraEvents + s.Redeliveries + s.Strangers + s.Malformed
}
