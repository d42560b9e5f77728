package webhook

import (
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A failed attempt's retry waits the schedule's next entry, ±10%; past the
// schedule's end, its last entry.
func TestNextRetry(t *testing.T) {
	t.Parallel()
	w := &Worker{s: &Service{cfg: Config{RetrySchedule: []time.Duration{0, 5 * time.Second, 5 * time.Minute}}}}
	for _, tt := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 5 * time.Second},
		{2, 5 * time.Minute},
		{3, 5 * time.Minute},
		{9, 5 * time.Minute},
	} {
		for range 50 {
			before := time.Now()
			next := w.NextRetry(&river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{Attempt: tt.attempt}})
			lo, hi := before.Add(tt.want*9/10), time.Now().Add(tt.want*11/10)
			if next.Before(lo) || next.After(hi) {
				t.Fatalf("after attempt %d: retry in %v, want %v ±10%%", tt.attempt, next.Sub(before), tt.want)
			}
		}
	}
}

// Retry-After is seconds or an HTTP date, capped at an hour; anything else
// is no wait.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"86400", maxRetryAfter},
	} {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
