package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// flowCall posts a call of the hosted flow as the flow's page does,
// waiting again (POST /link/api/wait) while the login is pending.
func (st *prodStack) flowCall(t *testing.T, path string, body map[string]any) map[string]any {
	t.Helper()
	for {
		body["client_id"] = st.api.clientID
		b, _ := json.Marshal(body)
		resp, err := st.api.http.Post(st.base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Error(err)
			return nil
		}
		out := map[string]any{}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %v %v", path, resp.StatusCode, out, err)
			return out
		}
		if out["status"] != "pending" {
			return out
		}
		path, body = "/link/api/wait", map[string]any{"session": body["session"], "challenge": out["challenge"]}
	}
}

// connectorTotals reads `hitch connectors list --json`: the work done and
// failed in the last day, and in progress, summed over connectors.
func (st *prodStack) connectorTotals(t *testing.T) (done, failed, inProgress int) {
	t.Helper()
	code, out, stderr := cli(t, st.env, "connectors", "list", "--json")
	var rows []struct {
		Done       int `json:"done_24h"`
		Failed     int `json:"failed_24h"`
		InProgress int `json:"in_progress"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("connectors list: %d %s %s", code, out, stderr)
	}
	for _, r := range rows {
		done, failed, inProgress = done+r.Done, failed+r.Failed, inProgress+r.InProgress
	}
	return done, failed, inProgress
}

// TestProductionConnectorsShareWork runs two reference connector processes
// against one PostgreSQL-backed Hitch: 40 concurrent logins and 200
// refreshes are each done once, by one of them; a connector killed with
// SIGKILL in the middle of a login leaves its user a clean, retryable
// failure, and the other connector takes the user's next login.
//
// It runs before the parallel tests (it is not one of them): its 8
// browser contexts fill the machine's CPUs.
func TestProductionConnectorsShareWork(t *testing.T) {
	requireChromium(t)
	db := databaseEnv(t, "postgres")
	st := startProduction(t, db, 2, "HITCH_CONNECTOR_LEASE=8s", "HITCH_REFRESH_INTERVAL=2s")

	const users = 40
	for i := range users {
		st.shopAdmin(t, "POST", "/users", map[string]any{"email": fmt.Sprintf("u%02d@refshop.example", i),
			"password": shopPassword, "name": fmt.Sprintf("User %d", i), "orders": 1}, nil)
	}
	sessions := make([]string, users)
	for i := range users {
		sessions[i] = st.session(t, "transaction_link", fmt.Sprintf("u%02d", i), nil)
	}
	times := make([]time.Duration, users)
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() {
			start := time.Now()
			res := st.flowCall(t, "/link/api/login", map[string]any{"session": sessions[i], "merchant_id": refshopID,
				"username": fmt.Sprintf("u%02d@refshop.example", i), "password": shopPassword})
			times[i] = time.Since(start)
			if res["status"] != "success" {
				t.Errorf("login %d: %v", i, res)
			}
		})
	}
	wg.Wait()
	slices.Sort(times)
	t.Logf("40 concurrent logins, 2 connectors of 4 contexts: p50 %v, p99 %v", times[users/2], times[users*99/100])
	for i := range users {
		st.sink.wait(t, "NEW_TRANSACTIONS_AVAILABLE", fmt.Sprintf("u%02d", i), 1)
	}

	// Refreshes every 2 s: wait for 200 more than the 40 logins and 40
	// first refreshes.
	startDone, _, _ := st.connectorTotals(t)
	began := time.Now()
	deadline := began.Add(4 * time.Minute)
	var done, failed int
	for {
		done, failed, _ = st.connectorTotals(t)
		if done-startDone >= 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	elapsed := time.Since(began)
	if done-startDone < 200 || failed != 0 {
		t.Fatalf("refreshes: %d done in %v, %d failed", done-startDone, elapsed, failed)
	}
	t.Logf("refreshes: %d in %v, %.0f a minute per connector process", done-startDone, elapsed,
		float64(done-startDone)/elapsed.Minutes()/2)
	for i := range users {
		user := fmt.Sprintf("u%02d", i)
		if n := st.sink.count("AUTHENTICATED", user); n != 1 {
			t.Errorf("%s: %d AUTHENTICATED", user, n)
		}
		if n := st.sink.count("NEW_TRANSACTIONS_AVAILABLE", user); n != 1 {
			t.Errorf("%s: %d NEW_TRANSACTIONS_AVAILABLE for an unchanged account", user, n)
		}
	}
	for i, c := range st.conns {
		if strings.Contains(c.logs.String(), "LEASE_NOT_HELD") || strings.Contains(c.logs.String(), "WORK_NOT_WAITING") {
			t.Errorf("connector %d reported on work it did not hold:\n%s", i, lastLines(c.logs.String(), 20))
		}
	}

	// A connector dies holding a login that waits for its code.
	marks := make([]int, len(st.conns))
	for i, c := range st.conns {
		marks[i] = len(c.logs.String())
	}
	s := st.session(t, "transaction_link", "otp", nil)
	res := st.flowCall(t, "/link/api/login", map[string]any{"session": s, "merchant_id": refshopID, "username": shopOTP, "password": shopPassword})
	if res["status"] != "otp_required" {
		t.Fatalf("login: %v", res)
	}
	holder := -1
	for i, c := range st.conns {
		if strings.Contains(c.logs.String()[marks[i]:], "kind=login") { // the connectors log text
			holder = i
		}
	}
	if holder < 0 {
		t.Fatal("no connector logged the login's claim")
	}
	st.conns[holder].kill()
	code := mailedCodes(t, st.shop, shopOTP)[0]
	res = st.flowCall(t, "/link/api/answer", map[string]any{"session": s, "challenge": res["challenge"], "answer": code})
	if res["status"] != "failed" || res["reason"] != "interrupted" || res["retry"] != true {
		t.Fatalf("after the connector died: %v", res)
	}
	res = st.flowCall(t, "/link/api/login", map[string]any{"session": s, "merchant_id": refshopID, "username": shopOTP, "password": shopPassword})
	if res["status"] != "otp_required" {
		t.Fatalf("login again: %v", res)
	}
	codes := mailedCodes(t, st.shop, shopOTP)
	res = st.flowCall(t, "/link/api/answer", map[string]any{"session": s, "challenge": res["challenge"], "answer": codes[0]})
	if res["status"] != "success" {
		t.Fatalf("answer to the other connector: %v", res)
	}
	st.sink.wait(t, "AUTHENTICATED", "otp", 1)
}
