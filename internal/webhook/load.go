package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hitchdev/hitch/internal/store"
)

// loader reads what deliveries send (endpoint and event) in groups: while a
// query runs, the deliveries that arrive wait and are read together by the
// next. No timer is involved: a
// delivery arriving at an idle loader is read at once, so a lone delivery
// is not delayed. Under a backlog, River hands the workers jobs in
// batches, and a batch's reads become a few queries (one on PostgreSQL,
// two on SQLite) instead of one each.
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

// maxGroup bounds the deliveries one query reads.
const maxGroup = 128

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
		// A reader of its own reads for everyone until nothing is
		// waiting, so that no delivery's job (nor its time) is spent
		// reading for others. Its queries are not bound to any
		// delivery's context: other deliveries wait on them.
		l.readers++
		go l.drain(context.WithoutCancel(ctx))
	}
	l.mu.Unlock()
	select {
	case res := <-r.done:
		return res.delivery, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drain reads groups until none is waiting; it holds one of the readers'
// places, which it gives back under l.mu once pending is empty (a request
// added after that starts a reader of its own).
func (l *loader) drain(ctx context.Context) {
	l.mu.Lock()
	for len(l.pending) > 0 {
		n := min(len(l.pending), maxGroup)
		group := l.pending[:n:n]
		l.pending = l.pending[n:]
		l.mu.Unlock()
		l.read(ctx, group)
		l.mu.Lock()
	}
	l.readers--
	l.mu.Unlock()
}

// read answers every request of group. If the group's query fails for any
// reason but its deadline, each is read alone, so that one bad key cannot
// fail the others; a group that timed out fails as one, rather than
// waiting out a deadline per key. A panic fails every request not yet
// answered, so that no worker is left waiting.
func (l *loader) read(ctx context.Context, group []*loadRequest) {
	answered := 0
	defer func() {
		if p := recover(); p != nil {
			for _, r := range group[answered:] {
				select { // answer may have answered some before it panicked
				case r.done <- loadResult{err: fmt.Errorf("webhook: reading the delivery panicked: %v", p)}:
				default:
				}
			}
		}
	}()
	keys := make([]store.WebhookDeliveryKey, len(group))
	for i, r := range group {
		keys[i] = r.key
	}
	found, err := l.get(ctx, keys)
	if err != nil && len(group) > 1 && !errors.Is(err, context.DeadlineExceeded) {
		for _, r := range group {
			found, err := l.get(ctx, []store.WebhookDeliveryKey{r.key})
			answer([]*loadRequest{r}, found, err)
			answered++
		}
		return
	}
	answer(group, found, err)
	answered = len(group)
}

// answer gives each request of group its delivery among found, matched by
// key, or ErrNotFound; or err to each when it is set.
func answer(group []*loadRequest, found []*store.WebhookDelivery, err error) {
	byKey := make(map[store.WebhookDeliveryKey]*store.WebhookDelivery, len(found))
	for _, d := range found {
		byKey[d.Key()] = d
	}
	for _, r := range group {
		d := byKey[r.key]
		switch {
		case err != nil:
			r.done <- loadResult{err: err}
		case d == nil:
			r.done <- loadResult{err: fmt.Errorf("webhook delivery %s to %s: %w", r.key.EventID, r.key.EndpointID, store.ErrNotFound)}
		default:
			r.done <- loadResult{delivery: d}
		}
	}
}

// get reads one group, with a deadline of its own.
func (l *loader) get(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	ctx, cancel := context.WithTimeout(ctx, RecordSlack)
	defer cancel()
	return l.store.WebhookDeliveriesGet(ctx, keys)
}
