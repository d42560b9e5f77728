package client_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/hitchdev/hitch/client"
)

// testCardPayload is a valid card data payload; "Zoë" checks that non-ASCII
// text survives encryption.
func testCardPayload() *client.CardPayload {
	return &client.CardPayload{
		User: client.CardUser{
			Name: client.CardName{FirstName: "Zoë", LastName: "Lovelace"},
			Address: client.CardAddress{Street: "12 Analytical Way", City: "New York",
				Region: "NY", PostalCode: "10001", Country: "US"},
			PhoneNumber: "+12125550123",
		},
		Card: client.CardData{Number: "4242424242424242", Expiration: "12/28", CVV: "123"},
	}
}

// newRSAKey generates a key of bits bits for one test.
func newRSAKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// publicJWK describes pub as GET /jwe/key would.
func publicJWK(pub *rsa.PublicKey, kid string) *client.JWK {
	return &client.JWK{
		Alg:    "RSA-OAEP-256",
		E:      base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		KeyOps: []string{"encrypt"},
		Kid:    kid,
		Kty:    "RSA",
		N:      base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		Use:    "enc",
	}
}

// protectedHeader decodes the first part of a compact JWE.
func protectedHeader(t *testing.T, compact string) map[string]any {
	t.Helper()
	first, _, _ := strings.Cut(compact, ".")
	raw, err := base64.RawURLEncoding.DecodeString(first)
	if err != nil {
		t.Fatalf("protected header: %v", err)
	}
	var header map[string]any
	if err := json.Unmarshal(raw, &header); err != nil {
		t.Fatalf("protected header: %v", err)
	}
	return header
}

func TestEncryptCardRoundTrip(t *testing.T) {
	t.Parallel()
	priv := newRSAKey(t, 2048)
	const kid = "test-kid-1"
	payload := testCardPayload()

	compact, err := client.EncryptCard(publicJWK(&priv.PublicKey, kid), payload)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(compact, "."); n != 4 {
		t.Fatalf("%d dots, want a compact JWE of five parts", n)
	}

	header := protectedHeader(t, compact)
	want := map[string]any{"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": kid}
	for name, value := range want {
		if header[name] != value {
			t.Errorf("header %q = %v, want %v", name, header[name], value)
		}
	}
	if _, ok := header["zip"]; ok {
		t.Errorf("header has zip %v; Hitch refuses compressed JWEs", header["zip"])
	}

	obj, err := jose.ParseEncryptedCompact(compact,
		[]jose.KeyAlgorithm{jose.RSA_OAEP_256}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		t.Fatal(err)
	}
	if obj.Header.KeyID != kid {
		t.Errorf("parsed kid %q, want %q", obj.Header.KeyID, kid)
	}
	plaintext, err := obj.Decrypt(priv)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	if string(plaintext) != string(wantJSON) {
		t.Errorf("plaintext\n%s\nwant\n%s", plaintext, wantJSON)
	}
	var got client.CardPayload
	if err := json.Unmarshal(plaintext, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, payload) {
		t.Errorf("payload %+v, want %+v", got, *payload)
	}
}

// Every call draws a new content key and IV, so the same card never gives
// the same JWE twice.
func TestEncryptCardFreshCiphertext(t *testing.T) {
	t.Parallel()
	priv := newRSAKey(t, 2048)
	jwk := publicJWK(&priv.PublicKey, "test-kid-1")
	first, err := client.EncryptCard(jwk, testCardPayload())
	if err != nil {
		t.Fatal(err)
	}
	second, err := client.EncryptCard(jwk, testCardPayload())
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Split(first, "."), strings.Split(second, ".")
	if a[0] != b[0] {
		t.Errorf("protected headers differ: %s and %s", a[0], b[0])
	}
	for i, name := range []string{"", "encrypted key", "IV", "ciphertext", "tag"} {
		if i > 0 && a[i] == b[i] {
			t.Errorf("two calls gave the same %s", name)
		}
	}
}

func TestEncryptCardBadKey(t *testing.T) {
	t.Parallel()
	priv := newRSAKey(t, 2048)
	short := newRSAKey(t, 1024)
	good := func() *client.JWK { return publicJWK(&priv.PublicKey, "test-kid-1") }

	tests := []struct {
		name string
		jwk  *client.JWK
	}{
		{"nil", nil},
		{"kty EC", func() *client.JWK { k := good(); k.Kty = "EC"; return k }()},
		{"kty missing", func() *client.JWK { k := good(); k.Kty = ""; return k }()},
		{"kid missing", func() *client.JWK { k := good(); k.Kid = ""; return k }()},
		{"modulus of 1024 bits", publicJWK(&short.PublicKey, "test-kid-1")},
		{"modulus missing", func() *client.JWK { k := good(); k.N = ""; return k }()},
		{"modulus not base64url", func() *client.JWK { k := good(); k.N = "!" + k.N[1:]; return k }()},
		{"modulus in padded base64", func() *client.JWK { k := good(); k.N += "=="; return k }()},
		{"exponent missing", func() *client.JWK { k := good(); k.E = ""; return k }()},
		{"exponent not base64url", func() *client.JWK { k := good(); k.E = "AQ*B"; return k }()},
		{"exponent too long", func() *client.JWK { k := good(); k.E = "AQABAQAB"; return k }()},
		{"exponent of one", func() *client.JWK { k := good(); k.E = "AQ"; return k }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			compact, err := client.EncryptCard(tt.jwk, testCardPayload())
			if err == nil {
				t.Fatalf("encrypted with a bad key: %.40s…", compact)
			}
			if compact != "" {
				t.Errorf("an error came with a JWE")
			}
			if !strings.HasPrefix(err.Error(), "hitch: encrypt card:") {
				t.Errorf("error %q lacks the hitch: encrypt card: prefix", err)
			}
		})
	}
}
