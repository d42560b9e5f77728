package card_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// digitRun is six or more digits: enough of a card number to matter.
var digitRun = regexp.MustCompile(`[0-9]{6,}`)

// checkNoEcho fails when message repeats six or more consecutive digits of
// input.
func checkNoEcho(t *testing.T, message string, input []byte) {
	t.Helper()
	for _, run := range digitRun.FindAllString(message, -1) {
		if bytes.Contains(input, []byte(run[:6])) {
			t.Fatalf("message %q repeats digits of the input", message)
		}
	}
}

// FuzzDecodePayload feeds the card data payload decoder what a developer
// can post or encrypt. Every refusal is a *card.FieldError whose message
// repeats no card data; a payload it accepts encodes and decodes back to
// itself, and Validate judges it without repeating it either.
func FuzzDecodePayload(f *testing.F) {
	for _, s := range []string{
		`{"user":{"name":{"first_name":"Ada","last_name":"Lovelace"},"address":{"street":"12 Analytical Way","street2":"Apt 3","city":"New York","region":"NY","postal_code":"10001","country":"US"},"phone_number":"+12125550123"},"card":{"number":"4242424242424242","expiration":"12/2028","cvv":"123"}}`,
		`{"card":{"number":"4242424242424242","expiration":"12/28","cvv":"1234"}}`,
		`{"card":{"4242424242424242":"x"}}`, `{"card":{"number":4242424242424242}}`, `{"card":null}`,
		`{"card":{"number":"1","number":"2"}}`, `{"Card":{}}`, `{} {}`, `[]`, `"4242424242424242"`, ``,
		`{"user":{"address":{"country":"CA","region":"QC","postal_code":"H2X 1Y4"}}}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, time.May, 15, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		input := bytes.Clone(data)
		p, err := card.DecodePayload(data)
		if err != nil {
			var fe *card.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("refusal %v (%T), want a *card.FieldError", err, err)
			}
			checkNoEcho(t, fe.Message, input)
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := card.DecodePayload(again)
		if err != nil {
			t.Fatalf("an accepted payload, encoded again, is refused: %v", err)
		}
		if *q != *p {
			t.Fatalf("round trip changed the payload: %+v, then %+v", p, q)
		}
		if fe := p.Validate(now); fe != nil {
			checkNoEcho(t, fe.Message, input)
			if fe.Field == "" || !strings.Contains(fe.Message, fe.Field) {
				t.Fatalf("validation message %q does not name its field %q", fe.Message, fe.Field)
			}
		}
	})
}

// FuzzDecrypt feeds the JWE decrypter what a developer can post as
// card_data, starting from a JWE made for this deployment's key. Every
// refusal is a *card.JWEError, and what it accepts decrypts the same again.
func FuzzDecrypt(f *testing.F) {
	st := storetest.OpenSQLite(f)
	box, err := seal.New(bytes.Repeat([]byte{3}, seal.KeySize))
	if err != nil {
		f.Fatal(err)
	}
	keys := card.NewKeys(st, box, time.Now)
	ctx := context.Background()
	pub, err := keys.Current(ctx)
	if err != nil {
		f.Fatal(err)
	}
	b, err := json.Marshal(pub)
	if err != nil {
		f.Fatal(err)
	}
	var jwk client.JWK
	if err := json.Unmarshal(b, &jwk); err != nil {
		f.Fatal(err)
	}
	valid, err := client.EncryptCard(&jwk, &client.CardPayload{Card: client.CardData{Number: "4242424242424242", Expiration: "12/28", CVV: "123"}})
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(valid, ".")
	f.Add(valid)
	f.Add(strings.Join([]string{parts[0], parts[1], parts[2], parts[3], "AAAA"}, "."))
	f.Add(b64(`{"alg":"RSA-OAEP-256","enc":"A256GCM","kid":"nope"}`) + "." + strings.Join(parts[1:], "."))
	f.Add(b64(`{"alg":"RSA-OAEP-256","enc":"A256GCM","kid":"`+pub.Kid+`","zip":"DEF"}`) + "." + strings.Join(parts[1:], "."))
	f.Add(`{"protected":"x"}`)
	f.Add("a.b.c.d.e")
	f.Add("")
	f.Fuzz(func(t *testing.T, compact string) {
		plaintext, err := keys.Decrypt(ctx, compact)
		if err != nil {
			var je *card.JWEError
			if !errors.As(err, &je) {
				t.Fatalf("refusal %v (%T), want a *card.JWEError", err, err)
			}
			if len(compact) >= 8 && strings.Contains(je.Reason, compact) {
				t.Fatalf("reason %q repeats the JWE", je.Reason)
			}
			return
		}
		again, err := keys.Decrypt(ctx, compact)
		if err != nil || !bytes.Equal(again, plaintext) {
			t.Fatalf("an accepted JWE decrypts differently the second time: %v", err)
		}
	})
}
