// Package health sums up a developer's recent webhook deliveries and
// linked accounts for the dashboard: counts and latency percentiles in time
// buckets, read from the store in bounded windows.
package health

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Window is a span of time ending now, cut into equal buckets.
type Window struct {
	Name string
	Span time.Duration
	Step time.Duration
}

// Windows are the spans the pages offer, by name.
var Windows = []Window{
	{Name: "hour", Span: time.Hour, Step: 5 * time.Minute},
	{Name: "day", Span: 24 * time.Hour, Step: time.Hour},
	{Name: "week", Span: 7 * 24 * time.Hour, Step: 6 * time.Hour},
}

// WindowNamed returns the window of that name, or the day's.
func WindowNamed(name string) Window {
	for _, w := range Windows {
		if w.Name == name {
			return w
		}
	}
	return Windows[1]
}

// Buckets returns the start of each bucket of the window ending at now:
// whole steps, the last holding now.
func (w Window) Buckets(now time.Time) []time.Time {
	n := int(w.Span / w.Step)
	last := now.UTC().Truncate(w.Step)
	out := make([]time.Time, n)
	for i := range n {
		out[i] = last.Add(-time.Duration(n-1-i) * w.Step)
	}
	return out
}

// index is the bucket t falls in, or -1 before the first.
func index(starts []time.Time, step time.Duration, t time.Time) int {
	if len(starts) == 0 || t.Before(starts[0]) {
		return -1
	}
	return min(int(t.Sub(starts[0])/step), len(starts)-1)
}

// MaxRows bounds the rows one window reads of attempts and of login steps:
// past it the figures are those of the newest MaxRows, and say so.
const MaxRows = 20_000

// Latency is the percentiles of a set of attempt durations.
type Latency struct {
	P50, P95, P99 time.Duration
}

// percentiles computes them by nearest rank. They are computed here from
// the window's durations, not in SQL: SQLite has no percentile function,
// and the window holds at most MaxRows durations, so sorting them costs
// less than a round trip.
func percentiles(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	rank := func(p float64) time.Duration {
		return d[max(int(math.Ceil(p/100*float64(len(d))))-1, 0)]
	}
	return Latency{rank(50), rank(95), rank(99)}
}

// DeliveryBucket is one bucket of an endpoint's attempts.
type DeliveryBucket struct {
	Start     time.Time
	Succeeded int
	Failed    int
	Latency
}

// EndpointDelivery is an endpoint's attempts in a window.
type EndpointDelivery struct {
	EndpointID string
	Succeeded  int
	Failed     int
	Latency
	Buckets []DeliveryBucket
}

// SuccessRate is the share of attempts that succeeded, in percent; -1
// when there were none.
func (e *EndpointDelivery) SuccessRate() float64 { return rate(e.Succeeded, e.Failed) }

func rate(ok, failed int) float64 {
	if ok+failed == 0 {
		return -1
	}
	return 100 * float64(ok) / float64(ok+failed)
}

// Delivery is a developer's delivery attempts in a window, per endpoint.
type Delivery struct {
	Window    Window
	Since     time.Time
	Succeeded int
	Failed    int
	// Endpoints holds each endpoint that had attempts, by id.
	Endpoints map[string]*EndpointDelivery
	// All is every endpoint's attempts together.
	All *EndpointDelivery
	// Truncated: the window held more than MaxRows attempts, and the
	// figures are the newest MaxRows'.
	Truncated bool
}

// SuccessRate is the share of all attempts that succeeded, in percent; -1
// when there were none.
func (d *Delivery) SuccessRate() float64 { return rate(d.Succeeded, d.Failed) }

