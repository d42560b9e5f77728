package main

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// The only algorithms POST /card accepts, and so the only ones the bare
// loop allows when parsing.
var (
	keyAlgorithms      = []jose.KeyAlgorithm{jose.RSA_OAEP_256}
	contentEncryptions = []jose.ContentEncryption{jose.A256GCM}
)

// bareDecrypts is the floor: what a JWE of card data costs to open with
// nothing around it.
type bareDecrypts struct {
	priv *rsa.PrivateKey
	jwes []string
}

// newBareDecrypts makes a key the size of Hitch's and a pool of JWEs for
// it, and checks that one opens to the payload.
func newBareDecrypts(bits int) (*bareDecrypts, error) {
	priv, jwk, err := newBareKey(bits)
	if err != nil {
		return nil, err
	}
	jwes, err := encryptPool(jwk, poolSize)
	if err != nil {
		return nil, err
	}
	b := &bareDecrypts{priv: priv, jwes: jwes}
	plain, err := b.decrypt(jwes[0])
	if err != nil {
		return nil, err
	}
	if want, _ := json.Marshal(&payload); !bytes.Equal(plain, want) {
		return nil, errors.New("bare: the JWE does not open to the card payload")
	}
	return b, nil
}

// decrypt is the bare operation: parse the compact JWE, allowing only
// RSA-OAEP-256 and A256GCM, and open it.
func (b *bareDecrypts) decrypt(jwe string) ([]byte, error) {
	obj, err := jose.ParseEncryptedCompact(jwe, keyAlgorithms, contentEncryptions)
	if err != nil {
		return nil, err
	}
	return obj.Decrypt(b.priv)
}

// run decrypts on conns goroutines for warmup then duration, each from its
// own place in the pool.
func (b *bareDecrypts) run(ctx context.Context, conns int, warmup, duration time.Duration) (*loadgen.Stats, error) {
	ops := make([]loadgen.Op, conns)
	for w := range ops {
		next := w * len(b.jwes) / conns
		ops[w] = func(time.Time) (string, error) {
			jwe := b.jwes[next%len(b.jwes)]
			next++
			if _, err := b.decrypt(jwe); err != nil {
				return "decrypt", err
			}
			return "", nil
		}
	}
	return loadgen.ClosedLoop(ctx, ops, warmup, duration)
}
