// Package merchant is Hitch's catalog of merchants: a seeded list, embedded
// in the binary, of the brands a user can link, with the products each one
// supports, the names it appears under on statements, and a generated logo.
//
// Merchant ids are part of the API contract: they are the same in every
// environment and are never renumbered. New merchants take new ids.
package merchant

import "slices"

// The products a merchant can support, as spelled on the wire.
const (
	productCardSwitcher    = "card_switcher"
	productTransactionLink = "transaction_link"
	productVault           = "vault"

	// productLink is linking an account at all, which every merchant allows;
	// it is never listed in a merchant's products.
	productLink = "link"
)

// Merchant is one catalog entry.
type Merchant struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Category     string   `json:"category"`
	Products     []string `json:"products"`
	Aliases      []string `json:"aliases"`
	Domain       string   `json:"domain"`
	Color        string   `json:"color"`
	Subscription bool     `json:"subscription"`
}

// Supports reports whether the merchant offers product. Every merchant
// supports "link" and the empty product, which stands for any product.
func (m *Merchant) Supports(product string) bool {
	if product == "" || product == productLink {
		return true
	}
	return slices.Contains(m.Products, product)
}

// clone returns a deep copy, so callers cannot change the shared catalog.
func (m *Merchant) clone() *Merchant {
	c := *m
	c.Products = slices.Clone(m.Products)
	c.Aliases = slices.Clone(m.Aliases)
	return &c
}

// knownProduct reports whether p may appear in a merchant's products.
func knownProduct(p string) bool {
	switch p {
	case productCardSwitcher, productTransactionLink, productVault:
		return true
	}
	return false
}

// knownCategory reports whether c is one of the catalog's categories.
func knownCategory(c string) bool {
	switch c {
	case "shopping", "food_delivery", "streaming", "rides", "travel",
		"groceries", "telecom", "software", "news", "gaming", "pharmacy",
		"utilities", "fitness", "home":
		return true
	}
	return false
}
