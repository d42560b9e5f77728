// Package field is the error the domain packages return for an input field
// that breaks a rule, so that the API, the dashboard and the command line
// each render every such refusal one way.
package field

// Error is a refused input: Field names it, by its path where it is nested
// (transactions[3].price.total), and Message says what is wrong with it as
// a phrase that follows the name ("is required"). Message is fit to show
// to whoever sent the input, and never repeats the value.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + " " + e.Message }

// Invalid returns the Error of a field.
func Invalid(field, message string) *Error { return &Error{Field: field, Message: message} }
