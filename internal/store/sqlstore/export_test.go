package sqlstore

// AccountTransactionsVersionSQL is the version check of cached sync pages,
// for the test that holds its PostgreSQL plan to an index lookup.
const AccountTransactionsVersionSQL = accountTransactionsVersionSQL
