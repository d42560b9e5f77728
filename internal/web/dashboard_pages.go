package web

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/health"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/webhook"
)

// Overview

// overviewData are the few figures that matter now: delivery success and
// accounts needing a new login, with the day's charts, and the team's
// latest audit records.
type overviewData struct {
	DeliveryRate string
	Deliveries   *health.Delivery
	Attempts     *chart
	Accounts     *health.Accounts
	Logins       *chart
	Requests     *requestsToday
	Recent       []*store.AuditRecord
}

// requestsToday is the overview's tile of the day's API requests.
type requestsToday struct {
	*health.Requests
	ErrorRate string
	Chart     *chart
}

// requestsToday counts the last day's API requests from the request log;
// nil when the deployment keeps none (--request-log-retention 0).
func (d *dashboard) requestsToday(ctx context.Context, p *member.Principal, w health.Window, now time.Time) (*requestsToday, error) {
	if d.RequestLog == nil {
		return nil, nil
	}
	r, err := health.RequestCounts(ctx, d.Store, p.Client.ID, w, now)
	if err != nil {
		return nil, err
	}
	c := &chart{ID: "overview-requests-chart", Title: "API requests, last " + w.Name, Axis: "From (UTC)", Bars: true}
	ok := chartSeries{Name: "answered", Color: colorOK}
	failed := chartSeries{Name: "errors", Color: colorBad}
	for _, b := range r.Buckets {
		c.Labels = append(c.Labels, bucketLabel(w, b.Start))
		ok.Values = append(ok.Values, float64(b.Requests-b.Errors))
		failed.Values = append(failed.Values, float64(b.Errors))
	}
	c.Series = []chartSeries{ok, failed}
	return &requestsToday{Requests: r, ErrorRate: rateText(r.ErrorRate()), Chart: c}, nil
}

func (d *dashboard) overview(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	ctx := r.Context()
	now := time.Now()
	day := health.WindowNamed("day")
	var data overviewData
	var err error
	if data.Deliveries, err = health.Deliveries(ctx, d.Store, p.Client.ID, day, now); err != nil {
		return err
	}
	data.DeliveryRate = rateText(data.Deliveries.SuccessRate())
	data.Attempts, _ = deliveryCharts("overview", day, data.Deliveries.All)
	if data.Accounts, err = health.AccountHealth(ctx, d.Store, p.Client.ID, day, now); err != nil {
		return err
	}
	data.Logins = loginChart("overview-logins", data.Accounts)
	if data.Requests, err = d.requestsToday(ctx, p, day, now); err != nil {
		return err
	}
	if data.Recent, err = d.Store.AuditRecordList(ctx, &store.AuditRecordListParams{ClientID: p.Client.ID, Limit: 10}); err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "overview", &view{Title: "Overview", Active: "overview", P: p, Notice: notice(r), Data: data})
	return nil
}

// Audit log

type auditData struct {
	PerPage int
	Records []*store.AuditRecord
	// From and To are the date filter as given (YYYY-MM-DD, UTC).
	From, To string
	// Next is the next page's path, First the first page's when this is a
	// later one; "" when there is none.
	Next, First string
}

const auditPerPage = 50

// auditLog lists the team's audit records, newest first, with the page
// cursors of GET /audit_logs (one listing, audit.List). Reading the log is
// not recorded: it holds nothing the member's role may not see, and a
// record per page view would bury the actions the log is for.
func (d *dashboard) auditLog(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	q := r.URL.Query()
	data := auditData{PerPage: auditPerPage, From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to"))}
	v := &view{Title: "Audit log", Active: "audit", P: p, Data: &data}
	params := audit.ListParams{ClientID: p.Client.ID, Cursor: q.Get("cursor"), Limit: auditPerPage}
	if params.Since, params.Until, v.Error = auditDates(data.From, data.To); v.Error != "" {
		d.render(w, r, http.StatusBadRequest, "audit", v)
		return nil
	}
	page, err := audit.List(r.Context(), d.Store, params)
	if errors.Is(err, audit.ErrInvalidCursor) {
		return &pageError{http.StatusBadRequest, "This page link is not one the audit log made. Start again from its first page."}
	}
	if err != nil {
		return err
	}
	data.Records = page.Records
	filter := url.Values{}
	if data.From != "" {
		filter.Set("from", data.From)
	}
	if data.To != "" {
		filter.Set("to", data.To)
	}
	if params.Cursor != "" {
		data.First = "/dashboard/audit?" + filter.Encode()
	}
	if page.NextCursor != "" {
		next := maps.Clone(filter)
		next.Set("cursor", page.NextCursor)
		data.Next = "/dashboard/audit?" + next.Encode()
	}
	d.render(w, r, http.StatusOK, "audit", v)
	return nil
}

// auditDates reads the audit page's optional date filter, whole UTC days
// both included, as the bounds of the records' time; problem says what is
// wrong with it, "" when nothing is.
func auditDates(from, to string) (since, until *time.Time, problem string) {
	day := func(label, raw string) *time.Time {
		if raw == "" || problem != "" {
			return nil
		}
		t, err := time.Parse(time.DateOnly, raw)
		if err != nil {
			problem = "The " + label + " date must be a date such as 2026-01-15."
			return nil
		}
		return &t
	}
	since, until = day("From", from), day("To", to)
	if until != nil {
		end := until.Add(24*time.Hour - time.Microsecond)
		until = &end
		if since != nil && end.Before(*since) {
			problem = "The To date is before the From date."
		}
	}
	if problem != "" {
		return nil, nil, problem
	}
	return since, until, ""
}

// API credentials

func (d *dashboard) credentials(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	d.render(w, r, http.StatusOK, "credentials", &view{Title: "API credentials", Active: "credentials", P: p, Notice: notice(r)})
	return nil
}

// revealSecret shows the current API secret, opened from its sealed copy;
// the view is audited.
func (d *dashboard) revealSecret(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.Administer) {
		return forbidden()
	}
	secret, err := d.Developers.CurrentSecret(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	err = d.Store.InTx(r.Context(), func(ex store.Executor) error {
		_, err := d.Audit.Write(r.Context(), ex, p.Entry(audit.ActionSecretView, audit.TargetSecret, nil, origin(r)))
		return err
	})
	if err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "credentials", &view{Title: "API credentials", Active: "credentials", P: p,
		Shown: &shown{Label: "Secret", Value: secret, Note: "Keep it in your secret manager; it is shown until you leave this page."}})
	return nil
}

func (d *dashboard) rotateSecret(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.Administer) {
		return forbidden()
	}
	creds, err := d.Developers.RotateSecret(r.Context(), p.Client.ID, d.SecretGrace, func(ex store.Executor) error {
		_, err := d.Audit.Write(r.Context(), ex, p.Entry(audit.ActionSecretRotate, audit.TargetSecret, nil, origin(r)))
		return err
	})
	if err != nil {
		return err
	}
	note := "The previous secret keeps working until " + shortTime(time.Now().Add(d.SecretGrace)) + "."
	if d.SecretGrace == 0 {
		note = "The previous secret no longer works."
	}
	d.render(w, r, http.StatusOK, "credentials", &view{Title: "API credentials", Active: "credentials", P: p,
		Notice: "The secret was rotated.", Shown: &shown{Label: "New secret", Value: creds.Secret, Note: note}})
	return nil
}

// Members

type membersData struct {
	Members []*store.Member
	Roles   []string
}

