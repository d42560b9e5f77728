package card

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hitchdev/hitch/internal/store"
)

// PendingTasks lists production tasks that wait for a connector, oldest
// first, of one merchant (0 for all).
func (s *Service) PendingTasks(ctx context.Context, merchantID int64, limit int) ([]*store.Task, error) {
	return s.store.TaskListPending(ctx, &store.TaskListPendingParams{MerchantID: merchantID, Limit: limit})
}

// ClaimedCard is the card a connector gets with a claimed task. CVV is
// empty when this node does not hold it (it never leaves memory).
type ClaimedCard struct {
	User       PayloadUser
	Number     string
	Expiration string
	CVV        string
}

// Claim gives a pending task and its card to one connector, once: the
// sealed card is erased as it is handed over. A vault task has no card.
func (s *Service) Claim(ctx context.Context, clientID string, id int64) (*store.Task, *ClaimedCard, error) {
	var task *store.Task
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		task, err = ex.TaskClaim(ctx, clientID, id, s.now())
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.store.TaskGet(ctx, clientID, id); errors.Is(err, store.ErrNotFound) {
			return nil, nil, ErrTaskNotFound
		}
		return nil, nil, ErrTaskClaimed
	}
	if err != nil {
		return nil, nil, err
	}
	if task.CardSealed == nil {
		return task, nil, nil
	}
	plain, err := s.box.Open(task.CardSealed, cardPurpose(clientID, id))
	task.CardSealed = nil
	if err != nil {
		return nil, nil, err
	}
	defer clear(plain)
	var sc sealedCard
	if err := json.Unmarshal(plain, &sc); err != nil {
		return nil, nil, err
	}
	card := &ClaimedCard{User: sc.User, Number: sc.Number, Expiration: sc.Expiration}
	card.CVV, _ = s.cvvs.take(clientID, id)
	return task, card, nil
}

// ParseSummary reads the card a connector reports for a vaulting: a brand,
// the last four digits and an expiration of MM/YYYY.
func ParseSummary(brand, lastFour, expiration string) (*store.CardSummary, bool) {
	if brand == "" || len(brand) > 32 || len(lastFour) != 4 || !allDigits(lastFour) ||
		len(expiration) != 7 || expiration[2] != '/' || !allDigits(expiration[:2]) || !allDigits(expiration[3:]) {
		return nil, false
	}
	month, year := atoi(expiration[:2]), atoi(expiration[3:])
	if month < 1 || month > 12 || year < 2000 {
		return nil, false
	}
	return &store.CardSummary{Brand: brand, LastFour: lastFour, ExpMonth: month, ExpYear: year}, true
}
