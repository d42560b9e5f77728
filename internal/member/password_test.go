package member_test

import (
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/member"
)

// storedHash is a hash of "correct horse battery staple" as stored: a hash
// made today must verify after any change to the code.
const storedHash = "$argon2id$v=19$m=19456,t=2,p=1$pSQ4qivHbbv58VLzi1zJjg$andbl5p0C8NsGXmE5BkorHVl8RMAzGhvq8Sas2ip0yI"

// The production parameters, at their real cost: a fresh hash has them in
// its PHC string and a fresh salt, and verifies; so does a stored one.
func TestPasswords(t *testing.T) {
	t.Parallel()
	a := member.DefaultArgon2id
	if ok, err := a.Check(storedHash, "correct horse battery staple"); !ok || err != nil {
		t.Fatalf("stored hash: %v %v", ok, err)
	}
	if ok, err := a.Check(storedHash, "Correct horse battery staple"); ok || err != nil {
		t.Fatalf("wrong password: %v %v", ok, err)
	}
	p := member.NewPassword()
	h := a.Hash(p)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || h == a.Hash(p) {
		t.Fatalf("hash %q: want the parameters and a fresh salt each time", h)
	}
	parts := strings.Split(h, "$")
	if len(parts) != 6 || len(parts[4]) != 22 || len(parts[5]) != 43 { // 16 and 32 bytes, base64 without padding
		t.Fatalf("hash %q: want a 16-byte salt and a 32-byte key", h)
	}
	if ok, _ := a.Check(h, p); !ok {
		t.Fatal("a fresh hash does not verify")
	}
	if !a.Current(h) || !a.Current(storedHash) {
		t.Fatal("a hash of the default parameters is not current")
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
		if ok, err := a.Check(bad, "x"); ok || err == nil {
			t.Errorf("%q: %v %v, want an error", bad, ok, err)
		}
	}
}

// Hashes carry their cost: one made with other parameters verifies with
// any Argon2id, and is current only for its own.
func TestArgon2idCosts(t *testing.T) {
	t.Parallel()
	cheap := member.Argon2id{Memory: 8, Time: 1, Threads: 1}
	h := cheap.Hash("correct horse battery staple")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=8,t=1,p=1$") {
		t.Fatalf("hash %q", h)
	}
	for _, a := range []member.Argon2id{cheap, member.DefaultArgon2id} {
		if ok, err := a.Check(h, "correct horse battery staple"); !ok || err != nil {
			t.Fatalf("%+v checks a cheap hash: %v %v", a, ok, err)
		}
	}
	if !cheap.Current(h) || member.DefaultArgon2id.Current(h) || cheap.Current(storedHash) {
		t.Fatal("Current does not follow the parameters")
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
