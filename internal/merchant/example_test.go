package merchant_test

import (
	"fmt"

	"github.com/hitchdev/hitch/internal/merchant"
)

func ExampleCatalog_List() {
	catalog, err := merchant.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Statement descriptors match through aliases, ignoring case and
	// punctuation.
	for _, m := range catalog.List("card_switcher", "amzn mktp") {
		fmt.Println(m.ID, m.Name, merchant.LogoPath(m.ID))
	}
	// Output: 1 Amazon /merchants/1/logo.svg
}

func ExampleMerchant_Supports() {
	catalog, err := merchant.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := catalog.Get(6)
	fmt.Println(m.Name, m.Supports("link"), m.Supports("vault"))
	// Output: Uber true true
}