// Deliveries sums up the developer's delivery attempts of the window
// ending at now.
func Deliveries(ctx context.Context, ex store.Executor, clientID string, w Window, now time.Time) (*Delivery, error) {
	starts := w.Buckets(now)
	attempts, err := ex.WebhookAttemptsSince(ctx, clientID, starts[0], MaxRows+1)
	if err != nil {
		return nil, err
	}
	d := &Delivery{Window: w, Since: starts[0], Endpoints: map[string]*EndpointDelivery{}}
	if len(attempts) > MaxRows {
		attempts, d.Truncated = attempts[:MaxRows], true
	}
	newSeries := func(id string) *EndpointDelivery {
		e := &EndpointDelivery{EndpointID: id, Buckets: make([]DeliveryBucket, len(starts))}
		for i, s := range starts {
			e.Buckets[i].Start = s
		}
		return e
	}
	d.All = newSeries("")
	type key struct {
		endpoint string
		bucket   int
	}
	durations := map[key][]time.Duration{}
	for _, a := range attempts {
		i := index(starts, w.Step, a.StartedAt)
		if i < 0 {
			continue
		}
		e := d.Endpoints[a.EndpointID]
		if e == nil {
			e = newSeries(a.EndpointID)
			d.Endpoints[a.EndpointID] = e
		}
		for _, s := range []*EndpointDelivery{e, d.All} {
			if a.Outcome == store.AttemptSucceeded {
				s.Succeeded++
				s.Buckets[i].Succeeded++
			} else {
				s.Failed++
				s.Buckets[i].Failed++
			}
		}
		durations[key{a.EndpointID, i}] = append(durations[key{a.EndpointID, i}], a.Duration)
		durations[key{"", i}] = append(durations[key{"", i}], a.Duration)
		durations[key{a.EndpointID, -1}] = append(durations[key{a.EndpointID, -1}], a.Duration)
		durations[key{"", -1}] = append(durations[key{"", -1}], a.Duration)
	}
	for _, e := range append([]*EndpointDelivery{d.All}, valuesOf(d.Endpoints)...) {
		e.Latency = percentiles(durations[key{e.EndpointID, -1}])
		for i := range e.Buckets {
			e.Buckets[i].Latency = percentiles(durations[key{e.EndpointID, i}])
		}
	}
	d.Succeeded, d.Failed = d.All.Succeeded, d.All.Failed
	return d, nil
}

