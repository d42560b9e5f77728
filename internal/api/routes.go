package api

import "net/http"

// routes is the whole API on one screen.
func (s *Server) routes() {
	m := routeTable{s}
	// Operations and the contract: no credentials.
	m.Handle("GET /healthz", s.public(s.healthz))
	m.Handle("GET /readyz", s.public(s.readyz))
	m.Handle("GET /openapi.yaml", s.public(s.openAPI))
	m.Handle("GET /merchants/{id}/logo.svg", s.public(s.merchantLogo))
	if s.Metrics != nil {
		m.Handle("GET /metrics", s.metricsHandler())
	}

	// Sessions.
	m.Handle("POST /session/create", s.authed(s.createSession))
	m.Handle("POST /session/extend", s.authed(s.extendSession))

	// Merchants and merchant accounts.
	m.Handle("POST /merchant/list", s.authed(s.listMerchants))
	m.Handle("GET /accounts/get", s.authed(s.getAccounts))
	m.Handle("POST /accounts/unlink", s.authed(s.unlinkAccount))

	// Transactions and subscriptions.
	m.Handle("POST /transactions/sync", s.authed(s.syncTransactions))
	m.Handle("GET /transactions/{id}", s.authed(s.getTransaction))
	m.Handle("GET /subscriptions/{id}", s.authed(s.getSubscription))

	// Detection.
	m.Handle("POST /detect", s.authed(s.detect))
	m.Handle("POST /detected-accounts/search", s.authed(s.searchDetected))
	m.Handle("POST /detected_accounts/identify", s.authed(s.identifyDetected))
	m.Handle("GET /detected_accounts/get", s.authed(s.getDetected))
	m.Handle("POST /detected-accounts/list", s.authed(s.listDetected))
	m.Handle("POST /detected-accounts/sync", s.authed(s.syncDetected)) // deprecated

	// Card data.
	m.Handle("GET /jwe/key", s.authed(s.jweKey))
	m.Handle("GET /jwe/keys", s.authed(s.jweKeys))
	m.Handle("POST /card", s.authed(s.submitCard))

	// Webhooks.
	m.Handle("GET /webhooks/endpoints", s.authed(s.listEndpoints))
	m.Handle("POST /webhooks/endpoints", s.authed(s.createEndpoint))
	m.Handle("PATCH /webhooks/endpoints/{id}", s.authed(s.updateEndpoint))
	m.Handle("DELETE /webhooks/endpoints/{id}", s.authed(s.deleteEndpoint))
	m.Handle("POST /webhooks/endpoints/{id}/rotate-secret", s.authed(s.rotateEndpointSecret))
	m.Handle("GET /webhooks/events", s.authed(s.listEvents))
	m.Handle("GET /webhooks/events/{id}/attempts", s.authed(s.listAttempts))
	m.Handle("POST /webhooks/events/{id}/resend", s.authed(s.resendEvent))
	m.Handle("POST /webhooks/replay", s.authed(s.replayEvents))

	// The audit log of the developer's dashboard (the public API addresses it on
	// production; it is served in both environments).
	m.Handle("GET /audit_logs", s.authed(s.listAuditLogs))

	// The web origins allowed to embed the developer's hosted link flow
	// (the flow's frame-ancestors).
	m.Handle("GET /link/allowed_origins", s.authed(s.getLinkOrigins))
	m.Handle("PUT /link/allowed_origins", s.authed(s.setLinkOrigins))

	// Connector ingestion: merchant connectors feed observed transactions
	// and subscriptions with their own credentials, in both environments.
	m.Handle("POST /internal/ingest/transactions", s.connectorAuthed(s.ingestTransactions))
	m.Handle("POST /internal/ingest/subscriptions", s.connectorAuthed(s.ingestSubscriptions))
	// Detection requests waiting for a connector (production), and what
	// connectors find.
	m.Handle("POST /internal/ingest/detections", s.connectorAuthed(s.ingestDetections))
	// Tasks for connectors: pending card switches and vaultings, each
	// claimed (card released) once, and their results.
	m.Handle("GET /internal/tasks", s.connectorAuthed(s.listPendingTasks))
	m.Handle("POST /internal/tasks/{id}/claim", s.connectorAuthed(s.claimTask))
	m.Handle("POST /internal/tasks/{id}/result", s.connectorAuthed(s.taskResult))
	// Connector work: what a connector serves, and the logins, refreshes
	// and detect units it claims under a lease and reports on
	// (internal/api/work.go).
	m.Handle("GET /internal/connector", s.connectorAuthed(s.getConnector))
	m.Handle("PUT /internal/connector", s.connectorAuthed(s.declareConnector))
	m.Handle("POST /internal/work/claim", s.connectorAuthed(s.claimWork))
	m.Handle("POST /internal/work/{id}/step", s.connectorAuthed(s.reportStep))
	m.Handle("POST /internal/work/{id}/answer", s.connectorAuthed(s.takeAnswer))
	m.Handle("POST /internal/work/{id}/heartbeat", s.connectorAuthed(s.heartbeatWork))
	m.Handle("POST /internal/work/{id}/complete", s.connectorAuthed(s.completeWork))

	// The hosted link flow's calls, with the session value in the body
	// instead of credentials, and the web SDK's analytics.
	m.Handle("POST /link/api/session", s.flow(s.linkSession))
	m.Handle("POST /link/api/merchants", s.flow(s.linkMerchants))
	m.Handle("POST /link/api/login", s.flow(s.linkLogin))
	m.Handle("POST /link/api/answer", s.flow(s.linkAnswer))
	m.Handle("POST /link/api/wait", s.flow(s.linkWait))
	m.Handle("POST /events", s.public(s.sdkEvent))
	m.Handle("OPTIONS /events", s.public(s.sdkEventPreflight))

	// Development simulations: not routed at all in production, so every
	// /development/* path answers 404 there.
	if s.Env == "development" {
		m.Handle("POST /development/accounts/link", s.authed(s.devLinkAccount))
		m.Handle("POST /development/accounts/disconnect", s.authed(s.devDisconnectAccount))
		m.Handle("POST /transactions/refresh", s.authed(s.devRefreshTransactions))
		m.Handle("POST /development/webhooks/test", s.authed(s.devTestWebhook))
		m.Handle("POST /development/webhooks/sign", s.authed(s.devSignWebhook))
	}

	// Web pages (internal/web): the hosted flow, the SDK script and the
	// demo. On the same mux, outside the route table: they are pages, not
	// API operations.
	if s.Pages != nil {
		for _, pattern := range s.Pages.Routes() {
			s.mux.Handle(pattern, s.page(pattern))
		}
	}
}

// routeTable registers handlers on the server's mux and remembers the
// patterns, so that tests can hold them against openapi.yaml.
type routeTable struct{ s *Server }

func (t routeTable) Handle(pattern string, h http.Handler) {
	t.s.mux.Handle(pattern, h)
	t.s.patterns = append(t.s.patterns, pattern)
}

// Routes lists the "METHOD /path" patterns the server serves.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }
