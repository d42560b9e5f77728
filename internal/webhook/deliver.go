package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"
	"github.com/tidwall/gjson"

	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/whsig"
)

// JobKind is the River kind of a delivery.
const JobKind = "webhook_delivery"

// DeliveryArgs are a delivery job's arguments: ids only, so that no payload
// or secret sits in the job table.
type DeliveryArgs struct {
	ClientID   string `json:"client_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

func (DeliveryArgs) Kind() string { return JobKind }

// UnmarshalJSON reads the three ids without reflection: River decodes a
// job's arguments on every run, and encoding/json's reflective decoding of
// them was 3.7% of a node's CPU while a backlog drained (docs/benchmarks.md,
// session 13). It follows encoding/json where River's stored arguments can
// reach: null leaves a field as it was, names match case-insensitively, the
// last of repeated names wins. encoding/json has checked that data is valid
// JSON before it calls this.
func (a *DeliveryArgs) UnmarshalJSON(data []byte) error {
	r := gjson.ParseBytes(data)
	switch {
	case r.Type == gjson.Null:
		return nil
	case !r.IsObject():
		return fmt.Errorf("webhook: delivery arguments: want an object, got %.40q", data)
	}
	args := *a
	var err error
	r.ForEach(func(k, v gjson.Result) bool {
		var dst *string
		switch {
		case strings.EqualFold(k.Str, "client_id"):
			dst = &args.ClientID
		case strings.EqualFold(k.Str, "event_id"):
			dst = &args.EventID
		case strings.EqualFold(k.Str, "endpoint_id"):
			dst = &args.EndpointID
		default:
			return true
		}
		switch v.Type {
		case gjson.String:
			*dst = v.Str
		case gjson.Null:
		default:
			err = fmt.Errorf("webhook: delivery arguments: %s is not a string", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	*a = args
	return nil
}

const (
	// maxResponseBody is how much of an answer an attempt records.
	maxResponseBody = 1 << 10
	// maxSnoozes bounds how often Retry-After may postpone one delivery
	// without it counting as an attempt.
	maxSnoozes = 5
	// maxRetryAfter caps the wait a receiver may ask for.
	maxRetryAfter = time.Hour
	userAgent     = "Hitch-Webhooks/1"
)

// Worker sends deliveries.
type Worker struct {
	river.WorkerDefaults[DeliveryArgs]
	s *Service
}

// Worker returns the River worker of deliveries.
func (s *Service) Worker() *Worker { return &Worker{s: s} }

// RecordSlack is the time a delivery job has beyond the HTTP timeout, to
// load what it sends and record the attempt.
const RecordSlack = 10 * time.Second

// Timeout leaves room after the HTTP timeout for recording the attempt.
func (w *Worker) Timeout(*river.Job[DeliveryArgs]) time.Duration {
	return w.s.cfg.Timeout + RecordSlack
}

// NextRetry follows the retry schedule, with ±10% jitter so that retries of
// a burst do not arrive together. job.Attempt is the attempt that failed,
// counted from 1, so the schedule's entry at that index is the next wait.
func (w *Worker) NextRetry(job *river.Job[DeliveryArgs]) time.Time {
	sched := w.s.cfg.RetrySchedule
	wait := sched[min(max(job.Attempt, 0), len(sched)-1)]
	if wait > 0 {
		wait += time.Duration((rand.Float64()*0.2 - 0.1) * float64(wait))
	}
	return time.Now().Add(wait)
}

// outcome is what one attempt found.
type outcome struct {
	status     *int
	body       string
	err        string
	retryAfter time.Duration
	duration   time.Duration
}

func (o *outcome) succeeded() bool { return o.status != nil && *o.status >= 200 && *o.status < 300 }

// Work sends the event to the endpoint once, records the attempt, and
// decides what follows: done, a retry, a wait the receiver asked for, or
// (on 410 Gone) the endpoint disabled. A job it completes is left for the
// archiver.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	err := w.work(ctx, job)
	if err == nil {
		w.s.completing()
	}
	return err
}

func (w *Worker) work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	s, a := w.s, job.Args
	// A run after an earlier one delivered: River writes a job's output
	// whatever its state, so a job it rescued as stuck while that run was
	// delivering carries the output when it runs again. The receiver has
	// the event already, and River completes the job with that output.
	if r := gjson.GetBytes(job.Metadata, "output"); job.Attempt > 1 && r.IsObject() {
		return nil
	}
	var ep *store.WebhookEndpoint
	var ev *store.Event
	d, err := s.loader.load(ctx, store.WebhookDeliveryKey{ClientID: a.ClientID, EndpointID: a.EndpointID, EventID: a.EventID})
	if err == nil {
		ep, ev = d.Endpoint, d.Event
	}
	if errors.Is(err, store.ErrNotFound) {
		// Which is missing? The endpoint decides first, as when the two
		// were read apart; then a missing event is EventGet's error.
		ep, err = s.store.WebhookEndpointGet(ctx, a.ClientID, a.EndpointID)
		if err == nil && ep.Status == store.WebhookEndpointEnabled {
			if _, err = s.store.EventGet(ctx, a.ClientID, a.EventID); err == nil {
				err = errors.New("webhook: the endpoint and event were found apart, not together")
			}
			return err
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.metrics.deliveries.WithLabelValues("dropped").Inc()
		return river.JobCancel(errors.New("the endpoint was removed"))
	case err != nil:
		return err
	case ep.Status != store.WebhookEndpointEnabled:
		s.metrics.deliveries.WithLabelValues("dropped").Inc()
		return river.JobCancel(errors.New("the endpoint is disabled"))
	}
	req, err := s.request(ctx, ep, ev)
	if err != nil {
		return err
	}
	started := s.now()
	o := s.send(req)
	s.metrics.attemptSeconds.Observe(o.duration.Seconds())

	attempt := &store.WebhookAttempt{ClientID: a.ClientID, EventID: a.EventID, EndpointID: a.EndpointID,
		Attempt: job.Attempt, JobID: job.ID, StartedAt: started, Duration: o.duration, StatusCode: o.status,
		ResponseBody: o.body, Error: o.err, Outcome: store.AttemptFailed}
	if o.succeeded() {
		attempt.Outcome = store.AttemptSucceeded
	}
	gone := o.status != nil && *o.status == http.StatusGone
	// The attempt happened: record it even if the job's time ran out.
	rctx := context.WithoutCancel(ctx)
	if o.succeeded() {
		if ep.FailingSince != nil {
			// The success ends the endpoint's failing streak, at once, as
			// a failure starts one; its attempt goes with the job as any
			// success's does.
			sctx, cancel := context.WithTimeout(rctx, RecordSlack)
			_, err := s.store.WebhookEndpointSetFailing(sctx, a.ClientID, ep.ID, nil)
			cancel()
			if err != nil {
				return err
			}
		}
		if err := recordSuccess(ctx, attempt); err != nil {
			return err
		}
		s.metrics.deliveries.WithLabelValues("succeeded").Inc()
		return nil
	}
	var disabled bool
	err = s.store.InTx(rctx, func(ex store.Executor) error {
		if err := ex.WebhookAttemptInsert(rctx, attempt); err != nil {
			return err
		}
		if gone {
			disabled, err = s.disable(rctx, ex, ep, "the endpoint answered 410 Gone")
			return err
		}
		since, err := ex.WebhookEndpointSetFailing(rctx, a.ClientID, ep.ID, &started)
		if err != nil {
			return err
		}
		if since != nil && started.Sub(*since) >= s.cfg.DisableAfter {
			disabled, err = s.disable(rctx, ex, ep, fmt.Sprintf("every delivery failed for %s", s.cfg.DisableAfter))
		}
		return err
	})
	if err != nil {
		return err
	}

	switch {
	case gone || disabled:
		s.metrics.deliveries.WithLabelValues("disabled").Inc()
		return river.JobCancel(fmt.Errorf("endpoint disabled: %s", o.summary()))
	case o.retryAfter > 0 && snoozes(job) < maxSnoozes && job.Attempt < job.MaxAttempts:
		s.metrics.deliveries.WithLabelValues("deferred").Inc()
		return river.JobSnooze(o.retryAfter)
	default:
		if job.Attempt >= job.MaxAttempts {
			s.metrics.deliveries.WithLabelValues("exhausted").Inc()
		} else {
			s.metrics.deliveries.WithLabelValues("failed").Inc()
		}
		return errors.New(o.summary())
	}
}

func snoozes(job *river.Job[DeliveryArgs]) int64 {
	return gjson.GetBytes(job.Metadata, "snoozes").Int()
}

func (o *outcome) summary() string {
	if o.status == nil {
		return o.err
	}
	return fmt.Sprintf("status %d", *o.status)
}

// disable turns the endpoint off and tells the developer's other endpoints
// with an ENDPOINT_DISABLED event, in ex.
func (s *Service) disable(ctx context.Context, ex store.Executor, ep *store.WebhookEndpoint, reason string) (bool, error) {
	changed, err := ex.WebhookEndpointDisable(ctx, ep.ClientID, ep.ID, reason, s.now())
	if err != nil || !changed {
		return changed, err
	}
	s.log.Warn("webhook endpoint disabled", "client_id", ep.ClientID, "endpoint_id", ep.ID, "reason", reason)
	_, err = s.events.Record(ctx, ex, event.Params{
		ClientID: ep.ClientID,
		Type:     event.EndpointDisabled,
		Data:     map[string]any{"endpoint_id": ep.ID, "url": ep.URL, "reason": reason},
		At:       s.now(),
	})
	return true, err
}

// request builds the signed POST of an event.
func (s *Service) request(ctx context.Context, ep *store.WebhookEndpoint, ev *store.Event) (*http.Request, error) {
	h, err := s.headers(ctx, ep, ev.ID, ev.Type, ev.Payload)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(ev.Payload))
	if err != nil {
		return nil, fmt.Errorf("webhook: request: %w", err)
	}
	req.Header = h
	return req, nil
}

// headers signs a delivery of body to ep now, with the endpoint's live
// secrets and the developer's API secret.
func (s *Service) headers(ctx context.Context, ep *store.WebhookEndpoint, eventID, eventType string, body []byte) (http.Header, error) {
	now := s.now()
	secrets, err := s.signingSecrets(ep, now)
	if err != nil {
		return nil, err
	}
	clientSecret, err := s.clientSecret(ctx, ep.ClientID)
	if err != nil {
		return nil, err
	}
	return Headers(eventID, eventType, body, now, clientSecret, secrets...)
}

// Headers are the headers of a delivery of body: Standard Webhooks signed
// with each of secrets, and the compatibility Knot-Signature keyed with the
// developer's API secret.
func Headers(eventID, eventType string, body []byte, at time.Time, clientSecret string, secrets ...string) (http.Header, error) {
	h, err := whsig.Headers(eventID, at, body, secrets...)
	if err != nil {
		return nil, fmt.Errorf("webhook: sign: %w", err)
	}
	var sessionID *string
	if r := gjson.GetBytes(body, "session_id"); r.Exists() && r.Type == gjson.String {
		v := r.String()
		sessionID = &v
	}
	const contentType = "application/json"
	h.Set("Content-Type", contentType)
	h.Set("User-Agent", userAgent)
	h.Set("Knot-Signature", whsig.KnotSignature(clientSecret, len(body), contentType, eventType, sessionID))
	h.Set("Encryption-Type", "HMAC-SHA256")
	return h, nil
}

// send makes one attempt. It never follows redirects: a 3xx is a failure.
func (s *Service) send(req *http.Request) *outcome {
	start := time.Now()
	resp, err := s.client.Do(req)
	o := &outcome{}
	if err != nil {
		o.duration = time.Since(start)
		o.err = responseText(deliveryError(err))
		return o
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	// Drain a little more so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	o.duration = time.Since(start)
	o.status = &resp.StatusCode
	o.body = responseText(string(b))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		o.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return o
}

// responseText is what an attempt keeps of a response body or an error
// (which can quote a certificate's names): valid UTF-8 without NUL, which
// PostgreSQL refuses in text and in jsonb (where it would fail the River
// batch completing the job, and every job in it).
func responseText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, string(utf8.RuneError)), "\x00", string(utf8.RuneError))
}

// deliveryError describes a failed request without the URL, which may
// carry a developer's token in its query.
func deliveryError(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "timeout"
	default:
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			return ue.Unwrap().Error()
		}
		return err.Error()
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// retryAfter parses a Retry-After value (seconds or an HTTP date), capped at
// maxRetryAfter; 0 when absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
