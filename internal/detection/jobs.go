package detection

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/store"
)

// DetectArgs is the job that works a detection request with the
// development simulator. It holds no personal data: the inputs stay
// sealed in the request.
type DetectArgs struct {
	ClientID  string `json:"client_id"`
	RequestID string `json:"request_id"`
}

func (DetectArgs) Kind() string { return "detect" }

// DetectWorker runs DetectArgs jobs.
type DetectWorker struct {
	river.WorkerDefaults[DetectArgs]
	s *Service
}

// AddWorkers registers the detection job's worker.
func (s *Service) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, &DetectWorker{s: s})
}

func (w *DetectWorker) Work(ctx context.Context, job *river.Job[DetectArgs]) error {
	req, err := w.s.store.DetectionRequestGet(ctx, job.Args.ClientID, job.Args.RequestID)
	if errors.Is(err, store.ErrNotFound) || err == nil && req.Status != store.DetectionPending {
		return nil // its developer or user is gone, or a retry after it was done
	} else if err != nil {
		return err
	}
	in, err := w.s.input(req)
	if err != nil {
		return err
	}
	_, err = w.s.Record(ctx, RecordParams{ClientID: req.ClientID, RequestID: req.ID, Found: w.s.simulator.Detect(in)})
	if errors.Is(err, account.ErrUserNotFound) || errors.Is(err, ErrRequestNotFound) {
		return nil
	}
	return err
}
