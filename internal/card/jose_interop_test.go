package card_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/npmtest"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newKeys(t *testing.T, st store.Store, now func() time.Time) *card.Keys {
	t.Helper()
	box, err := seal.New(bytes.Repeat([]byte{3}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return card.NewKeys(st, box, now)
}

// cardPlaintext is a card data payload as a developer's client encodes it.
func cardPlaintext(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(&client.CardPayload{
		User: client.CardUser{
			Name: client.CardName{FirstName: "Zoë", LastName: "Lovelace"},
			Address: client.CardAddress{Street: "12 Analytical Way", City: "New York",
				Region: "NY", PostalCode: "10001", Country: "US"},
		},
		Card: client.CardData{Number: "4242424242424242", Expiration: "12/28", CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientJWK passes pub through JSON, as GET /jwe/key hands it to a client.
func clientJWK(t *testing.T, pub *card.PublicJWK) *client.JWK {
	t.Helper()
	b, err := json.Marshal(pub)
	if err != nil {
		t.Fatal(err)
	}
	var jwk client.JWK
	if err := json.Unmarshal(b, &jwk); err != nil {
		t.Fatal(err)
	}
	return &jwk
}

// joseKey parses pub with go-jose, to encrypt what client.EncryptCard won't.
func joseKey(t *testing.T, pub *card.PublicJWK) *jose.JSONWebKey {
	t.Helper()
	b, err := json.Marshal(pub)
	if err != nil {
		t.Fatal(err)
	}
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return &jwk
}

// encryptCard encrypts plaintext for pub the way the Go client does.
func encryptCard(t *testing.T, pub *card.PublicJWK, plaintext []byte) string {
	t.Helper()
	var payload client.CardPayload
	if err := json.Unmarshal(plaintext, &payload); err != nil {
		t.Fatal(err)
	}
	compact, err := client.EncryptCard(clientJWK(t, pub), &payload)
	if err != nil {
		t.Fatal(err)
	}
	return compact
}

// wantJWEError checks that err is a *card.JWEError whose reason holds want.
func wantJWEError(t *testing.T, err error, want string) {
	t.Helper()
	var jweErr *card.JWEError
	switch {
	case err == nil:
		t.Fatalf("decrypted; want a JWE error mentioning %q", want)
	case !errors.As(err, &jweErr):
		t.Fatalf("error %v (%T), want a *card.JWEError", err, err)
	case !strings.Contains(jweErr.Reason, want):
		t.Fatalf("reason %q, want one mentioning %q", jweErr.Reason, want)
	}
}

// What the Go client encrypts, Hitch decrypts.
func TestDecryptClientJWE(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		keys := newKeys(t, st, time.Now)
		pub, err := keys.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		plaintext := cardPlaintext(t)
		got, err := keys.Decrypt(ctx, encryptCard(t, pub, plaintext))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Errorf("decrypted\n%s\nwant\n%s", got, plaintext)
		}
	})
}

// rejectEnv is what a rejection case builds its JWE from.
type rejectEnv struct {
	pub   *card.PublicJWK
	key   *jose.JSONWebKey // pub, for go-jose
	valid string           // a JWE that decrypts
	other *card.PublicJWK  // the current key of another deployment
}

// encrypt serializes plaintext encrypted for rcpt with go-jose.
func encrypt(t *testing.T, enc jose.ContentEncryption, rcpt jose.Recipient, opts *jose.EncrypterOptions, plaintext []byte) *jose.JSONWebEncryption {
	t.Helper()
	e, err := jose.NewEncrypter(enc, rcpt, opts)
	if err != nil {
		t.Fatalf("go-jose encrypter %s/%s: %v", rcpt.Algorithm, enc, err)
	}
	obj, err := e.Encrypt(plaintext)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func compact(t *testing.T, obj *jose.JSONWebEncryption) string {
	t.Helper()
	s, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tamper flips one bit in the middle of part i (0-based) of a compact JWE.
func tamper(t *testing.T, jwe string, i int) string {
	t.Helper()
	parts := strings.Split(jwe, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil || len(b) == 0 {
		t.Fatalf("part %d: %q (%v)", i, parts[i], err)
	}
	b[len(b)/2] ^= 0x01
	parts[i] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Every JWE that is not RSA-OAEP-256 + A256GCM from a usable key of this
// deployment, intact, compact and uncompressed, is refused with a reason.
func TestDecryptRejects(t *testing.T) {
	t.Parallel()
	secret := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name   string
		jwe    func(t *testing.T, env *rejectEnv) string
		reason string
	}{
		{"JSON serialization", func(t *testing.T, env *rejectEnv) string {
			obj := encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, nil, cardPlaintext(t))
			return obj.FullSerialize()
		}, "only the compact serialization"},
		{"alg RSA-OAEP (SHA-1)", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP, Key: env.key.Key, KeyID: env.pub.Kid}, nil, cardPlaintext(t)))
		}, `"alg" header must be RSA-OAEP-256`},
		{"alg RSA1_5", func(t *testing.T, env *rejectEnv) string {
			e, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.RSA1_5, Key: env.key.Key, KeyID: env.pub.Kid}, nil)
			if err != nil {
				t.Skipf("go-jose no longer encrypts with RSA1_5: %v", err)
			}
			obj, err := e.Encrypt(cardPlaintext(t))
			if err != nil {
				t.Skipf("go-jose no longer encrypts with RSA1_5: %v", err)
			}
			return compact(t, obj)
		}, `"alg" header must be RSA-OAEP-256`},
		{"alg dir", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: secret, KeyID: env.pub.Kid}, nil, cardPlaintext(t)))
		}, `"alg" header must be RSA-OAEP-256`},
		{"alg A256KW", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.A256KW, Key: secret, KeyID: env.pub.Kid}, nil, cardPlaintext(t)))
		}, `"alg" header must be RSA-OAEP-256`},
		{"alg none", func(t *testing.T, env *rejectEnv) string {
			header := `{"alg":"none","enc":"A256GCM","kid":"` + env.pub.Kid + `"}`
			return b64(header) + "." + b64("garbage") + "." + b64("garbage") + "." + b64("garbage") + "." + b64("garbage")
		}, `"alg" header must be RSA-OAEP-256`},
		{"alg missing", func(t *testing.T, env *rejectEnv) string {
			parts := strings.Split(env.valid, ".")
			parts[0] = b64(`{"enc":"A256GCM","kid":"` + env.pub.Kid + `"}`)
			return strings.Join(parts, ".")
		}, `"alg" header must be RSA-OAEP-256`},
		{"enc A128GCM", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A128GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, nil, cardPlaintext(t)))
		}, `"enc" header must be A256GCM`},
		{"enc A256CBC-HS512", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256CBC_HS512, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, nil, cardPlaintext(t)))
		}, `"enc" header must be A256GCM`},
		{"kid missing", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key}, nil, cardPlaintext(t)))
		}, `"kid" header is required`},
		{"kid unknown", func(t *testing.T, env *rejectEnv) string {
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: "no-such-key"}, nil, cardPlaintext(t)))
		}, "names no key of this deployment"},
		{"zip DEF", func(t *testing.T, env *rejectEnv) string {
			opts := &jose.EncrypterOptions{Compression: jose.DEFLATE}
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, opts, cardPlaintext(t)))
		}, "compressed JWEs are not accepted"},
		{"crit header", func(t *testing.T, env *rejectEnv) string {
			opts := (&jose.EncrypterOptions{}).WithHeader("crit", []string{"exp"}).WithHeader("exp", 1)
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, opts, cardPlaintext(t)))
		}, `"crit" header is not supported`},
		{"larger than 8 KiB", func(t *testing.T, env *rejectEnv) string {
			huge := bytes.Repeat([]byte("x"), card.MaxJWESize)
			return compact(t, encrypt(t, jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: env.key.Key, KeyID: env.pub.Kid}, nil, huge))
		}, "larger than 8 KiB"},
		{"ciphertext tampered", func(t *testing.T, env *rejectEnv) string { return tamper(t, env.valid, 3) }, "cannot be decrypted"},
		{"tag tampered", func(t *testing.T, env *rejectEnv) string { return tamper(t, env.valid, 4) }, "cannot be decrypted"},
		{"encrypted key tampered", func(t *testing.T, env *rejectEnv) string { return tamper(t, env.valid, 1) }, "cannot be decrypted"},
		{"IV tampered", func(t *testing.T, env *rejectEnv) string { return tamper(t, env.valid, 2) }, "cannot be decrypted"},
		{"protected header changed", func(t *testing.T, env *rejectEnv) string {
			// Still a valid header, but it is the AAD: the tag no longer matches.
			parts := strings.Split(env.valid, ".")
			parts[0] = b64(`{"alg":"RSA-OAEP-256","enc":"A256GCM","kid":"` + env.pub.Kid + `","x":1}`)
			return strings.Join(parts, ".")
		}, "cannot be decrypted"},
		{"four parts", func(t *testing.T, env *rejectEnv) string {
			return env.valid[:strings.LastIndexByte(env.valid, '.')]
		}, "five parts"},
		{"six parts", func(t *testing.T, env *rejectEnv) string { return env.valid + "." + b64("extra") }, "five parts"},
		{"empty", func(t *testing.T, env *rejectEnv) string { return "" }, "five parts"},
		{"header not base64url", func(t *testing.T, env *rejectEnv) string {
			return "!!not-base64!!" + env.valid[strings.IndexByte(env.valid, '.'):]
		}, "not base64url"},
		{"header not JSON", func(t *testing.T, env *rejectEnv) string {
			return b64("alg=RSA-OAEP-256") + env.valid[strings.IndexByte(env.valid, '.'):]
		}, "not a JSON object"},
		{"key of another deployment", func(t *testing.T, env *rejectEnv) string {
			return encryptCard(t, env.other, cardPlaintext(t))
		}, "names no key of this deployment"},
		{"key of another deployment under this kid", func(t *testing.T, env *rejectEnv) string {
			forged := *env.other
			forged.Kid = env.pub.Kid
			return encryptCard(t, &forged, cardPlaintext(t))
		}, "cannot be decrypted"},
	}

	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		keys := newKeys(t, st, time.Now)
		pub, err := keys.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other, err := newKeys(t, storetest.OpenSQLite(t), time.Now).Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		env := &rejectEnv{pub: pub, key: joseKey(t, pub), valid: encryptCard(t, pub, cardPlaintext(t)), other: other}
		if _, err := keys.Decrypt(ctx, env.valid); err != nil {
			t.Fatalf("the untampered JWE: %v", err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				jwe := tt.jwe(t, env)
				plaintext, err := keys.Decrypt(ctx, jwe)
				if plaintext != nil {
					t.Errorf("returned %d bytes of plaintext with the error", len(plaintext))
				}
				wantJWEError(t, err, tt.reason)
			})
		}
	})
}

