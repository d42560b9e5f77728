package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

// serveReceiverFlag makes the benchmark serve a receiver on the address
// that follows, until it is stopped: receiverProcess starts it so.
const serveReceiverFlag = "--serve-receiver"

// serveReceiverCommand serves a receiver on args[1] until ctx ends.
func serveReceiverCommand(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: %s 127.0.0.1:PORT", serveReceiverFlag)
	}
	r, err := startReceiverOn(args[1])
	if err != nil {
		return err
	}
	<-ctx.Done()
	r.close()
	return nil
}

// receiverProcess is a receiver in a process of its own, asked over its
// /bench paths.
type receiverProcess struct {
	child  *proc.Child
	base   string
	client *http.Client
}

// startReceiverProcess re-executes the benchmark as a receiver, logging to
// work, and waits until it answers.
func startReceiverProcess(ctx context.Context, work, name string) (*receiverProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := proc.FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	child, err := proc.Start("receiver "+name, filepath.Join(work, "receiver-"+name+".log"), os.Environ(),
		self, serveReceiverFlag, addr)
	if err != nil {
		return nil, err
	}
	r := &receiverProcess{child: child, base: "http://" + addr, client: &http.Client{Timeout: 30 * time.Second}}
	if _, err := child.WaitReady(ctx, r.base+countsPath); err != nil {
		child.Stop()
		return nil, err
	}
	return r, nil
}

func (r *receiverProcess) hooksURL() string { return r.base + hooksPath }

func (r *receiverProcess) close() { r.child.Stop() }

// get asks the receiver; a failure ends the benchmark's view of it, so it
// panics rather than measure on.
func (r *receiverProcess) get(path string, v any) {
	resp, err := r.client.Get(r.base + path)
	if err != nil {
		panic(fmt.Sprintf("receiver %s: %v", path, err))
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		panic(fmt.Sprintf("receiver %s: %v", path, err))
	}
}

func (r *receiverProcess) received() int {
	var c counts
	r.get(countsPath, &c)
	return c.Received
}

func (r *receiverProcess) receipts() (first map[string]receipt, dups int) {
	var w wireReceipts
	r.get(receiptsPath, &w)
	first = make(map[string]receipt, len(w.First))
	for id, v := range w.First {
		first[id] = receipt{at: time.Unix(0, v[0]), eventMs: v[1]}
	}
	return first, w.Dups
}

// missing asks the receiver how many of events it has not received.
func (r *receiverProcess) missing(events []created) int {
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = ev.id
	}
	body, err := json.Marshal(ids)
	if err != nil {
		panic(err)
	}
	resp, err := r.client.Post(r.base+missingPath, "application/json", bytes.NewReader(body))
	if err != nil {
		panic(fmt.Sprintf("receiver %s: %v", missingPath, err))
	}
	defer resp.Body.Close()
	var n int
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil {
		panic(fmt.Sprintf("receiver %s: %v", missingPath, err))
	}
	return n
}
