package member

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

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
		s := NewService(st, audit.NewLog(time.Now), time.Now, Config{MaxConcurrentChecks: 3, CheckWait: 20 * time.Millisecond})
		if cap(s.checks) != 3 {
			t.Fatalf("bound %d, want 3", cap(s.checks))
		}
		for range cap(s.checks) {
			s.checks <- struct{}{}
		}
		begin := time.Now()
		_, err := s.SignIn(ctx, "nobody@example.com", "guess", audit.Origin{})
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
	s := NewService(nil, nil, time.Now, Config{})
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
	s = NewService(nil, nil, time.Now, Config{RefusalFloor: -1})
	s.costs.observe(40 * time.Millisecond)
	if got := s.refusalFloor(); got != 0 {
		t.Fatalf("a negative RefusalFloor: %v", got)
	}
	// Only checks of hashes with today's parameters are measured: others
	// cost what they cost, and say nothing of the members' hashes.
	dummy := s.dummyHash() // measures its hash
	before := s.costs.check()
	if _, err := s.checkNow(otherParams, "guess"); err != nil {
		t.Fatal(err)
	}
	if s.costs.check() != before {
		t.Fatalf("a check of other parameters was measured: %v, then %v", before, s.costs.check())
	}
	if _, err := s.checkNow(dummy, "guess"); err != nil || s.costs.check() == before {
		t.Fatalf("a check of today's parameters was not measured: %v", err)
	}
}

// otherParams is a hash with parameters other than today's (and the key of
// no password).
const otherParams = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5"

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
