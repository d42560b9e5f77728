package member_test

import (
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/member"
)

// storedHash is a hash of "correct horse battery staple" as stored: a hash
// made today must verify after any change to the code.
const storedHash = "$argon2id$v=19$m=19456,t=2,p=1$pSQ4qivHbbv58VLzi1zJjg$andbl5p0C8NsGXmE5BkorHVl8RMAzGhvq8Sas2ip0yI"

func TestPasswords(t *testing.T) {
	t.Parallel()
	if ok, err := member.CheckPassword(storedHash, "correct horse battery staple"); !ok || err != nil {
		t.Fatalf("stored hash: %v %v", ok, err)
	}
	if ok, err := member.CheckPassword(storedHash, "Correct horse battery staple"); ok || err != nil {
		t.Fatalf("wrong password: %v %v", ok, err)
	}
	p := member.NewPassword()
	h := member.HashPassword(p)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || h == member.HashPassword(p) {
		t.Fatalf("hash %q: want the parameters and a fresh salt each time", h)
	}
	if ok, _ := member.CheckPassword(h, p); !ok {
		t.Fatal("a fresh hash does not verify")
	}
	if len(p) != 27 || p == member.NewPassword() {
		t.Fatalf("password %q", p)
	}
	for _, bad := range []string{
		"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		"$argon2id$v=16$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA", // a memory cost that would exhaust the host
		"$argon2id$v=19$m=19456,t=2,p=1$!!$aGFzaA",
	} {
		if ok, err := member.CheckPassword(bad, "x"); ok || err == nil {
			t.Errorf("%q: %v %v, want an error", bad, ok, err)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{" Ada@Example.COM ": "ada@example.com", "a.b+c@x.io": "a.b+c@x.io"} {
		if got, err := member.NormalizeEmail(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "ada", "Ada <ada@example.com>", "a b@example.com", strings.Repeat("a", 250) + "@x.io"} {
		if _, err := member.NormalizeEmail(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
