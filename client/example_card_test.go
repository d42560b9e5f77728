package client_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"math/big"
	"strings"

	"github.com/hitchdev/hitch/client"
)

// Encrypt card data so that only Hitch can read it, then send the JWE with
// SubmitCard. Against a deployment the key comes from the API:
//
//	jwk, err := c.JWEKey(ctx)
//	jwe, err := client.EncryptCard(jwk, payload)
//	_, err = c.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: &taskID})
//
// Here a generated key stands in for the one GET /jwe/key serves.
func ExampleEncryptCard() {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	jwk := &client.JWK{
		Kty: "RSA",
		Kid: "example-kid",
		N:   base64.RawURLEncoding.EncodeToString(priv.N.Bytes()),
		E:   base64.RawURLEncoding.EncodeToString(big.NewInt(int64(priv.E)).Bytes()),
	}

	jwe, err := client.EncryptCard(jwk, &client.CardPayload{
		User: client.CardUser{
			Name: client.CardName{FirstName: "Ada", LastName: "Lovelace"},
			Address: client.CardAddress{Street: "12 Analytical Way", City: "New York",
				Region: "NY", PostalCode: "10001", Country: "US"},
		},
		Card: client.CardData{Number: "4242424242424242", Expiration: "12/28", CVV: "123"},
	})
	if err != nil {
		log.Fatal(err)
	}

	// The JWE is random each time; its protected header is not.
	parts := strings.Split(jwe, ".")
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		log.Fatal(err)
	}
	var h struct{ Alg, Enc, Kid string }
	if err := json.Unmarshal(header, &h); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(parts), "parts")
	fmt.Println(h.Alg, h.Enc, h.Kid)
	// Output:
	// 5 parts
	// RSA-OAEP-256 A256GCM example-kid
}
