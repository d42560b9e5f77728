package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/health"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/webhook"
)

// The health pages: webhook deliveries and linked accounts of a recent
// window, drawn as charts with their tables, and one user's timeline.

const (
	healthWebhooksPath = "/dashboard/health/webhooks"
	healthAccountsPath = "/dashboard/health/accounts"
	healthUserPath     = "/dashboard/health/user"
	// failedShown is how many failed attempts each endpoint lists.
	failedShown = 10
	// timelineEach bounds each kind of a timeline's entries.
	timelineEach = 100
)

func (d *dashboard) mountHealth(handle func(string, http.HandlerFunc)) {
	handle("GET "+healthWebhooksPath, d.authed(d.deliveryHealth))
	handle("POST "+healthWebhooksPath+"/replay", d.authed(d.replayRange))
	handle("GET "+healthAccountsPath, d.authed(d.accountHealth))
	handle("GET "+healthUserPath, d.authed(d.userTimeline))
}

// windowLink is a tab of the window picker.
type windowLink struct {
	Name, Href string
	Current    bool
}

func windowLinks(path string, current health.Window) []windowLink {
	var out []windowLink
	for _, w := range health.Windows {
		out = append(out, windowLink{Name: w.Name, Href: path + "?window=" + w.Name, Current: w.Name == current.Name})
	}
	return out
}

// bucketLabel names a bucket by its start, in UTC.
func bucketLabel(w health.Window, t time.Time) string {
	if w.Span > 24*time.Hour {
		return t.UTC().Format("Jan 2 15:04")
	}
	return t.UTC().Format("15:04")
}

// percent rounds a rate to one decimal; NaN when there was nothing.
func percent(r float64) float64 {
	if r < 0 {
		return math.NaN()
	}
	return math.Round(r*10) / 10
}

// rateText shows a success rate, "—" when there was nothing to rate.
func rateText(r float64) string {
	if r < 0 {
		return "—"
	}
	return strconv.FormatFloat(percent(r), 'f', -1, 64) + "%"
}

func latencyText(e *health.EndpointDelivery, d time.Duration) string {
	if e.Succeeded+e.Failed == 0 {
		return "—"
	}
	return strconv.FormatFloat(ms(d), 'f', -1, 64) + " ms"
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*10) / 10 }

// deliveryCharts are an endpoint's (or every endpoint's) attempts and
// latency per bucket.
func deliveryCharts(id string, w health.Window, e *health.EndpointDelivery) (attempts, latency *chart) {
	attempts = &chart{ID: id + "-attempts", Title: "Delivery attempts, last " + w.Name, Axis: "From (UTC)", Bars: true}
	latency = &chart{ID: id + "-latency", Title: "Delivery latency percentiles, last " + w.Name, Axis: "From (UTC)", Unit: " ms"}
	ok := chartSeries{Name: "succeeded", Color: colorOK}
	failed := chartSeries{Name: "failed", Color: colorBad}
	p50 := chartSeries{Name: "p50", Color: colorP50}
	p95 := chartSeries{Name: "p95", Color: colorP95}
	p99 := chartSeries{Name: "p99", Color: colorP99}
	for _, b := range e.Buckets {
		l := bucketLabel(w, b.Start)
		attempts.Labels = append(attempts.Labels, l)
		latency.Labels = append(latency.Labels, l)
		ok.Values = append(ok.Values, float64(b.Succeeded))
		failed.Values = append(failed.Values, float64(b.Failed))
		if b.Succeeded+b.Failed == 0 {
			p50.Values, p95.Values, p99.Values = append(p50.Values, math.NaN()), append(p95.Values, math.NaN()), append(p99.Values, math.NaN())
			continue
		}
		p50.Values, p95.Values, p99.Values = append(p50.Values, ms(b.P50)), append(p95.Values, ms(b.P95)), append(p99.Values, ms(b.P99))
	}
	attempts.Series = []chartSeries{ok, failed}
	latency.Series = []chartSeries{p50, p95, p99}
	return attempts, latency
}

// Delivery health

type endpointHealth struct {
	Endpoint          *webhook.Endpoint
	Succeeded, Failed int
	// Rate and the percentiles are as shown ("—" without attempts).
	Rate              string
	P50, P95, P99     string
	Attempts, Latency *chart
	FailedAttempts    []*store.WebhookAttempt
	Pending           *webhook.Pending
	// ReplaySince and ReplayUntil fill the replay form (UTC, minutes).
	ReplaySince, ReplayUntil string
}

type deliveryHealthData struct {
	Windows   []windowLink
	Window    health.Window
	Since     time.Time
	Truncated bool
	MaxRows   int
	Rate      string
	Succeeded int
	Failed    int
	Endpoints []*endpointHealth
}

const formMinute = "2006-01-02T15:04"

