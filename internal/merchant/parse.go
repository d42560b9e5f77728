package merchant

// New builds a catalog from merchants, validated as Load validates the
// embedded one. It copies merchants, so later changes to them do not reach
// the catalog.
func New(merchants []Merchant) (*Catalog, error) {
	copies := make([]Merchant, len(merchants))
	for i := range merchants {
		copies[i] = *merchants[i].clone()
	}
	return build(copies)
}
