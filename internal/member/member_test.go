package member

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// cheap is an argon2id cost of microseconds, for tests of anything but
// the cost.
var cheap = Argon2id{Memory: 8, Time: 1, Threads: 1}

// testClock is a Clock that moves only when told: by a sleep asked of it,
// which returns at once, and by a timedHasher's work.
type testClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Sleep(_ context.Context, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.t = c.t.Add(d)
}

func (c *testClock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// timedHasher is cheap, but each hash and check takes cost on clock, as if
// it had that cost.
type timedHasher struct {
	Argon2id
	clock *testClock
	cost  time.Duration
}

func (h timedHasher) Hash(password string) string {
	h.clock.advance(h.cost)
	return h.Argon2id.Hash(password)
}

func (h timedHasher) Check(phc, password string) (bool, error) {
	h.clock.advance(h.cost)
	return h.Argon2id.Check(phc, password)
}

// The password checks are bounded by Config.MaxConcurrentChecks (0: 2 ×
// GOMAXPROCS). With every check taken, a sign-in waits CheckWait and is
// answered ErrBusy without a word about the password; with one free, it is
// answered.
func TestSignInBusyWhenEveryCheckIsTaken(t *testing.T) {
	t.Parallel()
	if got := cap(NewService(nil, nil, time.Now, Config{}).checks); got != 2*runtime.GOMAXPROCS(0) {
		t.Fatalf("default bound %d, want 2 × GOMAXPROCS", got)
	}
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		s := NewService(st, audit.NewLog(time.Now), time.Now, Config{MaxConcurrentChecks: 3, CheckWait: 20 * time.Millisecond,
			Hasher: cheap, Clock: &testClock{}})
		if cap(s.checks) != 3 {
			t.Fatalf("bound %d, want 3", cap(s.checks))
		}
		for range cap(s.checks) {
			s.checks <- struct{}{}
		}
		begin := time.Now()
		_, err := s.SignIn(ctx, "nobody@example.com", "guess", audit.Origin{})
		// At least CheckWait: a busy machine may make it longer, never
		// shorter.
		if !errors.Is(err, ErrBusy) || time.Since(begin) < 20*time.Millisecond {
			t.Fatalf("with every check taken: %v after %v", err, time.Since(begin))
		}
		<-s.checks
		if _, err := s.SignIn(ctx, "nobody@example.com", "guess", audit.Origin{}); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("with a check free: %v", err)
		}
	})
}

// A refusal waits for the slowest refused sign-in there can be:
// MaxSignInMembers checks one after another, as measured lately, with half
// as much again, and RefusalFloor for the reads and writes; nothing when
// RefusalFloor is negative.
func TestRefusalFloorCoversTheSlowestRefusal(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	s := NewService(nil, nil, time.Now, Config{Hasher: timedHasher{cheap, clock, 30 * time.Millisecond}, Clock: clock})
	s.costs.observe(40 * time.Millisecond)
	if got, want := s.refusalFloor(), DefaultRefusalFloor+MaxSignInMembers*60*time.Millisecond; got != want {
		t.Fatalf("floor %v, want %v", got, want)
	}
	// A longer measure moves the estimate a quarter of the way, a shorter
	// one an eighth.
	s.costs.observe(80 * time.Millisecond)
	if s.costs.check() != 50*time.Millisecond {
		t.Fatalf("check cost %v, want 50ms", s.costs.check())
	}
	s.costs.observe(10 * time.Millisecond)
	if s.costs.check() != 45*time.Millisecond {
		t.Fatalf("check cost %v, want 45ms", s.costs.check())
	}
	// Only checks of hashes with today's parameters are measured: others
	// cost what they cost, and say nothing of the members' hashes.
	dummy := s.dummyHash() // measures its hash: 30 ms
	before := s.costs.check()
	if _, err := s.checkNow(otherParams, "guess"); err != nil {
		t.Fatal(err)
	}
	if s.costs.check() != before {
		t.Fatalf("a check of other parameters was measured: %v, then %v", before, s.costs.check())
	}
	want := before - (before-30*time.Millisecond)/8
	if _, err := s.checkNow(dummy, "guess"); err != nil || s.costs.check() != want {
		t.Fatalf("a 30 ms check of today's parameters: estimate %v (%v), want %v", s.costs.check(), err, want)
	}
	s = NewService(nil, nil, time.Now, Config{RefusalFloor: -1, Hasher: cheap, Clock: clock})
	s.costs.observe(40 * time.Millisecond)
	if got := s.refusalFloor(); got != 0 {
		t.Fatalf("a negative RefusalFloor: %v", got)
	}
}

// A refusal is padded on Config.Clock from when it got its turn to the
// refusal floor, however long its checks took: here an e-mail too long to
// be anyone's, refused after one check, without a read. With a negative
// RefusalFloor it is not padded.
func TestRefusalIsPaddedOnTheClock(t *testing.T) {
	t.Parallel()
	const cost = 25 * time.Millisecond
	tooLong := strings.Repeat("x", 300) + "@example.com"
	for _, floor := range []time.Duration{0, 150 * time.Millisecond, -1} {
		clock := &testClock{}
		s := NewService(nil, nil, time.Now, Config{RefusalFloor: floor, Hasher: timedHasher{cheap, clock, cost}, Clock: clock})
		s.dummyHash() // the first measure of a check, cost
		begin := clock.Now()
		if _, err := s.SignIn(context.Background(), tooLong, "guess", audit.Origin{}); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("floor %v: %v", floor, err)
		}
		want := s.cfg.RefusalFloor + MaxSignInMembers*cost*3/2
		if floor < 0 {
			want = cost // the check, unpadded
		}
		if took := clock.Now().Sub(begin); took != want {
			t.Errorf("floor %v: the refusal took %v on the clock (slept %v), want %v", floor, took, clock.slept, want)
		}
	}
}

// otherParams is a hash with parameters other than today's (and the key of
// no password).
const otherParams = "$argon2id$v=19$m=16,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5"

func TestValidatePassword(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		password string
		ok       bool
	}{
		{"fourteen chars", false},
		{"fifteen chars!!", true},
		{"ééééééééééééééé", true}, // characters, not bytes
		{"éééééééééééééé", false},
		{NewPassword(), true},
		{string(make([]byte, MaxPasswordBytes)), true},
		{string(make([]byte, MaxPasswordBytes+1)), false},
		{"not text \xff\xfe at all", false},
	} {
		if err := ValidatePassword(c.password); (err == nil) != c.ok {
			t.Errorf("%.20q: %v", c.password, err)
		}
	}
}
