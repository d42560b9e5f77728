package field_test

import (
	"errors"
	"fmt"

	"github.com/hitchdev/hitch/internal/field"
)

// A domain package refuses an input; the caller finds the field and the
// message however deep the error is wrapped.
func ExampleInvalid() {
	err := fmt.Errorf("ingest: %w", field.Invalid("transactions[3].price.total", "must be a decimal string"))
	var invalid *field.Error
	if errors.As(err, &invalid) {
		fmt.Printf("The %s field %s.\n", invalid.Field, invalid.Message)
	}
	fmt.Println(err)
	// Output:
	// The transactions[3].price.total field must be a decimal string.
	// ingest: transactions[3].price.total must be a decimal string
}
