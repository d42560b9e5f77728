package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Pending is the oldest delivery to an endpoint that has yet to finish.
type Pending struct {
	EventID  string
	QueuedAt time.Time
	// Attempts is how many times it was tried so far.
	Attempts int
}

// pendingStates are those of a delivery that waits to run or is running.
var pendingStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateScheduled,
	rivertype.JobStateRetryable, rivertype.JobStateRunning}

// OldestPending returns the developer's endpoint's oldest unfinished
// delivery, nil when none. It reads River's job list by the endpoint's tag
// (deliveries queued before jobs were tagged are not seen).
func (s *Service) OldestPending(ctx context.Context, clientID, endpointID string) (*Pending, error) {
	if _, err := s.Get(ctx, clientID, endpointID); err != nil {
		return nil, err
	}
	jobs, err := s.queue.Jobs(ctx, river.NewJobListParams().Kinds(JobKind).States(pendingStates...).TagsAll(endpointID).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(1))
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	var args DeliveryArgs
	if err := json.Unmarshal(jobs[0].EncodedArgs, &args); err != nil {
		return nil, fmt.Errorf("webhook: pending delivery: %w", err)
	}
	if args.ClientID != clientID {
		return nil, nil
	}
	return &Pending{EventID: args.EventID, QueuedAt: jobs[0].CreatedAt.UTC(), Attempts: jobs[0].Attempt}, nil
}
