package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/session"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/transaction"
	"github.com/hitchdev/hitch/internal/webhook"
)

// Error types and codes of the wire error body. docs/errors.md tables them
// with their statuses; keep the two in step.
const (
	TypeInvalidInput          = "INVALID_INPUT"
	TypeInvalidRequest        = "INVALID_REQUEST"
	TypeUserError             = "USER_ERROR"
	TypeSessionError          = "SESSION_ERROR"
	TypeMerchantAccountError  = "MERCHANT_ACCOUNT_ERROR"
	TypeMerchantError         = "MERCHANT_ERROR"
	TypeTransactionError      = "TRANSACTION_ERROR"
	TypeRateLimitExceeded     = "RATE_LIMIT_EXCEEDED"
	TypeAPIError              = "API_ERROR"
	CodeInvalidAPIKeys        = "INVALID_API_KEYS"
	CodeInvalidField          = "INVALID_FIELD"
	CodeInvalidJWE            = "INVALID_JWE"
	CodeInvalidCursorFormat   = "INVALID_CURSOR_FORMAT"
	CodeUserNotFound          = "USER_NOT_FOUND"
	CodeAccountNotFound       = "MERCHANT_ACCOUNT_NOT_FOUND"
	CodeAccountDisconnected   = "MERCHANT_ACCOUNT_DISCONNECTED"
	CodeSessionNotFound       = "SESSION_NOT_FOUND"
	CodeSessionExpired        = "SESSION_EXPIRED"
	CodeClientIDNotFound      = "CLIENT_ID_NOT_FOUND"
	CodeExtendNotSupported    = "EXTEND_NOT_SUPPORTED"
	CodeMerchantUnavailable   = "MERCHANT_UNAVAILABLE"
	CodeNoAccess              = "NO_ACCESS"
	CodeTransactionNotFound   = "TRANSACTION_NOT_FOUND"
	CodeNoTransactions        = "NO_TRANSACTIONS"
	CodeProductNotValid       = "PRODUCT_NOT_VALID"
	CodeProductNotEnabled     = "PRODUCT_NOT_ENABLED"
	CodeNotFound              = "NOT_FOUND"
	CodeTaskNotFound          = "TASK_NOT_FOUND"
	CodeTaskNotAwaitingCard   = "TASK_NOT_AWAITING_CARD"
	CodeCardWindowClosed      = "CARD_WINDOW_CLOSED"
	CodeTaskClaimed           = "TASK_CLAIMED"
	CodeMerchantNotServed     = "MERCHANT_NOT_SERVED"
	CodeLeaseNotHeld          = "LEASE_NOT_HELD"
	CodeWorkNotWaiting        = "WORK_NOT_WAITING"
	CodeMethodNotAllowed      = "METHOD_NOT_ALLOWED"
	CodeBodyTooLarge          = "REQUEST_TOO_LARGE"
	CodeUnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE"
	CodeMalformedRequest      = "MALFORMED_REQUEST"
	CodeHeadersTooLarge       = "HEADERS_TOO_LARGE"
	CodeUnsupportedProtocol   = "UNSUPPORTED_PROTOCOL"
	CodeRateLimitExceeded     = "RATE_LIMIT_EXCEEDED"
	CodeInternalServerError   = "INTERNAL_SERVER_ERROR"
	CodeServiceUnavailable    = "SERVICE_UNAVAILABLE"
	CodeDatabaseUnavailable   = "DATABASE_UNAVAILABLE"
	messageInvalidCredentials = "Invalid client_id or secret provided."
)

// Error is an error made for the client: its message is shown as is.
type Error struct {
	Status  int
	Type    string
	Code    string
	Message string
	// Header is added to the response (e.g. Retry-After).
	Header http.Header
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s/%s: %s", e.Status, e.Type, e.Code, e.Message)
}

// errorBody is the wire error body.
type errorBody struct {
	ErrorType    string `json:"error_type"`
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
	RequestID    string `json:"request_id"`
}

func errInvalidField(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidField, Message: fmt.Sprintf(format, args...)}
}

func errRequired(field string) *Error {
	return errInvalidField("The %s field is required.", field)
}

