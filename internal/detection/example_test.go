package detection_test

import (
	"fmt"

	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/merchant"
)

func ExampleMatcher() {
	catalog, err := merchant.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	m := detection.NewMatcher(catalog.All())

	// Suffixes, case and small typos resolve to the catalog merchant;
	// "Ubers" does not, because "uber" is too short to forgive a letter.
	for _, name := range []string{"AMAZON.COM, INC.", "Netflx", "Uber Eats", "Ubers", "Patreon"} {
		id, ok := m.Resolve(name)
		fmt.Printf("%-18q %3d %v\n", name, id, ok)
	}
	// Merchants outside the catalog are compared by their names alone.
	fmt.Println(m.SameName("Patreon, Inc.", "patreon"))
	fmt.Println(m.SameName("Uber", "Uber Eats"))
	// Output:
	// "AMAZON.COM, INC."   1 true
	// "Netflx"             4 true
	// "Uber Eats"          7 true
	// "Ubers"              0 false
	// "Patreon"            0 false
	// true
	// false
}
