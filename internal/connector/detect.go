package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/hitchdev/hitch/internal/store"
)

// DetectionInput is what a connector checks a merchant with: the inputs of
// the detection request, in the clear only in memory.
type DetectionInput struct {
	Email          string `json:"email,omitempty"`
	PhoneNumber    string `json:"phone_number,omitempty"`
	ProcessorToken string `json:"processor_token,omitempty"`
}

// DetectParams hand a detection request to connectors.
type DetectParams struct {
	ClientID       string
	ExternalUserID string
	RequestID      string
	Input          DetectionInput
}

// DetectTx queues, in the caller's transaction, one detect unit per
// merchant that a connector (not revoked) declared, each with the inputs
// sealed until its connector claims it. It returns how many it queued:
// none when no connector declared a merchant.
func (w *Work) DetectTx(ctx context.Context, ex store.Executor, p DetectParams) (int, error) {
	// Read in ex, not through the pool: a transaction waiting for a second
	// connection could wait on every other one doing the same.
	list, err := ex.ConnectorList(ctx)
	if err != nil {
		return 0, err
	}
	var merchants []int64
	for _, c := range list {
		if c.RevokedAt == nil {
			merchants = append(merchants, c.MerchantIDs...)
		}
	}
	slices.Sort(merchants)
	merchants = slices.Compact(merchants)
	if len(merchants) == 0 {
		return 0, nil
	}
	plain, err := json.Marshal(p.Input)
	if err != nil {
		return 0, err
	}
	defer clear(plain)
	now := w.cfg.Now().UTC()
	for _, m := range merchants {
		id := newWorkID()
		if _, err := ex.WorkInsert(ctx, &store.Work{ID: id, Kind: store.WorkDetect, ClientID: p.ClientID,
			ExternalUserID: p.ExternalUserID, MerchantID: m, Product: "detect", RequestID: &p.RequestID,
			Status: store.WorkPending, InputSealed: w.cfg.Box.Seal(plain, workPurpose(id)), CreatedAt: now,
			UpdatedAt: now}); err != nil {
			return 0, err
		}
	}
	return len(merchants), nil
}

// openDetection opens a claimed detect unit's inputs.
func (w *Work) openDetection(r *store.Work) (*DetectionInput, error) {
	var in DetectionInput
	if r.InputSealed == nil {
		return &in, nil
	}
	plain, err := w.cfg.Box.Open(r.InputSealed, workPurpose(r.ID))
	if err != nil {
		return nil, fmt.Errorf("connector: open detection input: %w", err)
	}
	defer clear(plain)
	if err := json.Unmarshal(plain, &in); err != nil {
		return nil, fmt.Errorf("connector: detection input: %w", err)
	}
	return &in, nil
}

// Detect outcomes.
const (
	DetectChecked = "succeeded"
	DetectFailed  = "failed"
)

// HeldDetect returns the detect unit the connector holds under lease, ready
// to complete, or why not. Check it before the transaction that completes
// it: it reads through the pool.
func (w *Work) HeldDetect(ctx context.Context, c *Connector, id, lease string) (*store.Work, error) {
	wk, err := w.held(ctx, c, id, lease)
	if err != nil {
		return nil, err
	}
	if wk.Kind != store.WorkDetect || wk.Status != store.WorkClaimed {
		return nil, ErrTransition
	}
	return wk, nil
}

// CompleteDetectTx ends, in the caller's transaction, a detect unit that
// HeldDetect returned: checked (the caller then records what was found,
// detection.Service.RecordTx, which settles the request) or failed with a
// reason. The lease and status are checked again in the update.
func (w *Work) CompleteDetectTx(ctx context.Context, ex store.Executor, id, lease, outcome, reason string) (*store.Work, error) {
	status, why := ending(outcome == DetectChecked, outcome, reason)
	now := w.cfg.Now().UTC()
	wk, err := ex.WorkReport(ctx, &store.WorkReportParams{ID: id, LeaseHash: leaseHash(lease), From: []string{store.WorkClaimed},
		Status: status, Reason: why, LeaseUntil: now, Now: now})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrTransition
	}
	return wk, err
}

// Observe counts a completed unit in the metrics, once its transaction
// committed.
func (w *Work) Observe(wk *store.Work, outcome string) { w.observe(wk, outcome) }

// Get returns a unit of work, to learn what it is; a report on it checks
// the connector's lease.
func (w *Work) Get(ctx context.Context, id string) (*store.Work, error) {
	wk, err := w.cfg.Store.WorkGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrWorkNotFound
	}
	return wk, err
}
