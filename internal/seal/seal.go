// Package seal encrypts small secrets at rest (client secrets, JWE private
// keys, processor tokens) with AES-256-GCM under the master key.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the master key length in bytes.
const KeySize = 32

// version prefixes every sealed value so the format can change later.
const version byte = 1

// ErrOpen is returned when a sealed value cannot be decrypted: wrong key,
// wrong purpose, or tampered data.
var ErrOpen = errors.New("seal: cannot open sealed value")

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext. purpose is bound to the result as associated data
// (for example "client_secret:<client id>") so that a sealed value copied to
// another row or use does not open there.
func (b *Box) Seal(plaintext []byte, purpose string) []byte {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("seal: crypto/rand failed: " + err.Error()) // crypto/rand never fails on supported platforms
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+b.aead.Overhead())
	out = append(out, version)
	out = append(out, nonce...)
	return b.aead.Seal(out, nonce, plaintext, []byte(purpose))
}

// Open decrypts a value made by Seal with the same purpose.
func (b *Box) Open(sealed []byte, purpose string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	plaintext, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(purpose))
	if err != nil {
		return nil, ErrOpen
	}
	return plaintext, nil
}

// ParseKey decodes a master key given as base64 (standard or URL, padded or
// not) or hex.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("master key must be %d bytes, base64 or hex encoded", KeySize)
}

// LoadOrCreateKeyFile reads the key file at path, or creates it with a new
// random key and mode 0600. Development uses it when HITCH_MASTER_KEY is
// unset.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		key, err := ParseKey(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process created it first
		return LoadOrCreateKeyFile(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}
