package seal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func testBox(t *testing.T) *Box {
	t.Helper()
	b, err := New(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b := testBox(t)
	sealed := b.Seal([]byte("hsk_secret"), "client_secret:a")
	if bytes.Contains(sealed, []byte("hsk_secret")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := b.Open(sealed, "client_secret:a")
	if err != nil || string(got) != "hsk_secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if bytes.Equal(sealed, b.Seal([]byte("hsk_secret"), "client_secret:a")) {
		t.Fatal("two seals of the same value are equal: nonce reuse")
	}
}

func TestOpenRejects(t *testing.T) {
	t.Parallel()
	b := testBox(t)
	sealed := b.Seal([]byte("value"), "p")
	other, _ := New(bytes.Repeat([]byte{8}, KeySize))
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, tc := range map[string]struct {
		box     *Box
		sealed  []byte
		purpose string
	}{
		"wrong purpose": {b, sealed, "q"},
		"wrong key":     {other, sealed, "p"},
		"tampered":      {b, tampered, "p"},
		"truncated":     {b, sealed[:5], "p"},
		"empty":         {b, nil, "p"},
	} {
		if _, err := tc.box.Open(tc.sealed, tc.purpose); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err = %v, want ErrOpen", name, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{0xab}, KeySize)
	for _, s := range []string{
		hex.EncodeToString(key),
		"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=",
		"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s",
	} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q) = %x, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "short", hex.EncodeToString(key[:16])} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	k1, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v", fi.Mode(), err)
	}
	k2, err := LoadOrCreateKeyFile(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("key changed between loads")
	}
}
