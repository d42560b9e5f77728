package card

import (
	"strconv"
	"sync"
	"time"
)

// cvvHold keeps the CVVs of production tasks in this process's memory
// only, until their connector claims them or their deadline passes: a CVV
// is never written anywhere. A claim served by another node gets the card
// without it (docs/cards.md).
type cvvHold struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]heldCVV
}

type heldCVV struct {
	cvv     string
	expires time.Time
}

func newCVVHold(now func() time.Time) *cvvHold {
	return &cvvHold{now: now, m: map[string]heldCVV{}}
}

func holdKey(clientID string, taskID int64) string {
	return clientID + ":" + strconv.FormatInt(taskID, 10)
}

func (h *cvvHold) put(clientID string, taskID int64, cvv string, expires time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for k, v := range h.m { // few tasks wait at once: sweeping here is enough
		if !v.expires.After(now) {
			delete(h.m, k)
		}
	}
	h.m[holdKey(clientID, taskID)] = heldCVV{cvv: cvv, expires: expires}
}

// take returns the CVV once and forgets it.
func (h *cvvHold) take(clientID string, taskID int64) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := holdKey(clientID, taskID)
	v, ok := h.m[k]
	delete(h.m, k)
	if !ok || !v.expires.After(h.now()) {
		return "", false
	}
	return v.cvv, true
}

func (h *cvvHold) drop(clientID string, taskID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, holdKey(clientID, taskID))
}