func (d *dashboard) renderMembers(w http.ResponseWriter, r *http.Request, p *member.Principal, v *view) error {
	members, err := d.Members.List(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	v.Title, v.Active, v.P, v.Data = "Members", "members", p, membersData{Members: members, Roles: member.Roles}
	d.render(w, r, http.StatusOK, "members", v)
	return nil
}

func (d *dashboard) members(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	return d.renderMembers(w, r, p, &view{Notice: notice(r)})
}

func (d *dashboard) addMember(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	m, password, err := d.Members.Add(r.Context(), p, member.AddParams{ClientID: p.Client.ID, Email: r.PostFormValue("email"),
		Name: r.PostFormValue("name"), Role: r.PostFormValue("role")}, origin(r))
	if err != nil {
		return err
	}
	return d.renderMembers(w, r, p, &view{Notice: m.Email + " was added as " + m.Role + ".",
		Shown: &shown{Label: "Password of " + m.Email, Value: password,
			Note: "Give it to them privately: it is shown only now, and Hitch keeps only its hash."}})
}

func (d *dashboard) setRole(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if err := d.Members.SetRole(r.Context(), p, r.PathValue("id"), r.PostFormValue("role"), origin(r)); err != nil {
		return err
	}
	return redirect(w, r, "/dashboard/members", "member.role")
}

func (d *dashboard) removeMember(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if err := d.Members.Remove(r.Context(), p, r.PathValue("id"), origin(r)); err != nil {
		return err
	}
	if r.PathValue("id") == p.Member.ID {
		d.clearCookie(w, sessionCookie)
		return redirect(w, r, signinPath, "")
	}
	return redirect(w, r, "/dashboard/members", "member.removed")
}

// Webhooks

type webhooksData struct {
	Endpoints  []*webhook.Endpoint
	Events     []*store.Event
	NextBefore string
	EventTypes []string
}

const eventsPerPage = 20

func (d *dashboard) renderWebhooks(w http.ResponseWriter, r *http.Request, p *member.Principal, v *view) error {
	ctx := r.Context()
	eps, err := d.Webhooks.List(ctx, p.Client.ID)
	if err != nil {
		return err
	}
	params := &store.EventListParams{ClientID: p.Client.ID, Limit: eventsPerPage + 1}
	if before := r.URL.Query().Get("before"); before != "" {
		if _, err := uuid.Parse(before); err == nil {
			params.Before = before
		}
	}
	evs, err := d.Store.EventList(ctx, params)
	if err != nil {
		return err
	}
	data := webhooksData{Endpoints: eps, EventTypes: event.Types}
	if len(evs) > eventsPerPage {
		evs = evs[:eventsPerPage]
		data.NextBefore = evs[len(evs)-1].ID
	}
	data.Events = evs
	v.Title, v.Active, v.P, v.Data = "Webhooks", "webhooks", p, data
	d.render(w, r, http.StatusOK, "webhooks", v)
	return nil
}

func (d *dashboard) webhooks(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	return d.renderWebhooks(w, r, p, &view{Notice: notice(r)})
}

// auditAlso writes the principal's record in an action's transaction.
func (d *dashboard) auditAlso(r *http.Request, p *member.Principal, action, targetType string, targetName *string) func(store.Executor) error {
	return func(ex store.Executor) error {
		_, err := d.Audit.Write(r.Context(), ex, p.Entry(action, targetType, targetName, origin(r)))
		return err
	}
}

func (d *dashboard) addEndpoint(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	u := strings.TrimSpace(r.PostFormValue("url"))
	types := r.PostForm["events"]
	ep, secret, err := d.Webhooks.Create(r.Context(), webhook.CreateParams{ClientID: p.Client.ID, URL: u, EventTypes: types},
		d.auditAlso(r, p, audit.ActionWebhookAdd, audit.TargetWebhookEndpoint, &u))
	if err != nil {
		return err
	}
	return d.renderWebhooks(w, r, p, &view{Notice: "The endpoint " + ep.URL + " was added.",
		Shown: &shown{Label: "Signing secret of " + ep.URL, Value: secret, Note: "Deliveries are signed with it; it is shown only now."}})
}

// endpointName is the URL of the developer's endpoint id, for the audit
// record, or the id when there is no such endpoint (the action then fails).
func (d *dashboard) endpointName(r *http.Request, p *member.Principal, id string) *string {
	if ep, err := d.Webhooks.Get(r.Context(), p.Client.ID, id); err == nil {
		return &ep.URL
	}
	return &id
}

func (d *dashboard) removeEndpoint(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	id := r.PathValue("id")
	if err := d.Webhooks.Delete(r.Context(), p.Client.ID, id,
		d.auditAlso(r, p, audit.ActionWebhookRemove, audit.TargetWebhookEndpoint, d.endpointName(r, p, id))); err != nil {
		return err
	}
	return redirect(w, r, "/dashboard/webhooks", "webhook.removed")
}

func (d *dashboard) rotateEndpoint(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	id := r.PathValue("id")
	ep, secret, err := d.Webhooks.RotateSecret(r.Context(), p.Client.ID, id,
		d.auditAlso(r, p, audit.ActionWebhookUpdate, audit.TargetWebhookEndpoint, d.endpointName(r, p, id)))
	if err != nil {
		return err
	}
	return d.renderWebhooks(w, r, p, &view{Notice: "The signing secret of " + ep.URL + " was rotated.",
		Shown: &shown{Label: "New signing secret of " + ep.URL, Value: secret,
			Note: "The previous secret keeps signing beside it for a while, so your receiver can switch."}})
}

type endpointData struct {
	Endpoint *webhook.Endpoint
	// URL and Selected are what the form shows: the endpoint's, or what was
	// sent when it was refused.
	URL        string
	Selected   map[string]bool
	EventTypes []string
}

func (d *dashboard) renderEndpoint(w http.ResponseWriter, r *http.Request, p *member.Principal, status int, ep *webhook.Endpoint,
	u string, types []string, message string) {
	data := endpointData{Endpoint: ep, URL: u, Selected: map[string]bool{}, EventTypes: event.Types}
	for _, t := range types {
		data.Selected[t] = true
	}
	d.render(w, r, status, "endpoint", &view{Title: "Edit endpoint", Active: "webhooks", P: p, Error: message, Data: data})
}

// endpoint shows the form that edits an endpoint's URL and event filter.
func (d *dashboard) endpoint(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	ep, err := d.Webhooks.Get(r.Context(), p.Client.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	d.renderEndpoint(w, r, p, http.StatusOK, ep, ep.URL, ep.EventTypes, "")
	return nil
}

// editEndpoint changes an endpoint's URL and event filter, checked as when
// adding one; a refused change shows the form again and changes nothing.
func (d *dashboard) editEndpoint(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	id := r.PathValue("id")
	u := strings.TrimSpace(r.PostFormValue("url"))
	types := r.PostForm["events"]
	if types == nil {
		types = []string{} // none checked: every event
	}
	// The record names the URL deliveries go to from now on.
	_, err := d.Webhooks.Update(r.Context(), webhook.UpdateParams{ClientID: p.Client.ID, ID: id, URL: &u, EventTypes: &types},
		d.auditAlso(r, p, audit.ActionWebhookEdit, audit.TargetWebhookEndpoint, &u))
	var invalid *field.Error
	if errors.As(err, &invalid) {
		ep, err := d.Webhooks.Get(r.Context(), p.Client.ID, id)
		if err != nil {
			return err
		}
		d.renderEndpoint(w, r, p, http.StatusBadRequest, ep, u, types,
			"The "+invalid.Field+" "+invalid.Message+". Nothing was changed.")
		return nil
	}
	if err != nil {
		return err
	}
	return redirect(w, r, "/dashboard/webhooks", "webhook.updated")
}

func (d *dashboard) testWebhook(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	if _, err := d.Webhooks.Test(r.Context(), p.Client.ID, "This is a test event sent from the Hitch dashboard.",
		d.auditAlso(r, p, audit.ActionWebhookTest, audit.TargetWebhookEndpoint, nil)); err != nil {
		return err
	}
	return redirect(w, r, "/dashboard/webhooks", "webhook.tested")
}

type eventData struct {
	Event    *store.Event
	Payload  string
	Attempts []*store.WebhookAttempt
	// Endpoints are those the event goes to when it happens: the choices
	// of a resend.
	Endpoints []*webhook.Endpoint
}

func (d *dashboard) eventPage(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		return webhook.ErrEventNotFound
	}
	ev, err := d.Store.EventGet(r.Context(), p.Client.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return webhook.ErrEventNotFound
	}
	if err != nil {
		return err
	}
	attempts, err := d.Store.WebhookAttemptList(r.Context(), p.Client.ID, id)
	if err != nil {
		return err
	}
	eps, err := d.Webhooks.List(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	data := eventData{Event: ev, Payload: gjson.ParseBytes(ev.Payload).Get("@pretty").String(), Attempts: attempts}
	for _, ep := range eps {
		if ep.Takes(ev.Type) {
			data.Endpoints = append(data.Endpoints, ep)
		}
	}
	d.render(w, r, http.StatusOK, "event", &view{Title: "Event " + ev.Type, Active: "webhooks", P: p, Notice: notice(r), Data: data})
	return nil
}

func (d *dashboard) resendEvent(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.ManageWebhooks) {
		return forbidden()
	}
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		return webhook.ErrEventNotFound
	}
	// One endpoint (whatever its filter, as POST /webhooks/events/{id}/resend
	// with endpoint_id), or "" for every enabled endpoint that takes it.
	endpointID := r.PostFormValue("endpoint_id")
	n, err := d.Webhooks.Resend(r.Context(), p.Client.ID, id, endpointID,
		d.auditAlso(r, p, audit.ActionEventResend, audit.TargetEvent, &id))
	if err != nil {
		return err
	}
	done := "event.resent"
	switch {
	case n == 0:
		done = "event.resent.none"
	case endpointID != "":
		done = "event.resent.one"
	}
	return redirect(w, r, "/dashboard/webhooks/events/"+id, done)
}

