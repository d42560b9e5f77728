package client

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"

	jose "github.com/go-jose/go-jose/v4"
)

// CardPayload is the card data payload that EncryptCard encrypts and the
// plain form of SubmitCard sends (the public API's card data payload).
type CardPayload struct {
	User CardUser `json:"user"`
	Card CardData `json:"card"`
}

// CardUser is the card holder.
type CardUser struct {
	Name        CardName    `json:"name"`
	Address     CardAddress `json:"address"`
	PhoneNumber string      `json:"phone_number,omitempty"`
}

// CardName is the card holder's name.
type CardName struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// CardAddress is the billing address. Region is an ISO 3166-2 code ("US-NY"
// or "NY"), Country an ISO 3166-1 alpha-2 code.
type CardAddress struct {
	Street     string `json:"street"`
	Street2    string `json:"street2,omitempty"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// CardData is the card itself.
type CardData struct {
	Number     string `json:"number"`
	Expiration string `json:"expiration"` // MM/YYYY or MM/YY
	CVV        string `json:"cvv"`
}

// EncryptCard encrypts payload for Hitch with the public key from JWEKey:
// a compact JWE with alg RSA-OAEP-256, enc A256GCM and the key's kid, the
// only kind POST /card accepts.
func EncryptCard(jwk *JWK, payload *CardPayload) (string, error) {
	pub, err := jwk.rsaPublicKey()
	if err != nil {
		return "", fmt.Errorf("hitch: encrypt card: %w", err)
	}
	plaintext, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("hitch: encrypt card: %w", err)
	}
	defer clear(plaintext)
	enc, err := jose.NewEncrypter(jose.A256GCM,
		jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: pub, KeyID: jwk.Kid}, nil)
	if err != nil {
		return "", fmt.Errorf("hitch: encrypt card: %w", err)
	}
	obj, err := enc.Encrypt(plaintext)
	if err != nil {
		return "", fmt.Errorf("hitch: encrypt card: %w", err)
	}
	return obj.CompactSerialize()
}

func (k *JWK) rsaPublicKey() (*rsa.PublicKey, error) {
	if k == nil || k.Kty != "RSA" || k.Kid == "" {
		return nil, errors.New("the key must be an RSA JWK with a kid")
	}
	if (k.Alg != "" && k.Alg != "RSA-OAEP-256") || (k.Use != "" && k.Use != "enc") {
		return nil, errors.New("the key must be for RSA-OAEP-256 encryption")
	}
	n, err := base64.RawURLEncoding.DecodeString(k.N)
	if err != nil || len(n) == 0 || n[0] == 0 || new(big.Int).SetBytes(n).BitLen() < 2048 {
		return nil, errors.New("the key's modulus (n) must be base64url of at least 2048 bits, without leading zeros")
	}
	e, err := base64.RawURLEncoding.DecodeString(k.E)
	if err != nil || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("the key's exponent (e) is not valid")
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
}

// JWEKeys returns every public key that still decrypts, newest first.
func (c *Client) JWEKeys(ctx context.Context) ([]JWK, error) {
	var out struct {
		Keys []JWK `json:"keys"`
	}
	return out.Keys, c.do(ctx, http.MethodGet, "/jwe/keys", nil, nil, &out)
}

// SubmitCardRequest is the body of POST /card, in one of its forms: JWE
// with TaskID; JWE with ExternalUserID and MerchantID (an account already
// linked); or the plain User and Card, with TaskID or with ExternalUserID
// and MerchantID.
type SubmitCardRequest struct {
	JWE            string    `json:"jwe,omitempty"`
	TaskID         *int64    `json:"task_id,omitempty"`
	ExternalUserID string    `json:"external_user_id,omitempty"`
	MerchantID     int64     `json:"merchant_id,omitempty"`
	User           *CardUser `json:"user,omitempty"`
	Card           *CardData `json:"card,omitempty"`
}

// SubmitCardResponse says the card data passed validation; the outcome
// comes as CARD_UPDATED or CARD_FAILED for TaskID.
type SubmitCardResponse struct {
	Message string `json:"message"`
	TaskID  int64  `json:"task_id"`
}

// SubmitCard sends card data for a card switch.
func (c *Client) SubmitCard(ctx context.Context, req *SubmitCardRequest) (*SubmitCardResponse, error) {
	var out SubmitCardResponse
	return &out, c.do(ctx, http.MethodPost, "/card", nil, req, &out)
}
