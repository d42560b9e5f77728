package main

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// TestRefshopCommand runs hitch refshop in-process: the shop serves its
// sign-in page and its admin API with the token given, and stops cleanly.
func TestRefshopCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"refshop", "--addr", "127.0.0.1:0", "--admin-token", "T"}, nil, logs, logs)
	}()
	base := "http://" + waitFor(t, logs, regexp.MustCompile(`msg="refshop listening" addr=(\S+)`))

	resp, err := http.Get(base + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /signin: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/admin/api/users/ada@refshop.example", nil)
	req.Header.Set("Authorization", "Bearer T")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin API with the token: %d", resp.StatusCode)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("refshop exited %d: %s", code, logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("refshop did not stop")
	}
}