func valuesOf(m map[string]*EndpointDelivery) []*EndpointDelivery {
	out := make([]*EndpointDelivery, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Login outcomes, as account_logins records them.
const (
	LoginAuthenticated = "authenticated"
	LoginFailed        = "login_failed"
)

// LoginBucket counts one bucket's login steps.
type LoginBucket struct {
	Start time.Time
	// Authenticated and Failed count the logins that ended so; Steps
	// counts every other step (started, a code or questions asked).
	Authenticated, Failed, Steps int
}

// MerchantAccounts is a developer's accounts at one merchant.
type MerchantAccounts struct {
	MerchantID int64
	store.AccountCount
	// Logins counts the window's login steps by status.
	Logins map[string]int
	// CardSucceeded and CardFailed count card switches that ended in the
	// window; CardReasons the failures by reason.
	CardSucceeded, CardFailed int
	CardReasons               map[string]int
	// DetectionHits counts accounts detected here in the window.
	DetectionHits int
}

// Accounts is a developer's linked accounts and what happened to them in a
// window.
type Accounts struct {
	Window Window
	Since  time.Time
	// Merchants are in merchant id order.
	Merchants []*MerchantAccounts
	Logins    []LoginBucket
	// Truncated: the window held more than MaxRows login steps.
	Truncated bool
	// Connected, Disconnected and Unlinked total the merchants'.
	Connected, Disconnected, Unlinked int
	Authenticated, LoginFailed        int
	CardSucceeded, CardFailed         int
	DetectionRequests, DetectionDone  int
	// DetectionHits counts accounts detected, at catalog merchants or not.
	DetectionHits int
}

// AccountHealth sums up the developer's accounts, and the window's logins,
// card switches and detections.
func AccountHealth(ctx context.Context, ex store.Executor, clientID string, w Window, now time.Time) (*Accounts, error) {
	starts := w.Buckets(now)
	a := &Accounts{Window: w, Since: starts[0], Logins: make([]LoginBucket, len(starts))}
	for i, s := range starts {
		a.Logins[i].Start = s
	}
	merchants := map[int64]*MerchantAccounts{}
	merchant := func(id int64) *MerchantAccounts {
		m := merchants[id]
		if m == nil {
			m = &MerchantAccounts{MerchantID: id, Logins: map[string]int{}, CardReasons: map[string]int{}}
			m.AccountCount.MerchantID = id
			merchants[id] = m
		}
		return m
	}
	counts, err := ex.AccountCounts(ctx, clientID)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		merchant(c.MerchantID).AccountCount = *c
		a.Connected += c.Connected
		a.Disconnected += c.Disconnected
		a.Unlinked += c.Unlinked
	}
	logins, err := ex.AccountLoginsSince(ctx, clientID, starts[0], MaxRows+1)
	if err != nil {
		return nil, err
	}
	if len(logins) > MaxRows {
		logins, a.Truncated = logins[:MaxRows], true
	}
	for _, l := range logins {
		i := index(starts, w.Step, l.CreatedAt)
		if i < 0 {
			continue
		}
		merchant(l.MerchantID).Logins[l.Status]++
		switch l.Status {
		case LoginAuthenticated:
			a.Logins[i].Authenticated++
			a.Authenticated++
		case LoginFailed:
			a.Logins[i].Failed++
			a.LoginFailed++
		default:
			a.Logins[i].Steps++
		}
	}
	tasks, err := ex.TaskCounts(ctx, clientID, starts[0])
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.Product != "card_switcher" {
			continue
		}
		m := merchant(t.MerchantID)
		switch t.Status {
		case store.TaskSucceeded:
			m.CardSucceeded += t.Count
			a.CardSucceeded += t.Count
		case store.TaskFailed:
			m.CardFailed += t.Count
			m.CardReasons[t.Reason] += t.Count
			a.CardFailed += t.Count
		}
	}
	det, err := ex.DetectionCounts(ctx, clientID, starts[0])
	if err != nil {
		return nil, err
	}
	a.DetectionRequests, a.DetectionDone = det.Requests, det.Done
	for id, n := range det.Hits {
		a.DetectionHits += n
		if id != 0 {
			merchant(id).DetectionHits += n
		}
	}
	for _, m := range merchants {
		a.Merchants = append(a.Merchants, m)
	}
	slices.SortFunc(a.Merchants, func(x, y *MerchantAccounts) int { return cmp.Compare(x.MerchantID, y.MerchantID) })
	return a, nil
}

// Requests is a developer's API requests in a window, in its buckets.
type Requests struct {
	Window   Window
	Since    time.Time
	Requests int
	Errors   int
	Buckets  []RequestBucket
}

// RequestBucket is the requests of one bucket.
type RequestBucket struct {
	Start time.Time
	store.RequestCount
}

// ErrorRate is the share of requests answered with an error, in percent;
// -1 when there were none.
func (r *Requests) ErrorRate() float64 { return rate(r.Errors, r.Requests-r.Errors) }

// RequestCounts counts the developer's API requests (the request log) of
// the window ending at now: exact counts, not bounded by MaxRows.
func RequestCounts(ctx context.Context, ex store.Executor, clientID string, w Window, now time.Time) (*Requests, error) {
	starts := w.Buckets(now)
	bounds := append(slices.Clone(starts), starts[len(starts)-1].Add(w.Step))
	counts, err := ex.RequestLogCounts(ctx, clientID, bounds)
	if err != nil {
		return nil, err
	}
	r := &Requests{Window: w, Since: starts[0], Buckets: make([]RequestBucket, len(starts))}
	for i, c := range counts {
		r.Buckets[i] = RequestBucket{Start: starts[i], RequestCount: c}
		r.Requests += c.Requests
		r.Errors += c.Errors
	}
	return r, nil
}
