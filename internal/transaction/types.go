// Package transaction keeps a merchant account's observed transactions and
// subscriptions: one ingestion path (connectors in production, the
// simulator in development) that upserts them idempotently on the
// merchant's external_id with their events, and the restart-free sync that
// developers read them with.
package transaction

import "time"

// Transaction is an order at a merchant, in the full shape of
// GET /transactions/{id}. Money is a decimal string throughout.
type Transaction struct {
	ID          string    `json:"id"`
	ExternalID  string    `json:"external_id"`
	Datetime    time.Time `json:"datetime"`
	URL         string    `json:"url"`
	OrderStatus string    `json:"order_status"`
	// Shipping is nil when the order has no shipping data.
	Shipping       *Shipping       `json:"shipping"`
	PaymentMethods []PaymentMethod `json:"payment_methods"`
	Price          Price           `json:"price"`
	Products       []Product       `json:"products"`
	// LoyaltyMembership belongs to the account, not the order; nil when the
	// account has none.
	LoyaltyMembership *LoyaltyMembership `json:"loyalty_membership"`
}

// Order statuses, the public API's.
const (
	StatusOrdered      = "ORDERED"
	StatusBilled       = "BILLED"
	StatusShipped      = "SHIPPED"
	StatusDelivered    = "DELIVERED"
	StatusReturned     = "RETURNED"
	StatusRefunded     = "REFUNDED"
	StatusCancelled    = "CANCELLED"
	StatusFailed       = "FAILED"
	StatusCompleted    = "COMPLETED"
	StatusPickedUp     = "PICKED_UP"
	StatusUnrecognized = "UNRECOGNIZED"
)

// OrderStatuses lists every order status.
var OrderStatuses = []string{StatusOrdered, StatusBilled, StatusShipped, StatusDelivered, StatusReturned,
	StatusRefunded, StatusCancelled, StatusFailed, StatusCompleted, StatusPickedUp, StatusUnrecognized}

// Shipping is where an order went.
type Shipping struct {
	Location Location `json:"location"`
}

// Location is a shipping address and its recipient.
type Location struct {
	Address   Address `json:"address"`
	FirstName string  `json:"first_name"`
	LastName  string  `json:"last_name"`
}

// Address is a postal address.
type Address struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// PaymentMethod is one way the order was paid; the amounts of an order's
// methods sum to its total.
type PaymentMethod struct {
	ExternalID        string `json:"external_id"`
	Type              string `json:"type"`
	Brand             string `json:"brand"`
	LastFour          string `json:"last_four"`
	Name              string `json:"name"`
	TransactionAmount string `json:"transaction_amount"`
}

// Payment method types, the public API's.
var PaymentTypes = []string{"CARD", "APPLE_PAY", "GOOGLE_PAY", "AMAZON_PAY", "PAYPAL", "CASH_APP", "VENMO",
	"AFFIRM", "KLARNA", "GIFT_CARD", "CASH", "LOYALTY_POINTS", "UNRECOGNIZED"}

// Price is an order's money: Total = SubTotal + the adjustments' amounts.
type Price struct {
	SubTotal    string       `json:"sub_total"`
	Adjustments []Adjustment `json:"adjustments"`
	Total       string       `json:"total"`
	Currency    string       `json:"currency"`
}

// Adjustment changes an order's total: a tax, a tip, a fee, or a negative
// discount or refund.
type Adjustment struct {
	Type   string `json:"type"`
	Label  string `json:"label"`
	Amount string `json:"amount"`
}

// Adjustment types, the public API's.
var AdjustmentTypes = []string{"DISCOUNT", "TAX", "TIP", "FEE", "REFUND", "UNRECOGNIZED"}

// Product is one line of an order.
type Product struct {
	ExternalID  string       `json:"external_id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	URL         string       `json:"url"`
	ImageURL    string       `json:"image_url"`
	Quantity    int          `json:"quantity"`
	Price       ProductPrice `json:"price"`
	// Seller is nil when the merchant sold it itself.
	Seller      *Seller  `json:"seller"`
	Eligibility []string `json:"eligibility"`
}

// ProductPrice is a line's money: SubTotal = Total = Quantity × UnitPrice.
type ProductPrice struct {
	SubTotal  string `json:"sub_total"`
	Total     string `json:"total"`
	UnitPrice string `json:"unit_price"`
}

// Seller is a marketplace seller.
type Seller struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// LoyaltyMembership is the account's membership tier at the merchant.
type LoyaltyMembership struct {
	Tier string `json:"tier"`
}

// Subscription is a recurring plan at a merchant.
type Subscription struct {
	ID              string          `json:"id"`
	ExternalID      string          `json:"external_id"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Merchant        SubscriptionRef `json:"merchant"`
	Status          string          `json:"status"`
	BillingCycle    string          `json:"billing_cycle"`
	NextBillingDate time.Time       `json:"next_billing_date"`
	LastBillingDate time.Time       `json:"last_billing_date"`
	StartDate       time.Time       `json:"start_date"`
	NextRenewalDate time.Time       `json:"next_renewal_date"`
	ExpirationDate  *time.Time      `json:"expiration_date"`
	// CancelInstructions is empty when the merchant gives none.
	CancelInstructions string            `json:"cancel_instructions"`
	IsPaid             bool              `json:"is_paid"`
	IsFamilyPlan       bool              `json:"is_family_plan"`
	IsCancellable      bool              `json:"is_cancellable"`
	Price              SubscriptionPrice `json:"price"`
}

// SubscriptionRef is the merchant of a subscription: id and name, no logo.
type SubscriptionRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// SubscriptionPrice is what one billing cycle costs.
type SubscriptionPrice struct {
	Total    string `json:"total"`
	Currency string `json:"currency"`
}

// Subscription statuses, the public API's.
var SubscriptionStatuses = []string{"ACTIVE", "ACTIVE_CANCELLATION", "ACTIVE_PLAN_CHANGE", "UNRECOGNIZED"}

// Billing cycles, the public API's.
var BillingCycles = []string{"MONTHLY", "WEEKLY", "BIWEEKLY", "QUARTERLY", "SEMIANNUALLY", "ANNUALLY", "DAILY", "UNRECOGNIZED"}
