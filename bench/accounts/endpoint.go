package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// endpoint is what --endpoint loads: the fixture it needs, the request sent
// again and again, and the throughput target it is held to.
type endpoint struct {
	// name is the --endpoint value.
	name string
	// title heads the report.
	title string
	// method and path (with its query) make the request; body, unless nil,
	// is its JSON body.
	method, path string
	body         []byte
	// throughputPercent is the target for Hitch's req/s as a percentage of
	// the bare handler's.
	throughputPercent int
	// targetsOnPostgres says the targets hold on PostgreSQL too, not only
	// on SQLite.
	targetsOnPostgres bool
	// prepare makes the fixture in a fresh Hitch and returns the answer,
	// fetched once, that every request under load must get.
	prepare func(ctx context.Context, launcher *hitch.Launcher, api *hitch.APIClient) ([]byte, error)
}

// endpoints are the --endpoint values, the default first.
var endpoints = []endpoint{
	{
		name:              "accounts",
		title:             fmt.Sprintf("GET /accounts/get, %d linked accounts", hitch.LinkedAccounts),
		method:            http.MethodGet,
		path:              hitch.AccountsPath,
		throughputPercent: 40,
		prepare: func(ctx context.Context, launcher *hitch.Launcher, api *hitch.APIClient) ([]byte, error) {
			launcher.Progress("linking %d accounts to %s", hitch.LinkedAccounts, hitch.ExternalUserID)
			if err := hitch.LinkAccounts(ctx, api); err != nil {
				return nil, err
			}
			return hitch.FetchAccounts(ctx, api)
		},
	},
	{
		name:              "account",
		title:             "GET /accounts/get for one merchant",
		method:            http.MethodGet,
		path:              hitch.AccountPath,
		throughputPercent: 40,
		prepare: func(ctx context.Context, launcher *hitch.Launcher, api *hitch.APIClient) ([]byte, error) {
			launcher.Progress("linking %d accounts to %s", hitch.LinkedAccounts, hitch.ExternalUserID)
			if err := hitch.LinkAccounts(ctx, api); err != nil {
				return nil, err
			}
			return hitch.FetchAccount(ctx, api)
		},
	},
	{
		name:              "sync",
		title:             fmt.Sprintf("POST /transactions/sync, limit %d, full pages", hitch.SyncLimit),
		method:            http.MethodPost,
		path:              hitch.SyncPath,
		body:              hitch.SyncBody(),
		throughputPercent: 30,
		targetsOnPostgres: true,
		prepare: func(ctx context.Context, launcher *hitch.Launcher, api *hitch.APIClient) ([]byte, error) {
			launcher.Progress("linking merchant %d to %s with transactions", hitch.SyncMerchantID, hitch.SyncUser)
			if err := hitch.LinkTransactions(ctx, api); err != nil {
				return nil, err
			}
			return hitch.FetchSyncPage(ctx, api)
		},
	},
}

// endpointNamed is the endpoint --endpoint name selects.
func endpointNamed(name string) (endpoint, error) {
	var names []string
	for _, ep := range endpoints {
		if ep.name == name {
			return ep, nil
		}
		names = append(names, ep.name)
	}
	return endpoint{}, fmt.Errorf("--endpoint %q: want one of %s", name, strings.Join(names, ", "))
}

// route is the method and the path, without its query, that the bare
// handler serves.
func (ep endpoint) route() (method, path string) {
	path, _, _ = strings.Cut(ep.path, "?")
	return ep.method, path
}