// Users and their data

type usersData struct {
	Query     string
	Users     []*store.User
	NextAfter string
}

const usersPerPage = 25

func (d *dashboard) users(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	q := r.URL.Query()
	data := usersData{Query: strings.TrimSpace(q.Get("q"))}
	if len(data.Query) > 255 {
		data.Query = data.Query[:255]
	}
	users, err := d.Store.UserList(r.Context(), &store.UserListParams{ClientID: p.Client.ID, Prefix: data.Query,
		After: q.Get("after"), Limit: usersPerPage + 1})
	if err != nil {
		return err
	}
	if len(users) > usersPerPage {
		users = users[:usersPerPage]
		data.NextAfter = users[len(users)-1].ExternalUserID
	}
	data.Users = users
	d.render(w, r, http.StatusOK, "users", &view{Title: "Users", Active: "users", P: p, Data: data})
	return nil
}

type accountView struct {
	MerchantName string
	*store.Account
	Transactions []transactionView
	// NextAfter is the position the next page of transactions starts
	// after (0: no more).
	NextAfter int64
}

type transactionView struct {
	ID, Datetime, Status, Total, Currency string
	Products                              int
}

type subscriptionView struct {
	ID, Merchant, Status, Plan, Amount, Currency, NextBilling string
}

type userData struct {
	User          *store.User
	Accounts      []*accountView
	Subscriptions []subscriptionView
	Detected      []*store.DetectedAccount
	// Account and After page one account's transactions.
	Account int64
	After   int64
}

