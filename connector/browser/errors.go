package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// mask replaces a secret in errors, page text and input values.
const mask = "•••"

// transientError marks an error as worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err as worth retrying, such as a 5xx page or a timeout while
// loading. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

// IsTransient reports whether err, or an error it wraps, was marked by
// [Transient], including a [*StepError] whose last attempt was transient.
func IsTransient(err error) bool {
	var t *transientError
	if errors.As(err, &t) {
		return true
	}
	var s *StepError
	return errors.As(err, &s) && s.transient
}

// StepError is the error of a failed [Session.Run]. Its text names the label
// and the step and never holds a secret. It does not unwrap to the original
// error, whose text may hold one, but errors.Is still matches what the
// original matched, such as context.DeadlineExceeded.
type StepError struct {
	Label      string // the session's label
	Step       string // the step's name
	Attempts   int    // how many times the step ran
	Screenshot string // path of the failure screenshot, "" when none was written

	msg       string // the masked text of the last attempt's error
	cause     error
	transient bool
}

// Error returns the masked description of the failure.
func (e *StepError) Error() string {
	return fmt.Sprintf("browser %s: step %q failed after %d attempt(s): %s", e.Label, e.Step, e.Attempts, e.msg)
}

// Is reports whether the original error matches target.
func (e *StepError) Is(target error) bool { return errors.Is(e.cause, target) }

// maskSecrets replaces every occurrence of each secret in s, also in the
// URL-escaped and JSON-escaped forms an error message may quote.
func maskSecrets(s string, secrets []string) string {
	var forms []string
	for _, v := range secrets {
		if v == "" {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
		if b, err := json.Marshal(v); err == nil {
			forms = append(forms, string(b[1:len(b)-1]))
		}
	}
	// Longest first, so a secret that contains another is masked whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, mask)
	}
	return s
}
