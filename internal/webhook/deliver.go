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
	"github.com/hitchdev/hitch/internal/queue"
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

// Timeout leaves room after the HTTP timeout to read what a delivery sends
// and record the attempt.
func (w *Worker) Timeout(*river.Job[DeliveryArgs]) time.Duration {
	return w.s.cfg.Timeout + queue.RecordSlack
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
// (on 410 Gone) the endpoint disabled. A success's attempt and its job's
// completion commit in one transaction.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	s, a := w.s, job.Args
	ep, err := s.store.WebhookEndpointGet(ctx, a.ClientID, a.EndpointID)
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
	ev, err := s.store.EventGet(ctx, a.ClientID, a.EventID)
	if err != nil {
		return err
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
	// The attempt happened: record it even if the job's time ran out.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queue.RecordSlack)
	defer cancel()
	if o.succeeded() {
		err := s.store.InTx(rctx, func(ex store.Executor) error {
			if err := ex.WebhookAttemptInsert(rctx, attempt); err != nil {
				return err
			}
			if ep.FailingSince != nil { // the success ends the failing streak
				if _, err := ex.WebhookEndpointSetFailing(rctx, a.ClientID, ep.ID, nil); err != nil {
					return err
				}
			}
			err := queue.CompleteTx(rctx, ex, job)
			if errors.Is(err, queue.ErrNotRunning) {
				// River took this run for dead and runs the job again,
				// which delivers again (at least once); this attempt
				// still happened.
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		s.metrics.deliveries.WithLabelValues("succeeded").Inc()
		return nil
	}
	gone := o.status != nil && *o.status == http.StatusGone
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
	clientSecret, err := s.secrets.CurrentSecret(ctx, ep.ClientID)
	if err != nil {
		return nil, fmt.Errorf("webhook: client secret: %w", err)
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
// PostgreSQL refuses in text (the attempt) and in jsonb (the error River
// keeps with the job).
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
