package connector

// The items a connector sends, as POST /internal/ingest/transactions and
// /internal/ingest/subscriptions take them (docs/connectors.md has each
// field's rules). Money is a decimal string ("12.34"); times are RFC 3339.

// Transaction is one order at the merchant.
type Transaction struct {
	ExternalID        string             `json:"external_id"`
	Datetime          string             `json:"datetime"`
	URL               string             `json:"url,omitempty"`
	OrderStatus       string             `json:"order_status"`
	Shipping          *Shipping          `json:"shipping"`
	PaymentMethods    []PaymentMethod    `json:"payment_methods"`
	Price             Price              `json:"price"`
	Products          []Product          `json:"products"`
	LoyaltyMembership *LoyaltyMembership `json:"loyalty_membership"`
}

// Order statuses.
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

// Shipping is where an order went.
type Shipping struct {
	Location Location `json:"location"`
}

// Location is a named address.
type Location struct {
	FirstName string  `json:"first_name"`
	LastName  string  `json:"last_name"`
	Address   Address `json:"address"`
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

// PaymentMethod is how part of an order was paid.
type PaymentMethod struct {
	ExternalID        string `json:"external_id"`
	Type              string `json:"type"` // CARD, GIFT_CARD, …
	Brand             string `json:"brand"`
	LastFour          string `json:"last_four"`
	Name              string `json:"name"`
	TransactionAmount string `json:"transaction_amount"`
}

// Price is an order's money.
type Price struct {
	SubTotal    string       `json:"sub_total"`
	Adjustments []Adjustment `json:"adjustments"`
	Total       string       `json:"total"`
	Currency    string       `json:"currency"`
}

// Adjustment is a tax, discount, fee, tip or refund line.
type Adjustment struct {
	Type   string `json:"type"` // DISCOUNT, TAX, TIP, FEE, REFUND, UNRECOGNIZED
	Label  string `json:"label"`
	Amount string `json:"amount"`
}

// Product is one line of an order.
type Product struct {
	ExternalID  string       `json:"external_id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	URL         string       `json:"url"`
	ImageURL    string       `json:"image_url"`
	Quantity    int          `json:"quantity"`
	Price       ProductPrice `json:"price"`
	Seller      *Seller      `json:"seller"`
	Eligibility []string     `json:"eligibility"`
}

// ProductPrice is a line's money.
type ProductPrice struct {
	SubTotal  string `json:"sub_total"`
	Total     string `json:"total"`
	UnitPrice string `json:"unit_price"`
}

// Seller is a marketplace seller; nil when the merchant sold it.
type Seller struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// LoyaltyMembership is the account's membership tier.
type LoyaltyMembership struct {
	Tier string `json:"tier"`
}

// Subscription is a plan the account pays for.
type Subscription struct {
	ExternalID         string            `json:"external_id"`
	Name               string            `json:"name"`
	Description        string            `json:"description"`
	Status             string            `json:"status"`        // ACTIVE, ACTIVE_CANCELLATION, …
	BillingCycle       string            `json:"billing_cycle"` // MONTHLY, ANNUALLY, …
	NextBillingDate    string            `json:"next_billing_date,omitempty"`
	LastBillingDate    string            `json:"last_billing_date,omitempty"`
	StartDate          string            `json:"start_date"`
	NextRenewalDate    string            `json:"next_renewal_date,omitempty"`
	ExpirationDate     *string           `json:"expiration_date"`
	CancelInstructions string            `json:"cancel_instructions"`
	IsPaid             bool              `json:"is_paid"`
	IsFamilyPlan       bool              `json:"is_family_plan"`
	IsCancellable      bool              `json:"is_cancellable"`
	Price              SubscriptionPrice `json:"price"`
}

// SubscriptionPrice is a plan's price per cycle.
type SubscriptionPrice struct {
	Total    string `json:"total"`
	Currency string `json:"currency"`
}