func errInvalidCredentials() *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeInvalidInput, Code: CodeInvalidAPIKeys, Message: messageInvalidCredentials,
		Header: http.Header{"Www-Authenticate": {`Basic realm="hitch", charset="UTF-8"`}}}
}

func errNotFound(message string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeNotFound, Message: message}
}

func errRateLimited(retryAfter int) *Error {
	return &Error{Status: http.StatusTooManyRequests, Type: TypeRateLimitExceeded, Code: CodeRateLimitExceeded,
		Message: "Too many requests. Retry after the number of seconds in the Retry-After header.",
		Header:  http.Header{"Retry-After": {strconv.Itoa(retryAfter)}}}
}

// databaseRetryAfter is the Retry-After, in seconds, of a request refused
// while the database is unavailable: long enough not to hammer a database
// that is coming back, short enough that clients notice it is back soon.
const databaseRetryAfter = "5"

// domainErrors maps the domain packages' sentinel errors to wire errors.
var domainErrors = []struct {
	err  error
	wire *Error
}{
	{developer.ErrInvalidCredentials, errInvalidCredentials()},
	{store.ErrUnavailable, &Error{Status: http.StatusServiceUnavailable, Type: TypeAPIError, Code: CodeDatabaseUnavailable,
		Message: "The database is unavailable for now. Retry after the number of seconds in the Retry-After header.",
		Header:  http.Header{"Retry-After": {databaseRetryAfter}}}},
	// Requests are checked first (checkRequestText, checkDecodedText),
	// naming the field; this is what the store says of anything else.
	{store.ErrInvalidText, errInvalidField("A value in the request must be valid UTF-8 text without NUL characters.")},
	{account.ErrUserNotFound, &Error{Status: http.StatusNotFound, Type: TypeUserError, Code: CodeUserNotFound,
		Message: "No user with this external_user_id was found."}},
	{account.ErrNotFound, &Error{Status: http.StatusNotFound, Type: TypeMerchantAccountError, Code: CodeAccountNotFound,
		Message: "The user has no linked merchant account at this merchant."}},
	{account.ErrUnknownMerchant, errInvalidField("The selected merchant_id is invalid.")},
	{account.ErrMerchantUnsupported, &Error{Status: http.StatusBadRequest, Type: TypeMerchantError, Code: CodeMerchantUnavailable,
		Message: "The merchant does not support this product."}},
	{session.ErrUnknownMerchant, errInvalidField("The selected merchant_id is invalid.")},
	{simulate.ErrUnknownMerchant, errInvalidField("The selected merchant_id is invalid.")},
	{session.ErrMerchantUnsupported, &Error{Status: http.StatusBadRequest, Type: TypeMerchantError, Code: CodeMerchantUnavailable,
		Message: "The merchant does not support this session type."}},
	{webhook.ErrNotFound, errNotFound("No webhook endpoint has this id.")},
	{card.ErrTaskNotFound, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeTaskNotFound,
		Message: "No task has this task_id."}},
	{card.ErrTaskNotAwaitingCard, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeTaskNotAwaitingCard,
		Message: "The task is not waiting for card data: it has its card already, or has ended."}},
	{card.ErrCardWindowClosed, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeCardWindowClosed,
		Message: "The task's window for card data has closed; the task fails with CARD_FAILED."}},
	{card.ErrTaskClaimed, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeTaskClaimed,
		Message: "The task is not pending, or another connector has claimed it."}},
	{card.ErrInvalidResult, errInvalidField("The result does not fit the task: a vaulting that succeeded needs payment_method, and only a vaulting takes one.")},
	{connector.ErrNotServed, &Error{Status: http.StatusForbidden, Type: TypeInvalidRequest, Code: CodeMerchantNotServed,
		Message: "This connector has not declared the merchant (PUT /internal/connector)."}},
	{connector.ErrLease, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeLeaseNotHeld,
		Message: "This connector does not hold the work under this lease: another claimed it, or the lease ended."}},
	{connector.ErrTransition, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeWorkNotWaiting,
		Message: "The work is not waiting for this report: it ended or is at another step."}},
	{connector.ErrWorkNotFound, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeNotFound,
		Message: "There is no such work."}},
	{card.ErrAccountDisconnected, &Error{Status: http.StatusBadRequest, Type: TypeMerchantAccountError, Code: CodeAccountDisconnected,
		Message: "The merchant account is disconnected: the user must log in again before its card can be updated."}},
	{transaction.ErrNotFound, &Error{Status: http.StatusNotFound, Type: TypeTransactionError, Code: CodeTransactionNotFound,
		Message: "No transaction or subscription has this id."}},
	{transaction.ErrInvalidCursor, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidCursorFormat,
		Message: "The cursor is not one this account's sync returned."}},
	{detection.ErrInvalidCursor, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidCursorFormat,
		Message: "The cursor is not one this user's listing returned."}},
	{detection.ErrRequestNotFound, errNotFound("No detection request has this request_id.")},
	{audit.ErrInvalidCursor, errInvalidCursor()},
	{webhook.ErrEventNotFound, errNotFound("No event has this id.")},
	{webhook.ErrTooManyEndpoints, errInvalidField("An environment can have at most 16 webhook endpoints.")},
	{session.ErrNotFound, &Error{Status: http.StatusNotFound, Type: TypeSessionError, Code: CodeSessionNotFound,
		Message: "The session was not found."}},
	{session.ErrExpired, &Error{Status: http.StatusBadRequest, Type: TypeSessionError, Code: CodeExtendNotSupported,
		Message: "The session has expired and cannot be extended. Create a new session."}},
	{link.ErrClientNotFound, &Error{Status: http.StatusNotFound, Type: TypeInvalidInput, Code: CodeClientIDNotFound,
		Message: "No developer of this environment has this client_id."}},
	{link.ErrChallenge, errInvalidField("The challenge has expired or is not this session's. Log in again.")},
	{link.ErrTooManyOrigins, errInvalidField("The allowed_origins field can hold at most %d origins.", link.MaxAllowedOrigins)},
	{session.ErrMaxLifetime, &Error{Status: http.StatusBadRequest, Type: TypeSessionError, Code: CodeExtendNotSupported,
		Message: "The session has reached its maximum lifetime of 24 hours. Create a new session."}},
}

// toWire returns the wire error for err; anything not made for the client
// becomes a 500 that shows no detail.
func toWire(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var invalid *field.Error
	if errors.As(err, &invalid) {
		return errInvalidField("The %s field %s.", invalid.Field, invalid.Message), true
	}
	if wire, ok := cardError(err); ok {
		return wire, true
	}
	var badOrigin *link.OriginError
	if errors.As(err, &badOrigin) {
		return errInvalidField("The allowed_origins field is invalid: %s.", badOrigin.Error()), true
	}
	for _, de := range domainErrors {
		if errors.Is(err, de.err) {
			return de.wire, true
		}
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeAPIError, Code: CodeInternalServerError,
		Message: "An internal error occurred. Quote the request_id when contacting support."}, false
}

// writeError writes err as the wire error body, logging errors that were not
// made for the client. A request whose client went away (its context
// canceled) gets no answer: nobody reads it, and the access log records
// status 499 at info level, not a fault of Hitch. A panic is a fault
// whatever the client did.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(r.Context().Err(), context.Canceled) && !errors.As(err, new(*panicError)) {
		if st := stateFrom(r.Context()); st != nil {
			st.clientGone = true
		}
		log.DebugContext(r.Context(), "client went away", "request_id", requestIDFrom(r.Context()), "error", err)
		return
	}
	wire, known := toWire(err)
	switch {
	case errors.Is(err, store.ErrUnavailable):
		log.WarnContext(r.Context(), "database unavailable", "request_id", requestIDFrom(r.Context()), "error", err)
	case !known:
		log.ErrorContext(r.Context(), "request failed", "request_id", requestIDFrom(r.Context()), "error", err)
	}
	for k, vs := range wire.Header {
		w.Header()[k] = vs
	}
	writeJSON(w, wire.Status, errorBody{
		ErrorType:    wire.Type,
		ErrorCode:    wire.Code,
		ErrorMessage: wire.Message,
		RequestID:    requestIDFrom(r.Context()),
	})
}
