package sqlstore

// The health pages' window reads, for the test that holds their PostgreSQL
// plans to the indexes of migration 0020.
const (
	WebhookAttemptsSinceSQL = webhookAttemptsSinceSQL
	AccountLoginsSinceSQL   = accountLoginsSinceSQL
)