func (d *dashboard) deliveryHealth(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	ctx := r.Context()
	now := time.Now().UTC()
	win := health.WindowNamed(r.URL.Query().Get("window"))
	sum, err := health.Deliveries(ctx, d.Store, p.Client.ID, win, now)
	if err != nil {
		return err
	}
	eps, err := d.Webhooks.List(ctx, p.Client.ID)
	if err != nil {
		return err
	}
	data := deliveryHealthData{Windows: windowLinks(healthWebhooksPath, win), Window: win, Since: sum.Since,
		Truncated: sum.Truncated, MaxRows: health.MaxRows, Rate: rateText(sum.SuccessRate()), Succeeded: sum.Succeeded, Failed: sum.Failed}
	for _, ep := range eps {
		e := sum.Endpoints[ep.ID]
		if e == nil {
			e = &health.EndpointDelivery{EndpointID: ep.ID}
			for _, s := range win.Buckets(now) {
				e.Buckets = append(e.Buckets, health.DeliveryBucket{Start: s})
			}
		}
		eh := &endpointHealth{Endpoint: ep, Succeeded: e.Succeeded, Failed: e.Failed, Rate: rateText(e.SuccessRate()),
			P50: latencyText(e, e.P50), P95: latencyText(e, e.P95), P99: latencyText(e, e.P99),
			ReplaySince: now.Add(-time.Hour).Format(formMinute), ReplayUntil: now.Format(formMinute)}
		eh.Attempts, eh.Latency = deliveryCharts(ep.ID, win, e)
		if eh.FailedAttempts, err = d.Store.WebhookAttemptsFailed(ctx, p.Client.ID, ep.ID, sum.Since, failedShown); err != nil {
			return err
		}
		if eh.Pending, err = d.Webhooks.OldestPending(ctx, p.Client.ID, ep.ID); err != nil {
			return err
		}
		data.Endpoints = append(data.Endpoints, eh)
	}
	d.render(w, r, http.StatusOK, "health_webhooks", &view{Title: "Delivery health", Active: "health_webhooks", P: p,
		Notice: notice(r), Data: data})
	return nil
}

// replayRange queues an endpoint's events of a time range again, as POST
// /webhooks/replay does, recorded as event.replay in its transaction.
func (d *dashboard) replayRange(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	id := r.PostFormValue("endpoint_id")
	params := webhook.ReplayParams{ClientID: p.Client.ID, EndpointID: id}
	var err error
	if params.Since, err = time.Parse(formMinute, r.PostFormValue("since")); err != nil {
		return &pageError{http.StatusBadRequest, "The From time must be a date and time such as 2026-01-15T09:30 (UTC)."}
	}
	if params.Until, err = time.Parse(formMinute, r.PostFormValue("until")); err != nil {
		return &pageError{http.StatusBadRequest, "The To time must be a date and time such as 2026-01-15T10:30 (UTC)."}
	}
	// The form is to the minute: To takes in the whole of its minute.
	params.Until = params.Until.Add(time.Minute - time.Microsecond)
	n, err := d.Webhooks.Replay(r.Context(), params,
		d.auditAlso(r, p, audit.ActionEventReplay, audit.TargetWebhookEndpoint, d.endpointName(r, p, id)))
	if errors.Is(err, webhook.ErrNotFound) {
		return &pageError{http.StatusNotFound, "There is no such webhook endpoint."}
	}
	if err != nil {
		return err
	}
	done := "events.replayed"
	if n == 0 {
		done = "events.replayed.none"
	}
	return redirect(w, r, healthWebhooksPath, done)
}

// Account health

type merchantHealth struct {
	Name string
	*health.MerchantAccounts
	// Reasons are the card switch failures' reasons, most frequent first.
	Reasons []reasonCount
}

type reasonCount struct {
	Reason string
	Count  int
}

type accountHealthData struct {
	Windows   []windowLink
	Window    health.Window
	Truncated bool
	MaxRows   int
	*health.Accounts
	Logins    *chart
	Merchants []*merchantHealth
}

// loginChart draws the window's login steps per bucket.
func loginChart(id string, a *health.Accounts) *chart {
	c := &chart{ID: id, Title: "Logins, last " + a.Window.Name, Axis: "From (UTC)", Bars: true}
	ok := chartSeries{Name: "authenticated", Color: colorOK}
	failed := chartSeries{Name: "failed", Color: colorBad}
	steps := chartSeries{Name: "other steps", Color: colorMore}
	for _, b := range a.Logins {
		c.Labels = append(c.Labels, bucketLabel(a.Window, b.Start))
		ok.Values = append(ok.Values, float64(b.Authenticated))
		failed.Values = append(failed.Values, float64(b.Failed))
		steps.Values = append(steps.Values, float64(b.Steps))
	}
	c.Series = []chartSeries{ok, failed, steps}
	return c
}