// A rotated key keeps decrypting through its grace period, then stops with
// a reason that tells the developer to fetch the key again.
func TestDecryptAcrossRotation(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		clock := &testClock{now: time.Date(2026, time.May, 15, 12, 0, 0, 0, time.UTC)}
		keys := newKeys(t, st, clock.Now)
		plaintext := cardPlaintext(t)
		decrypts := func(t *testing.T, jwe string) {
			t.Helper()
			got, err := keys.Decrypt(ctx, jwe)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plaintext) {
				t.Fatalf("decrypted\n%s\nwant\n%s", got, plaintext)
			}
		}

		first, err := keys.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		firstJWE := encryptCard(t, first, plaintext)

		clock.Advance(time.Minute)
		second, err := keys.Rotate(ctx, card.KeyBits, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if current, err := keys.Current(ctx); err != nil || current.Kid != second.Kid {
			t.Fatalf("current key %v (%v), want the rotated one %s", current, err, second.Kid)
		}
		secondJWE := encryptCard(t, second, plaintext)
		decrypts(t, firstJWE) // within the grace period
		decrypts(t, secondJWE)

		clock.Advance(time.Hour)
		wantJWEError(t, func() error { _, err := keys.Decrypt(ctx, firstJWE); return err }(), "retired")
		decrypts(t, secondJWE)

		// With no grace the previous key stops at once.
		clock.Advance(time.Minute)
		third, err := keys.Rotate(ctx, card.KeyBits, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantJWEError(t, func() error { _, err := keys.Decrypt(ctx, secondJWE); return err }(), "retired")
		decrypts(t, encryptCard(t, third, plaintext))

		usable, err := keys.Usable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(usable) != 1 || usable[0].Kid != third.Kid {
			t.Errorf("%d usable keys, want only %s", len(usable), third.Kid)
		}
	})
}

// What the npm jose package encrypts, Hitch decrypts: go-jose on both ends
// would hide a mistake both share.
func TestDecryptNpmJose(t *testing.T) {
	t.Parallel()
	node, dir := installNpmJose(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys := newKeys(t, storetest.OpenSQLite(t), time.Now)
	pub, err := keys.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plaintext := cardPlaintext(t)
	input, err := json.Marshal(map[string]any{"jwk": pub, "payload": string(plaintext)})
	if err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "encrypt.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node encrypt.mjs: %v\n%s", err, stderr.Bytes())
	}

	got, err := keys.Decrypt(ctx, strings.TrimSpace(stdout.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plaintext) {
		t.Errorf("decrypted\n%s\nwant\n%s", got, plaintext)
	}
}

// installNpmJose returns node's path and a directory outside the
// repository holding testdata/jose with its pinned jose installed.
func installNpmJose(t *testing.T) (node, dir string) {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{"package.json", "package-lock.json", "encrypt.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "jose", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(files["package.json"], &pkg); err != nil || pkg.Dependencies["jose"] == "" {
		t.Fatalf("testdata/jose/package.json must pin jose (%v)", err)
	}
	return npmtest.Install(t, "jose-"+pkg.Dependencies["jose"], files)
}
