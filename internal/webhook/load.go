package webhook

import (
	"context"
	"fmt"
	"sync"

	"github.com/hitchdev/hitch/internal/store"
)

// loader reads what deliveries send (endpoint and event) in groups, as the
// recorder writes their attempts: while a query runs, the deliveries that
// arrive wait and are read together by the next. No timer is involved: a
// delivery arriving at an idle loader is read at once, so a lone delivery
// is not delayed. Under a backlog, River hands the workers jobs in
// batches, and a batch's reads become one or two queries instead of one
// round trip each.
type loader struct {
	store      store.Store
	maxReaders int

	mu      sync.Mutex
	pending []*loadRequest
	readers int
}

// loadRequest is one delivery waiting for its read.
type loadRequest struct {
	key  store.WebhookDeliveryKey
	done chan loadResult // buffered: a reader never waits on a waiter
}

type loadResult struct {
	delivery *store.WebhookDelivery
	err      error
}

// maxLoaders is how many group reads run at once: two, so that a delivery
// arriving while one runs does not always wait for it.
const maxLoaders = 2

func newLoader(st store.Store) *loader {
	return &loader{store: st, maxReaders: maxLoaders}
}

// load returns the delivery of key, read in a group with whatever else is
// waiting: store.ErrNotFound when its endpoint or event is missing.
func (l *loader) load(ctx context.Context, key store.WebhookDeliveryKey) (*store.WebhookDelivery, error) {
	r := &loadRequest{key: key, done: make(chan loadResult, 1)}
	l.mu.Lock()
	l.pending = append(l.pending, r)
	if l.readers < l.maxReaders {
		// This caller reads for everyone until nothing is waiting. The
		// queries are not bound to its context: other deliveries wait on
		// them.
		l.readers++
		for len(l.pending) > 0 {
			n := min(len(l.pending), maxGroup)
			group := l.pending[:n:n]
			l.pending = l.pending[n:]
			l.mu.Unlock()
			l.read(context.WithoutCancel(ctx), group)
			l.mu.Lock()
		}
		l.readers--
	}
	l.mu.Unlock()
	select {
	case res := <-r.done:
		return res.delivery, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read answers every request of group. If the group's query fails, each
// is read alone, so that one bad key cannot fail the others. A panic fails
// every request not yet answered, so that no worker is left waiting.
func (l *loader) read(ctx context.Context, group []*loadRequest) {
	answered := 0
	defer func() {
		if p := recover(); p != nil {
			for _, r := range group[answered:] {
				r.done <- loadResult{err: fmt.Errorf("webhook: reading the delivery panicked: %v", p)}
			}
		}
	}()
	if len(group) > 1 {
		keys := make([]store.WebhookDeliveryKey, len(group))
		for i, r := range group {
			keys[i] = r.key
		}
		found, err := l.get(ctx, keys)
		if err == nil {
			byKey := make(map[store.WebhookDeliveryKey]*store.WebhookDelivery, len(found))
			for _, d := range found {
				byKey[d.Key()] = d
			}
			for _, r := range group {
				r.done <- resultOf(byKey[r.key], r.key)
				answered++
			}
			return
		}
	}
	for _, r := range group {
		found, err := l.get(ctx, []store.WebhookDeliveryKey{r.key})
		switch {
		case err != nil:
			r.done <- loadResult{err: err}
		case len(found) == 0:
			r.done <- resultOf(nil, r.key)
		default:
			r.done <- resultOf(found[0], r.key)
		}
		answered++
	}
}

// get runs one query, with a deadline of its own.
func (l *loader) get(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	ctx, cancel := context.WithTimeout(ctx, RecordSlack)
	defer cancel()
	return l.store.WebhookDeliveriesGet(ctx, keys)
}

// resultOf is a found delivery, or ErrNotFound.
func resultOf(d *store.WebhookDelivery, key store.WebhookDeliveryKey) loadResult {
	if d == nil {
		return loadResult{err: fmt.Errorf("webhook delivery %s to %s: %w", key.EventID, key.EndpointID, store.ErrNotFound)}
	}
	return loadResult{delivery: d}
}
