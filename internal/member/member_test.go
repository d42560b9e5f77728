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
