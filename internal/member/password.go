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

// Argon2id parameters: OWASP's first recommended set (19 MiB, 2 passes, 1
// lane), about 25 ms a hash on a server core. Stored hashes carry their
// own parameters, so raising these later keeps old hashes verifiable.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

var errBadHash = errors.New("member: malformed password hash")

// HashPassword returns the argon2id PHC string of password:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, base64 without padding.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("member: crypto/rand failed: " + err.Error())
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches the PHC string, in time
// that does not depend on where they differ.
func CheckPassword(phc, password string) (bool, error) {
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

// currentParams begins the hashes HashPassword makes today.
var currentParams = fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$", argon2.Version, argonMemory, argonTime, argonThreads)

// hasCurrentParams reports whether a PHC string has today's parameters
// (and so costs what a check of a new hash costs).
func hasCurrentParams(phc string) bool { return strings.HasPrefix(phc, currentParams) }