func (d *dashboard) accountHealth(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	win := health.WindowNamed(r.URL.Query().Get("window"))
	a, err := health.AccountHealth(r.Context(), d.Store, p.Client.ID, win, time.Now())
	if err != nil {
		return err
	}
	data := accountHealthData{Windows: windowLinks(healthAccountsPath, win), Window: win, Truncated: a.Truncated,
		MaxRows: health.MaxRows, Accounts: a, Logins: loginChart("logins", a)}
	for _, m := range a.Merchants {
		mh := &merchantHealth{Name: merchantName(d.cfg.Catalog, m.MerchantID), MerchantAccounts: m}
		for reason, n := range m.CardReasons {
			if reason == "" {
				reason = "(none given)"
			}
			mh.Reasons = append(mh.Reasons, reasonCount{reason, n})
		}
		slices.SortFunc(mh.Reasons, func(x, y reasonCount) int {
			if x.Count != y.Count {
				return y.Count - x.Count
			}
			return strings.Compare(x.Reason, y.Reason)
		})
		data.Merchants = append(data.Merchants, mh)
	}
	d.render(w, r, http.StatusOK, "health_accounts", &view{Title: "Account health", Active: "health_accounts", P: p, Data: data})
	return nil
}

// A user's timeline

type timelineEntry struct {
	At       time.Time
	Kind     string // login, event, transaction, card task
	Merchant string
	What     string
	// EventID links an event to its page.
	EventID string
}

type timelineData struct {
	User    *store.User
	Entries []timelineEntry
	Each    int
}

// userTimeline lists a user's login steps, events, transactions and card
// tasks in the order they happened (the latest timelineEach of each).
// Like the user page it shows personal data: it is audited as user.view,
// and refused when another site sent the browser to it.
func (d *dashboard) userTimeline(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if err := refuseOtherSites(r); err != nil {
		return err
	}
	ctx := r.Context()
	externalID := r.URL.Query().Get("id")
	u, err := d.Store.UserGet(ctx, p.Client.ID, externalID)
	if errors.Is(err, store.ErrNotFound) {
		return &pageError{http.StatusNotFound, "There is no user with this external_user_id."}
	}
	if err != nil {
		return err
	}
	data := timelineData{User: u, Each: timelineEach}
	logins, err := d.Store.AccountLoginsOfUser(ctx, p.Client.ID, u.ID, timelineEach)
	if err != nil {
		return err
	}
	for _, l := range logins {
		name := merchantName(d.cfg.Catalog, l.MerchantID)
		data.Entries = append(data.Entries, timelineEntry{At: l.CreatedAt, Kind: "login", Merchant: name,
			What: l.Status + " (" + l.Product + ")"})
	}
	evs, err := d.Store.EventList(ctx, &store.EventListParams{ClientID: p.Client.ID, ExternalUserID: externalID, Limit: timelineEach})
	if err != nil {
		return err
	}
	for _, ev := range evs {
		m := ""
		if id := gjson.GetBytes(ev.Payload, "merchant.id"); id.Exists() {
			m = merchantName(d.cfg.Catalog, id.Int())
		}
		data.Entries = append(data.Entries, timelineEntry{At: ev.CreatedAt, Kind: "event", Merchant: m, What: ev.Type, EventID: ev.ID})
	}
	txs, err := d.Store.TransactionsOfUser(ctx, p.Client.ID, u.ID, timelineEach)
	if err != nil {
		return err
	}
	for _, t := range txs {
		doc := gjson.ParseBytes(t.SyncJSON)
		what := fmt.Sprintf("%s %s %s", doc.Get("id").String(), doc.Get("price.total").String(), doc.Get("price.currency").String())
		data.Entries = append(data.Entries, timelineEntry{At: t.CreatedAt, Kind: "transaction", Merchant: merchantName(d.cfg.Catalog, t.MerchantID),
			What: strings.TrimSpace(what)})
	}
	tasks, err := d.Store.TaskListByUser(ctx, p.Client.ID, u.ID, timelineEach)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		what := t.Product + " " + t.Status
		if t.Reason != nil {
			what += ": " + *t.Reason
		}
		data.Entries = append(data.Entries, timelineEntry{At: t.CreatedAt, Kind: "card task", Merchant: merchantName(d.cfg.Catalog, t.MerchantID),
			What: what})
		if t.FinishedAt != nil && !t.FinishedAt.Equal(t.CreatedAt) {
			data.Entries = append(data.Entries, timelineEntry{At: *t.FinishedAt, Kind: "card task", Merchant: merchantName(d.cfg.Catalog, t.MerchantID),
				What: t.Product + " ended " + t.Status})
		}
	}
	slices.SortStableFunc(data.Entries, func(a, b timelineEntry) int { return a.At.Compare(b.At) })
	if err := d.Store.InTx(ctx, d.auditAlso(r, p, audit.ActionUserView, audit.TargetUser, &externalID)); err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "timeline", &view{Title: "Timeline of " + externalID, Active: "health_accounts", P: p, Data: data})
	return nil
}
