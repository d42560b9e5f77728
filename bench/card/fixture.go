package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/client"
)

// The fixture: ExternalUserID's accounts at merchants 1 to --accounts,
// linked for the card switcher, receive the cards in turn.
const (
	// maxAccounts bounds --accounts: merchants 1 to 10 offer the card
	// switcher.
	maxAccounts = hitch.LinkedAccounts
	cardID      = "bench-card"
	// poolSize is how many distinct JWEs each side rotates through.
	poolSize = 64
)

// payload is the card data every JWE holds: a valid card that the
// development simulator switches successfully.
var payload = client.CardPayload{
	User: client.CardUser{
		Name: client.CardName{FirstName: "Ada", LastName: "Lovelace"},
		Address: client.CardAddress{Street: "12 Analytical Way", City: "New York", Region: "US-NY",
			PostalCode: "10001", Country: "US"},
		PhoneNumber: "+12125550123",
	},
	Card: client.CardData{Number: "4242424242424242", Expiration: "12/2031", CVV: "123"},
}

// linkCardSwitcher links the fixture's accounts, at merchants 1 to n. The
// card switch task each link opens waits for a card that never comes and
// fails when its window ends; the requests under load open tasks of their
// own.
func linkCardSwitcher(ctx context.Context, api *hitch.APIClient, n int) error {
	for merchantID := 1; merchantID <= n; merchantID++ {
		_, err := api.PostJSON(ctx, "/development/accounts/link", map[string]any{
			"external_user_id": hitch.ExternalUserID,
			"merchant_id":      merchantID,
			"card_switcher":    true,
			"card_id":          cardID,
		})
		if err != nil {
			return fmt.Errorf("link merchant %d for the card switcher: %w", merchantID, err)
		}
	}
	return nil
}

// encryptPool encrypts payload n times for jwk; every JWE differs (a fresh
// content key and IV each time).
func encryptPool(jwk *client.JWK, n int) ([]string, error) {
	jwes := make([]string, n)
	for i := range jwes {
		var err error
		if jwes[i], err = client.EncryptCard(jwk, &payload); err != nil {
			return nil, err
		}
	}
	return jwes, nil
}

// cardBodies are the POST /card bodies for jwes, naming the fixture's
// accounts at merchants 1 to accounts in turn.
func cardBodies(jwes []string, accounts int) [][]byte {
	bodies := make([][]byte, len(jwes))
	for i, jwe := range jwes {
		bodies[i], _ = json.Marshal(struct { // cannot fail
			JWE            string `json:"jwe"`
			ExternalUserID string `json:"external_user_id"`
			MerchantID     int    `json:"merchant_id"`
		}{jwe, hitch.ExternalUserID, i%accounts + 1})
	}
	return bodies
}

// keyBits is the size of jwk's modulus.
func keyBits(jwk *client.JWK) (int, error) {
	n, err := base64.RawURLEncoding.DecodeString(jwk.N)
	if err != nil || len(n) == 0 {
		return 0, errors.New("GET /jwe/key: the modulus is not base64url")
	}
	return new(big.Int).SetBytes(n).BitLen(), nil
}

// newBareKey makes an RSA key of bits bits and its public JWK, so that the
// bare loop's JWEs come from client.EncryptCard exactly as Hitch's do.
func newBareKey(bits int) (*rsa.PrivateKey, *client.JWK, error) {
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, nil, err
	}
	return priv, publicJWK(&priv.PublicKey, "bench-bare"), nil
}

// publicJWK is pub as the JWK GET /jwe/key serves.
func publicJWK(pub *rsa.PublicKey, kid string) *client.JWK {
	return &client.JWK{
		Kty: "RSA", Kid: kid, Alg: "RSA-OAEP-256", Use: "enc", KeyOps: []string{"encrypt"},
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}
}
