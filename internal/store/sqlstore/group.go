package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// SingleWriter is a driver whose database takes one write transaction at a
// time (SQLite). InTx then commits concurrent transactions in groups (see
// grouper).
type SingleWriter interface {
	SingleWriter()
}

// maxTxGroup and maxGroupTime bound the calls that commit together and
// the time the first waits for the last, so that one group does not hold
// the writer, or its calls' answers, for long.
const (
	maxTxGroup   = 64
	maxGroupTime = 10 * time.Millisecond
)

// errClosed fails the calls made after the store closed.
var errClosed = errors.New("store: closed")

// grouper commits concurrent InTx calls in groups: one database
// transaction whose commit covers every call of the group, each call inside
// its own savepoint, so that a call that fails rolls back its own writes
// only.
//
// On a single writer, transactions wait for the one connection anyway;
// what a group saves is what a transaction costs beyond its statements:
// BEGIN, and at COMMIT writing each page it changed to the log, once per
// group instead of once per call (calls that insert into the same tables
// change the same pages).
//
// Each call's function runs on the caller's own goroutine, in turn: the
// grouper's goroutine opens the transaction, hands it to each call, waits
// for the call to finish, and commits when all have. A panic or
// runtime.Goexit (t.Fatal) in a function rolls back its savepoint and
// unwinds its own goroutine only. No timer is involved: a call that finds
// the store idle commits at once, alone and without a savepoint.
//
// Statements of a call ignore its context's cancellation: SQLite answers
// an interrupted write by rolling back the whole transaction, which here
// holds other calls' writes. A call whose context ends before its turn
// does not run.
type grouper struct {
	drv Driver
	// maxTime is maxGroupTime, but for tests that need groups whole on a
	// slow machine.
	maxTime time.Duration

	mu      sync.Mutex
	pending []*txCall
	closed  bool
	wake    chan struct{} // holds a token while pending may be non-empty
	quit    chan struct{}
	done    chan struct{}
	// commits counts the transactions committed, for tests.
	commits atomic.Int64
}

// States of a txCall, which the caller and the grouper move it out of
// queued with a compare-and-swap: the caller when its context ends first,
// the grouper when it takes the call into a transaction.
const (
	callQueued int32 = iota
	callTaken
	callAbandoned
)

// txCall is one InTx call waiting for, or holding, its turn.
type txCall struct {
	ctx   context.Context
	state atomic.Int32
	// turn hands the call the group's transaction.
	turn chan groupTurn
	// finished tells the grouper how the call's turn ended.
	finished chan turnEnd
	// result is the commit's outcome for a call whose writes stood, or
	// why a call never had its turn.
	result chan error
}

type groupTurn struct {
	tx  Tx
	drv Driver
	// alone: the group has no other call, so the call runs in the
	// transaction itself, without a savepoint.
	alone bool
}

type turnEnd struct {
	// ok: the call's writes stand, to commit with the group's.
	ok bool
	// deferred is the call's work left for before the commit (ok only).
	deferred []deferred
	// lost: undoing the call's writes failed, so the transaction is lost
	// (SQLite rolled it back, say).
	lost error
}

// newGrouper starts the goroutine that commits drv's groups; close stops it.
func newGrouper(drv Driver) *grouper {
	g := &grouper{drv: drv, maxTime: maxGroupTime, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// close refuses new calls and returns once those already queued have run.
func (g *grouper) close() {
	g.mu.Lock()
	already := g.closed
	g.closed = true
	g.mu.Unlock()
	if !already {
		close(g.quit)
	}
	<-g.done
}

// inTx runs fn in the next group's transaction and returns once that has
// committed, or fn has failed and its writes are undone.
func (g *grouper) inTx(ctx context.Context, fn func(store.Executor) error) error {
	c := &txCall{ctx: ctx, turn: make(chan groupTurn, 1), finished: make(chan turnEnd, 1), result: make(chan error, 1)}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return errClosed
	}
	g.pending = append(g.pending, c)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	select {
	case turn := <-c.turn:
		return c.run(turn, fn)
	case err := <-c.result:
		return err
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return ctx.Err()
		}
	}
	// The grouper took the call before its context ended: it will hand
	// the call its turn, or the reason it never gets one.
	select {
	case turn := <-c.turn:
		return c.run(turn, fn)
	case err := <-c.result:
		return err
	}
}