const transactionsPerPage = 20

// user shows one user's linked accounts, transactions, subscriptions and
// detected accounts. Each view is audited: it is personal data.
func (d *dashboard) user(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if err := refuseOtherSites(r); err != nil {
		return err
	}
	ctx := r.Context()
	q := r.URL.Query()
	externalID := q.Get("id")
	u, err := d.Store.UserGet(ctx, p.Client.ID, externalID)
	if errors.Is(err, store.ErrNotFound) {
		return &pageError{http.StatusNotFound, "There is no user with this external_user_id."}
	}
	if err != nil {
		return err
	}
	data := userData{User: u}
	data.Account, _ = strconv.ParseInt(q.Get("account"), 10, 64)
	data.After, _ = strconv.ParseInt(q.Get("after"), 10, 64)
	accounts, err := d.Store.AccountList(ctx, &store.AccountListParams{ClientID: p.Client.ID, ExternalUserID: externalID})
	if err != nil {
		return err
	}
	for _, a := range accounts {
		full, err := d.Store.AccountGet(ctx, &store.AccountGetParams{ClientID: p.Client.ID, UserID: u.ID, MerchantID: a.MerchantID})
		if err != nil {
			return err
		}
		av := &accountView{Account: full, MerchantName: merchantName(d.cfg.Catalog, a.MerchantID)}
		after := int64(0)
		if a.MerchantID == data.Account {
			after = max(data.After, 0)
		}
		rows, err := d.Store.TransactionPage(ctx, p.Client.ID, full.ID, after, transactionsPerPage+1)
		if err != nil {
			return err
		}
		if len(rows) > transactionsPerPage {
			rows = rows[:transactionsPerPage]
			av.NextAfter = rows[len(rows)-1].Position
		}
		for _, row := range rows {
			t := gjson.ParseBytes(row.SyncJSON)
			when := t.Get("datetime").String()
			if at, err := time.Parse(time.RFC3339Nano, when); err == nil {
				when = at.UTC().Format("2006-01-02 15:04")
			}
			av.Transactions = append(av.Transactions, transactionView{ID: t.Get("id").String(), Datetime: when,
				Status: t.Get("order_status").String(), Total: t.Get("price.total").String(),
				Currency: t.Get("price.currency").String(), Products: int(t.Get("products.#").Int())})
		}
		ids, err := d.Store.SubscriptionIDs(ctx, p.Client.ID, full.ID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			doc, err := d.Store.SubscriptionGet(ctx, p.Client.ID, id)
			if err != nil {
				return err
			}
			s := gjson.ParseBytes(doc)
			data.Subscriptions = append(data.Subscriptions, subscriptionView{ID: id, Merchant: av.MerchantName,
				Status: s.Get("status").String(), Plan: s.Get("name").String(), Amount: s.Get("price.total").String(),
				Currency: s.Get("price.currency").String(), NextBilling: s.Get("next_billing_date").String()})
		}
		data.Accounts = append(data.Accounts, av)
	}
	if data.Detected, err = d.Store.DetectedAccountList(ctx, &store.DetectedAccountListParams{ClientID: p.Client.ID, UserID: u.ID,
		Limit: 200}); err != nil {
		return err
	}
	err = d.Store.InTx(ctx, d.auditAlso(r, p, audit.ActionUserView, audit.TargetUser, &externalID))
	if err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "user", &view{Title: "User " + externalID, Active: "users", P: p, Data: data})
	return nil
}

