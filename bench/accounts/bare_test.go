package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The bare handler answers the body, framed as Hitch frames it, only to the
// right credentials.
func TestBareHandler(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"merchant":{"id":1}}]`)
	srv := httptest.NewServer(requireBasicAuth("user", "secret", jsonBody(body)))
	t.Cleanup(srv.Close)

	tests := []struct {
		name       string
		user, pass string
		wantStatus int
	}{
		{"answers", "user", "secret", http.StatusOK},
		{"wrong password", "user", "nope", http.StatusUnauthorized},
		{"wrong user", "other", "secret", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/accounts/get", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth(tt.user, tt.pass)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			if string(got) != string(body) || resp.ContentLength != int64(len(body)) || resp.TransferEncoding != nil {
				t.Errorf("body %q, Content-Length %d, Transfer-Encoding %v; want the body with its length, not chunked",
					got, resp.ContentLength, resp.TransferEncoding)
			}
		})
	}
}
