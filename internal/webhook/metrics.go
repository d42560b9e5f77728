package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hitchdev/hitch/internal/queue"
)

// Metrics are the delivery metrics of one process.
type Metrics struct {
	deliveries     *prometheus.CounterVec
	attemptSeconds prometheus.Histogram
}

func newMetrics() *Metrics {
	return &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitch_webhook_deliveries_total",
			Help: "Delivery attempts by outcome: succeeded, failed (will retry), deferred (Retry-After), " +
				"exhausted (no retry left), disabled (endpoint disabled), dropped (endpoint removed or disabled before the attempt).",
		}, []string{"outcome"}),
		attemptSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hitch_webhook_attempt_duration_seconds",
			Help:    "Time from sending a delivery to reading its answer.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
}

// Register adds the delivery metrics, and the queue's depth and age read
// from the database at each scrape, to reg.
func (s *Service) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{s.metrics.deliveries, s.metrics.attemptSeconds, &queueCollector{s: s}} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

var (
	queueDepthDesc = prometheus.NewDesc("hitch_webhook_queue_depth",
		fmt.Sprintf("Deliveries waiting or running, across every node sharing the database, counted up to %d.", queue.MaxPending), nil, nil)
	oldestPendingDesc = prometheus.NewDesc("hitch_webhook_oldest_pending_seconds",
		"Age of the oldest delivery not yet finished (0 when none).", nil, nil)
)

// queueCollector reads the queue at scrape time.
type queueCollector struct{ s *Service }

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- oldestPendingDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, oldest, err := c.s.queue.Pending(ctx, JobKind)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(oldestPendingDesc, prometheus.GaugeValue, age)
}