func merchantName(c *merchant.Catalog, id int64) string {
	if m, ok := c.Get(id); ok {
		return m.Name
	}
	return "Merchant " + strconv.FormatInt(id, 10)
}

// Merchants

type merchantRow struct {
	*merchant.Merchant
	Label  string
	Hidden bool
}

type merchantsData struct {
	Query     string
	Merchants []merchantRow
	Hidden    int
}

func (d *dashboard) merchants(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	hidden, err := d.Links.Hidden(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	data := merchantsData{Query: strings.TrimSpace(r.URL.Query().Get("q")), Hidden: len(hidden)}
	if len(data.Query) > 100 {
		data.Query = data.Query[:100]
	}
	for _, m := range d.cfg.Catalog.List("", data.Query) {
		data.Merchants = append(data.Merchants, merchantRow{Merchant: m, Label: categoryLabel(m.Category), Hidden: hidden[m.ID]})
	}
	d.render(w, r, http.StatusOK, "merchants", &view{Title: "Merchants", Active: "merchants", P: p, Notice: notice(r), Data: data})
	return nil
}

func (d *dashboard) setMerchantHidden(w http.ResponseWriter, r *http.Request, p *member.Principal, hide bool) error {
	if !p.Can(member.Administer) {
		return forbidden()
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	m, ok := d.cfg.Catalog.Get(id)
	if err != nil || !ok {
		return &pageError{http.StatusNotFound, "There is no such merchant."}
	}
	action, done := audit.ActionMerchantShow, "merchant.shown"
	if hide {
		action, done = audit.ActionMerchantHide, "merchant.hidden"
	}
	if err := d.Links.SetHidden(r.Context(), p.Client.ID, id, hide, d.auditAlso(r, p, action, audit.TargetMerchant, &m.Name)); err != nil {
		return err
	}
	back := "/dashboard/merchants"
	if q := r.PostFormValue("q"); q != "" {
		back += "?q=" + url.QueryEscape(q) + "&"
	} else {
		back += "?"
	}
	http.Redirect(w, r, back+"notice="+done, http.StatusSeeOther)
	return nil
}

func (d *dashboard) hideMerchant(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	return d.setMerchantHidden(w, r, p, true)
}

func (d *dashboard) showMerchant(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	return d.setMerchantHidden(w, r, p, false)
}
