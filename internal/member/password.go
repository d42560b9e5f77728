package member

import (
	"github.com/hitchdev/hitch/internal/field"

	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Hasher hashes passwords and checks them against their hashes. Argon2id
// is the one Hitch uses; tests give it a cheaper cost, or wrap it to hold
// a check while they look at what waits for it.
type Hasher interface {
	// Hash returns the PHC string of password, with a fresh salt.
	Hash(password string) string
	// Check reports whether password matches the PHC string, in time that
	// does not depend on where they differ; an error if the string is not
	// a hash the Hasher reads.
	Check(phc, password string) (bool, error)
	// Current reports whether the PHC string has the parameters Hash uses,
	// and so costs what a check of a new hash costs.
	Current(phc string) bool
}

// Argon2id is an argon2id cost. Stored hashes carry their own parameters,
// so a hash of any cost verifies whatever the cost of new ones.
type Argon2id struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes
}

// DefaultArgon2id is OWASP's first recommended set (19 MiB, 2 passes, 1
// lane), about 25 ms a hash on a server core.
var DefaultArgon2id = Argon2id{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	argonKeyLen  = 32
	argonSaltLen = 16
)

var errBadHash = errors.New("member: malformed password hash")

// Hash returns the argon2id PHC string of password:
// $argon2id$v=19$m=<Memory>,t=<Time>,p=<Threads>$<salt>$<hash>, base64
// without padding.
func (a Argon2id) Hash(password string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("member: crypto/rand failed: " + err.Error())
	}
	key := argon2.IDKey([]byte(password), salt, a.Time, a.Memory, a.Threads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return a.prefix() + b64.EncodeToString(salt) + "$" + b64.EncodeToString(key)
}

// Check checks password against an argon2id PHC string of any cost, up to
// 1 GiB and 16 passes.
func (Argon2id) Check(phc, password string) (bool, error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil ||
		memory == 0 || memory > 1<<20 || passes == 0 || passes > 16 || threads == 0 {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 64 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// Current reports whether phc was made with a's parameters.
func (a Argon2id) Current(phc string) bool { return strings.HasPrefix(phc, a.prefix()) }

// prefix begins the hashes a makes.
func (a Argon2id) prefix() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$", argon2.Version, a.Memory, a.Time, a.Threads)
}

// NewPassword returns a generated password: 20 random bytes, base64url
// (27 characters, 160 bits).
func NewPassword() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic("member: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Bounds of a password a member chooses. The least length is NIST SP
// 800-63B's for a password that is the only factor; generated passwords
// (NewPassword) have 27 characters. Sign-in refuses longer passwords
// unchecked.
const (
	MinPasswordLength = 15 // characters
	MaxPasswordBytes  = 1024
)

// ValidatePassword checks a password a member chose: no rule but its
// length (NIST SP 800-63B: no composition rules).
func ValidatePassword(password string) error {
	if !utf8.ValidString(password) || len(password) > MaxPasswordBytes {
		return field.Invalid("new password", fmt.Sprintf("must be text of at most %d bytes", MaxPasswordBytes))
	}
	if utf8.RuneCountInString(password) < MinPasswordLength {
		return field.Invalid("new password", fmt.Sprintf("must be at least %d characters long", MinPasswordLength))
	}
	return nil
}