// run is the call's turn: fn inside a savepoint of the group's transaction
// (or in the transaction itself when alone), then the commit's outcome.
func (c *txCall) run(turn groupTurn, fn func(store.Executor) error) error {
	conn := uncancelable{turn.tx}
	ended := false
	end := func(e turnEnd) {
		ended = true
		c.finished <- e
	}
	// fn panicked or called runtime.Goexit: undo, tell the grouper, and
	// let the unwinding go on. The grouper is told even if undo panics.
	defer func() {
		if ended {
			return
		}
		e := turnEnd{lost: errors.New("store: undoing a call panicked")}
		defer func() { end(e) }()
		e.lost = undo(conn, turn.alone)
	}()
	if !turn.alone {
		if _, err := conn.Exec(context.Background(), "SAVEPOINT hitch_call"); err != nil {
			end(turnEnd{lost: err})
			return fmt.Errorf("store: savepoint: %w", err)
		}
	}
	ex := &TxExecutor{executor: executor{conn: conn, drv: turn.drv}, tx: turn.tx}
	if err := fn(ex); err != nil {
		end(turnEnd{lost: undo(conn, turn.alone)})
		return err
	}
	if !turn.alone {
		if _, err := conn.Exec(context.Background(), "RELEASE hitch_call"); err != nil {
			end(turnEnd{lost: err})
			return fmt.Errorf("store: release savepoint: %w", err)
		}
	}
	end(turnEnd{ok: true, deferred: ex.deferred})
	return <-c.result
}

// undo rolls back a failed call's savepoint. A call alone has none: the
// grouper rolls back the transaction.
func undo(conn Conn, alone bool) error {
	if alone {
		return nil
	}
	if _, err := conn.Exec(context.Background(), "ROLLBACK TO hitch_call"); err != nil {
		return err
	}
	_, err := conn.Exec(context.Background(), "RELEASE hitch_call")
	return err
}

// loop commits groups until close, and the calls queued before it.
func (g *grouper) loop() {
	defer close(g.done)
	for {
		select {
		case <-g.wake:
		case <-g.quit:
		}
		for {
			g.mu.Lock()
			n := min(len(g.pending), maxTxGroup)
			batch := slices.Clone(g.pending[:n])
			rest := copy(g.pending, g.pending[n:])
			clear(g.pending[rest:])
			g.pending = g.pending[:rest]
			g.mu.Unlock()
			if n == 0 {
				break
			}
			g.commit(batch)
		}
		g.mu.Lock()
		stop := g.closed && len(g.pending) == 0 // no call can be queued now
		g.mu.Unlock()
		if stop {
			return
		}
	}
}

// commit runs the calls of batch in one transaction, in turn, and commits.
// If the transaction is lost midway, the calls whose writes it held fail
// and the calls after it run in a new one.
func (g *grouper) commit(batch []*txCall) {
	ctx := context.Background()
	for len(batch) > 0 {
		// A call taken stays for this transaction or the next; a call
		// abandoned has returned already.
		batch = slices.DeleteFunc(batch, func(c *txCall) bool {
			return !c.state.CompareAndSwap(callQueued, callTaken) && c.state.Load() != callTaken
		})
		if len(batch) == 0 {
			return
		}
		tx, err := g.drv.Begin(ctx)
		if err != nil {
			for _, c := range batch {
				c.result <- fmt.Errorf("store: begin: %w", err)
			}
			return
		}
		turn := groupTurn{tx: tx, drv: g.drv, alone: len(batch) == 1}
		var stood []*txCall
		var deferred []deferred
		var lost error
		begun := time.Now()
		i := 0
		// Past maxGroupTime, the calls left go to the next transaction, so
		// that a slow call does not hold back the commit of many.
		for i < len(batch) && lost == nil && (i == 0 || time.Since(begun) < g.maxTime) {
			c := batch[i]
			i++
			if err := c.ctx.Err(); err != nil {
				c.result <- err
				continue
			}
			c.turn <- turn
			e := <-c.finished
			lost = e.lost
			if e.ok {
				stood = append(stood, c)
				deferred = append(deferred, e.deferred...)
			}
		}
		switch {
		case lost != nil:
			err = fmt.Errorf("store: transaction lost to another call in its group: %w", lost)
		case len(stood) > 0:
			if err = flushDeferred(ctx, tx, deferred); err == nil {
				if err = tx.Commit(ctx); err != nil {
					err = fmt.Errorf("store: commit: %w", err)
				} else {
					g.commits.Add(1)
				}
			}
		}
		if err != nil || len(stood) == 0 {
			_ = tx.Rollback(ctx) // after a failed commit, a no-op
		}
		for _, c := range stood {
			c.result <- err
		}
		batch = batch[i:]
	}
}

// uncancelable runs a transaction's statements without their callers'
// cancellation (see grouper).
type uncancelable struct{ Tx }

func (u uncancelable) Exec(_ context.Context, query string, args ...any) (int64, error) {
	return u.Tx.Exec(context.Background(), query, args...)
}

func (u uncancelable) Query(_ context.Context, query string, args ...any) (Rows, error) {
	return u.Tx.Query(context.Background(), query, args...)
}

func (u uncancelable) QueryRow(_ context.Context, query string, args ...any) Row {
	return u.Tx.QueryRow(context.Background(), query, args...)
}
