package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// countingStore is a real store whose delivery reads are counted, and can
// be held at a gate or refused when they read more than one key.
type countingStore struct {
	store.Store
	gate       chan struct{} // when set, the first read waits for it to close
	failGroups error         // when set, what a read of more than one key fails with

	mu     sync.Mutex
	groups []int
}

func (c *countingStore) WebhookDeliveriesGet(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	c.mu.Lock()
	c.groups = append(c.groups, len(keys))
	first := len(c.groups) == 1
	c.mu.Unlock()
	if first && c.gate != nil {
		<-c.gate
	}
	if c.failGroups != nil && len(keys) > 1 {
		return nil, c.failGroups
	}
	return c.Store.WebhookDeliveriesGet(ctx, keys)
}

func (c *countingStore) reads() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.groups...)
}

// seedDeliveries makes a developer with one endpoint and n events, and
// returns the keys of their deliveries.
func seedDeliveries(t *testing.T, st store.Store, n int) []store.WebhookDeliveryKey {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	clientID := "cl_" + uuid.NewString()[:8]
	if _, err := st.ClientInsert(ctx, &store.ClientInsertParams{ID: clientID, Name: "Load", Environment: "development", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.WebhookEndpointInsert(ctx, &store.WebhookEndpoint{ID: "we_load", ClientID: clientID, URL: "https://example.com/h",
		SecretSealed: []byte("sealed"), Status: store.WebhookEndpointEnabled, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	keys := make([]store.WebhookDeliveryKey, n)
	for i := range keys {
		id := uuid.NewString()
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: id, ClientID: clientID, Type: "TEST", Sequence: int64(i + 1),
			Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		keys[i] = store.WebhookDeliveryKey{ClientID: clientID, EndpointID: "we_load", EventID: id}
	}
	return keys
}

// loadAll loads keys[from:] at once, one goroutine each, and checks that
// each got its own event.
func loadAll(t *testing.T, l *loader, keys []store.WebhookDeliveryKey, from int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := from; i < len(keys); i++ {
		k := keys[i]
		wg.Go(func() {
			d, err := l.load(context.Background(), k)
			switch {
			case err != nil:
				t.Errorf("load %d: %v", i, err)
			case d.Key() != k || string(d.Event.Payload) != fmt.Sprintf(`{"n":%d}`, i) || d.Endpoint.URL != "https://example.com/h":
				t.Errorf("load %d: got %+v / %+v", i, d.Endpoint, d.Event)
			}
		})
	}
	wg.Wait()
}

// Deliveries that arrive while a read runs wait and are read together by
// the next, each getting its own endpoint and event.
func TestLoaderGroupsWaitingReads(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		keys := seedDeliveries(t, st, 40)
		cs := &countingStore{Store: st, gate: make(chan struct{})}
		l := newLoader(cs)
		l.maxReaders = 1
		done := make(chan struct{})
		go func() {
			defer close(done)
			loadAll(t, l, keys[:1], 0)
		}()
		waitFor(t, func() bool { return len(cs.reads()) == 1 })
		// Every other delivery arrives while the first read is held.
		go func() {
			defer close(cs.gate)
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				l.mu.Lock()
				n := len(l.pending)
				l.mu.Unlock()
				if n == len(keys)-1 {
					return
				}
			}
			t.Error("the other deliveries did not all wait in 5s")
		}()
		loadAll(t, l, keys, 1)
		<-done
		if got := cs.reads(); fmt.Sprint(got) != "[1 39]" {
			t.Errorf("reads %v, want [1 39]: the first alone, then all that waited", got)
		}
	})
}

// A delivery whose endpoint or event is gone is ErrNotFound, without
// failing the others of its group, and each gets its own endpoint's
// delivery of a shared event; a group the store refuses is read again one
// by one, and one that timed out fails as one.
func TestLoaderMissingAndRefusedGroups(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		keys := seedDeliveries(t, st, 4)
		now := time.Now().UTC()
		if err := st.WebhookEndpointInsert(context.Background(), &store.WebhookEndpoint{ID: "we_two", ClientID: keys[0].ClientID,
			URL: "https://example.com/two", SecretSealed: []byte("s"), Status: store.WebhookEndpointEnabled, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		missing := store.WebhookDeliveryKey{ClientID: keys[0].ClientID, EndpointID: "we_gone", EventID: keys[0].EventID}
		second := store.WebhookDeliveryKey{ClientID: keys[0].ClientID, EndpointID: "we_two", EventID: keys[0].EventID}
		refused := errors.New("refused: a group")
		for _, c := range []struct {
			failGroups error
			reads      string
		}{{nil, "[4]"}, {refused, "[4 1 1 1 1]"}, {context.DeadlineExceeded, "[4]"}} {
			cs := &countingStore{Store: st, failGroups: c.failGroups}
			l := newLoader(cs)
			group := []*loadRequest{{key: keys[0]}, {key: missing}, {key: second}, {key: keys[1]}}
			for _, r := range group {
				r.done = make(chan loadResult, 1)
			}
			l.read(context.Background(), group)
			for i, r := range group {
				res := <-r.done
				switch {
				case c.failGroups == context.DeadlineExceeded:
					if !errors.Is(res.err, context.DeadlineExceeded) {
						t.Errorf("timed-out group: delivery %d: %+v, %v", i, res.delivery, res.err)
					}
				case r.key == missing:
					if !errors.Is(res.err, store.ErrNotFound) {
						t.Errorf("failGroups=%v: missing delivery: %v", c.failGroups, res.err)
					}
				case res.err != nil || res.delivery.Key() != r.key:
					t.Errorf("failGroups=%v: delivery %d: %+v, %v", c.failGroups, i, res.delivery, res.err)
				case r.key == second && res.delivery.Endpoint.URL != "https://example.com/two":
					t.Errorf("the second endpoint's delivery went to %s", res.delivery.Endpoint.URL)
				}
			}
			if got := fmt.Sprint(cs.reads()); got != c.reads {
				t.Errorf("failGroups=%v: reads %v, want %v", c.failGroups, got, c.reads)
			}
		}
	})
}

// A delivery waiting for a read returns when its own context ends.
func TestLoaderWaiterContext(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	keys := seedDeliveries(t, st, 3)
	cs := &countingStore{Store: st, gate: make(chan struct{})}
	l := newLoader(cs)
	l.maxReaders = 1
	go func() { _, _ = l.load(context.Background(), keys[0]) }()
	waitFor(t, func() bool { return len(cs.reads()) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.load(ctx, keys[1]); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("load with an ended context: %v", err)
	}
	close(cs.gate)
	// The reader then reads what waited, the abandoned request too, and
	// the loader serves the next delivery.
	d, err := l.load(context.Background(), keys[2])
	if err != nil || d.Key() != keys[2] {
		t.Fatalf("load after: %+v, %v", d, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
