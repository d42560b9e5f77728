package client_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/hitchdev/hitch/client"
)

// A receiver verifies every delivery against the endpoint's signing secret
// before trusting it, reading the raw body first: re-encoded JSON would not
// match the signature.
func ExampleVerifyWebhook() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from the dashboard

	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(r.Header, body, secret, 0); err != nil {
			// Say why in your own logs; the sender needs only the status.
			switch {
			case errors.Is(err, client.ErrTimestampTooOld):
				fmt.Println("rejected a stale or replayed delivery")
			default:
				fmt.Println("rejected:", err)
			}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		// Handle the event (queue it and answer quickly), then acknowledge.
		w.WriteHeader(http.StatusNoContent)
	})

	body := []byte(`{"event":"CARD_UPDATED","data":{"card_id":"card-123"}}`)
	fmt.Println(deliver(receiver, signedLike("msg_1", time.Now(), body, secret), body))
	fmt.Println(deliver(receiver, signedLike("msg_2", time.Now().Add(-time.Hour), body, secret), body))
	fmt.Println(deliver(receiver, signedLike("msg_3", time.Now(), body, secret), []byte(`{"event":"CARD_FAILED"}`)))
	// Output:
	// 204
	// rejected a stale or replayed delivery
	// 401
	// rejected: hitch: webhook: no matching signature for webhook msg_3
	// 401
}

// deliver posts body with headers to h and returns the status code.
func deliver(h http.Handler, headers http.Header, body []byte) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/hitch", bytes.NewReader(body))
	req.Header = headers
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// signedLike returns the Standard Webhooks headers that Hitch sends.
func signedLike(id string, at time.Time, body []byte, secret string) http.Header {
	key, _ := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return h
}
