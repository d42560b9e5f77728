package webhook

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/hitchdev/hitch/internal/store"
)

// successRecord is what a delivery that succeeded writes: its attempt
// (naming its job) and, when the endpoint had been failing, the end of
// that streak. River completes the job once the worker returns; if the
// process dies before that, the job runs again and finds the attempt
// (Work).
type successRecord struct {
	// ctx is the worker's context without its cancellation.
	ctx          context.Context
	attempt      *store.WebhookAttempt
	clearFailing bool
	done         chan error
}

// recorder commits the records of successful deliveries in groups: while
// a transaction commits, the records that arrive wait and go together in
// the next. No timer is involved: a record arriving at an idle recorder
// commits at once, so a lone delivery is not delayed.
//
// On SQLite one group commits at a time (there is one writer anyway). On
// PostgreSQL up to maxFlushers commit at once: a group's transaction costs
// round trips and a WAL flush, and with one at a time the workers waited
// on it with the server's CPUs half idle.
type recorder struct {
	store       store.Store
	maxFlushers int

	mu       sync.Mutex
	pending  []*successRecord
	flushers int
}

// newRecorder returns st's recorder.
func newRecorder(st store.Store) *recorder {
	rc := &recorder{store: st, maxFlushers: 1}
	if st.Dialect() == "postgres" {
		rc.maxFlushers = 4
	}
	return rc
}

// maxGroup bounds one transaction, so that a long backlog does not hold
// the SQLite writer for long.
const maxGroup = 128

// record commits r, in a group with whatever else is waiting, and returns
// once it has committed or failed.
func (rc *recorder) record(r *successRecord) error {
	r.done = make(chan error, 1)
	rc.mu.Lock()
	rc.pending = append(rc.pending, r)
	if rc.flushers >= rc.maxFlushers {
		rc.mu.Unlock()
		return <-r.done
	}
	// This caller commits for everyone until nothing is waiting.
	rc.flushers++
	for len(rc.pending) > 0 {
		n := min(len(rc.pending), maxGroup)
		group := rc.pending[:n:n]
		rc.pending = rc.pending[n:]
		rc.mu.Unlock()
		for i, err := range rc.commit(group) {
			group[i].done <- err
		}
		rc.mu.Lock()
	}
	rc.flushers--
	rc.mu.Unlock()
	return <-r.done
}

// commit writes a group in one transaction and returns each record's
// result. If that fails, each record is tried alone, so that one bad
// record (the attempt of an endpoint removed meanwhile, say) cannot fail
// the others. A panic fails every record not yet written, so that no
// worker is left waiting for its result.
func (rc *recorder) commit(group []*successRecord) (errs []error) {
	errs = make([]error, len(group))
	written := 0
	defer func() {
		if p := recover(); p != nil {
			for i := written; i < len(group); i++ {
				errs[i] = fmt.Errorf("webhook: recording the delivery panicked: %v", p)
			}
		}
	}()
	if len(group) > 1 {
		// The records' contexts carry no cancellation (Work strips it):
		// the group has a deadline of its own.
		ctx, cancel := context.WithTimeout(group[0].ctx, RecordSlack)
		err := rc.store.InTx(ctx, func(ex store.Executor) error { return writeSuccesses(ctx, ex, group) })
		cancel()
		if err == nil {
			written = len(group)
			return errs
		}
	}
	for i, r := range group {
		ctx, cancel := context.WithTimeout(r.ctx, RecordSlack)
		errs[i] = rc.store.InTx(ctx, func(ex store.Executor) error { return writeSuccesses(ctx, ex, group[i:i+1]) })
		cancel()
		written = i + 1
	}
	return errs
}

// writeSuccesses writes the records' attempts and ends the failing streaks
// of their endpoints that had one. Endpoint rows go first, each once and
// in one order, so that groups committing at once cannot deadlock on them.
func writeSuccesses(ctx context.Context, ex store.Executor, records []*successRecord) error {
	if err := clearStreaks(ex, records); err != nil {
		return err
	}
	attempts := make([]*store.WebhookAttempt, len(records))
	for i, r := range records {
		attempts[i] = r.attempt
	}
	return ex.WebhookAttemptInsertMany(ctx, attempts)
}

// clearStreaks ends the failing streak of the endpoints of records that
// found theirs failing, each endpoint once, in the order of their ids.
func clearStreaks(ex store.Executor, group []*successRecord) error {
	type endpoint struct{ id, clientID string }
	var eps []endpoint
	for _, r := range group {
		if r.clearFailing {
			eps = append(eps, endpoint{r.attempt.EndpointID, r.attempt.ClientID})
		}
	}
	slices.SortFunc(eps, func(a, b endpoint) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.clientID, b.clientID)) })
	for _, ep := range slices.Compact(eps) {
		if _, err := ex.WebhookEndpointSetFailing(group[0].ctx, ep.clientID, ep.id, nil); err != nil {
			return err
		}
	}
	return nil
}
