package connector

import (
	"crypto/subtle"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count connectors' work: how each unit ended and how long it was
// held, per connector and kind.
type Metrics struct {
	work    *prometheus.CounterVec
	steps   *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		work: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitch_connector_work_total",
			Help: "Connector work that ended, by connector, kind (login, refresh) and outcome.",
		}, []string{"connector", "kind", "outcome"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitch_connector_login_steps_total",
			Help: "Login steps connectors reported, by connector and step (otp_required, questions_required, wrong_answer, authenticated, failed).",
		}, []string{"connector", "step"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hitch_connector_work_seconds",
			Help:    "Time from a connector's claim to the end of the work, by connector and kind.",
			Buckets: []float64{0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300},
		}, []string{"connector", "kind"}),
	}
}

// Register adds the metrics to reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.work, m.steps, m.seconds} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func equalHash(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
