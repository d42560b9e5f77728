package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hitchdev/hitch/internal/card"
)

// maxBodyBytes caps every request body but the ingestion batches'
// (maxIngestBodyBytes).
const maxBodyBytes = 1 << 20

// decode reads the JSON object body of r into dst strictly: the content type
// must be JSON and the body valid UTF-8; unknown, duplicate or wrongly cased
// names and wrong types are errors naming the field; there must be exactly
// one object.
func decode(r *http.Request, dst any) error { return decodeLimit(r, dst, maxBodyBytes) }

// decodeLimit is decode with another cap on the body, in bytes.
func decodeLimit(r *http.Request, dst any, limit int64) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Type: TypeInvalidRequest, Code: CodeUnsupportedMediaType,
			Message: "Request bodies must be JSON, sent with Content-Type: application/json."}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		return decodeError(err)
	}
	if !utf8.Valid(body) {
		return errInvalidField("The request body must be valid UTF-8.")
	}
	return unmarshalObject(body, dst, "")
}

// decodeError answers an error reading a request body.
func decodeError(err error) error {
	if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &Error{Status: http.StatusRequestEntityTooLarge, Type: TypeInvalidRequest, Code: CodeBodyTooLarge,
			Message: fmt.Sprintf("The request body is larger than %d bytes.", tooLarge.Limit)}
	}
	return errInvalidField("The request body could not be read: %v.", err)
}

// unmarshalObject decodes the one JSON object in data into dst. The
// decoder refuses unknown names (RejectUnknownMembers) and, by default,
// duplicate names and names that match a field only in another letter case.
// at names the object in errors: "" for the request body, else an item
// such as transactions[3].
func unmarshalObject(data []byte, dst any, at string) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data)) // a Buffer is read in place, not copied
	// Kind 0 is no value or not JSON, which UnmarshalDecode reports.
	if k := dec.PeekKind(); k != '{' && k != 0 {
		return errNotObject(at)
	}
	if err := json.UnmarshalDecode(dec, dst, json.RejectUnknownMembers(true)); err != nil {
		return unmarshalError(err, reflect.TypeOf(dst), at)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errInvalidField("The request body must hold exactly one JSON object.")
	}
	return checkDecodedText(data, dst, at)
}

func errNotObject(at string) error {
	if at == "" {
		return errInvalidField("The request body must be a JSON object.")
	}
	return errInvalidField("The %s field must be an object.", at)
}

// unmarshalError names the field of a decoding error, never its value. A
// name the client chose (a key of a map, an unknown member, a name inside
// raw JSON) is named only when it looks like a field name, and never inside
// card data: there the message names the object instead.
func unmarshalError(err error, t reflect.Type, at string) error {
	if syn, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		switch {
		case syn.Err == jsontext.ErrDuplicateName:
			name, whole := fieldName(at, syn.JSONPointer, t)
			if !whole {
				return errInvalidField("%s contains a name more than once.", objectName(name))
			}
			return errInvalidField("The %s field appears more than once.", name)
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return errInvalidField("The request body is not valid JSON: it ends early.")
		}
		return errInvalidField("The request body is not valid JSON (at byte %d).", syn.ByteOffset)
	}
	sem, ok := errors.AsType[*json.SemanticError](err)
	if !ok { // io.EOF: no value at all
		return errNotObject(at)
	}
	name, whole := fieldName(at, sem.JSONPointer, t)
	switch {
	case !whole && sem.Err == json.ErrUnknownName:
		return errInvalidField("%s contains a field that is not allowed.", objectName(name))
	case !whole:
		return errInvalidField("%s contains a field that must be %s.", objectName(name), jsonTypeName(sem.GoType))
	case sem.Err == json.ErrUnknownName:
		return errInvalidField("The %s field is not allowed.", name)
	case name == "":
		return errNotObject(at)
	}
	return errInvalidField("The %s field must be %s.", name, jsonTypeName(sem.GoType))
}

// objectName names the object at a field path in a message.
func objectName(name string) string {
	if name == "" {
		return "The request body"
	}
	return "The " + name + " object"
}

// cardDataTypes are the objects that hold card data: a client may have put
// card data in any name it sends there, so no name but a declared field's is
// repeated in an error.
var cardDataTypes = map[reflect.Type]bool{
	reflect.TypeFor[card.PayloadUser](): true, reflect.TypeFor[card.PayloadName](): true,
	reflect.TypeFor[card.PayloadAddress](): true, reflect.TypeFor[card.PayloadCard](): true,
}

// fieldName turns the JSON pointer of an error (/transactions/3/price) into
// the name messages use (transactions[3].price), after at. t, the Go type
// decoded into, tells an array index from a member name; inside raw JSON,
// whose type says nothing, a token of digits is an index.
//
// A token the client chose rather than one of the type's declared fields
// ends the name early when it could carry data (see echoable) or stands in
// card data: whole is then false and name is the object that holds it.
func fieldName(at string, ptr jsontext.Pointer, t reflect.Type) (name string, whole bool) {
	name = at
	inCard := false
	for tok := range ptr.Tokens() {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		index, declared := false, false
		switch {
		case t == nil || (t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8): // raw JSON
			t, index = nil, tok != "" && strings.Trim(tok, "0123456789") == ""
		case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
			t, index = t.Elem(), true
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			inCard = inCard || cardDataTypes[t]
			t = memberType(t, tok)
			declared = t != nil
		default:
			t = nil
		}
		switch {
		case index:
			name += "[" + tok + "]"
		case !declared && (inCard || !echoable(tok)):
			return name, false
		case name == "":
			name = tok
		default:
			name += "." + tok
		}
	}
	return name, true
}

// echoable tells a name that may be repeated in an error: a short word of
// letters, digits, "_" and "-", with at most two digits, so that no card
// number, CVV or other value a client put in a name comes back.
func echoable(name string) bool {
	if name == "" || len(name) > 32 {
		return false
	}
	digits := 0
	for _, c := range []byte(name) {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return digits <= 2
}

// memberType returns the type of the field of struct t whose JSON name is
// name, or nil.
func memberType(t reflect.Type, name string) reflect.Type {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || tag == "" && f.Name == name {
			return f.Type
		}
	}
	return nil
}

// jsonTypeName says what JSON a Go type takes: "a string", "an array"...
func jsonTypeName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default:
		return "of another type"
	}
}

// Field rules shared by endpoints.

// requireProduct checks a required type field against the products an
// endpoint accepts.
func requireProduct(v *string, allowed []string) (string, error) {
	if v == nil || *v == "" {
		return "", errRequired("type")
	}
	return *v, checkProduct(*v, allowed)
}

// checkProduct checks a product name against the allowed ones.
func checkProduct(v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return &Error{Status: http.StatusBadRequest, Type: TypeInvalidInput, Code: CodeProductNotValid, Message: "The selected type is invalid."}
	}
	return nil
}

const maxExternalUserIDLength = 255

// validText reports whether s can be stored as is by both databases:
// valid UTF-8 without NUL (PostgreSQL's text refuses both).
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

func errInvalidText(field string) *Error { return errUnstorableText(field + " field") }

func validateExternalUserID(field string, v *string) (string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return "", errRequired(field)
	}
	if len(*v) > maxExternalUserIDLength {
		return "", errInvalidField("The %s field must be at most %d bytes.", field, maxExternalUserIDLength)
	}
	if !validText(*v) {
		return "", errInvalidText(field)
	}
	return *v, nil
}

// validateCardID checks an optional card_id.
func validateCardID(v *string) error {
	switch {
	case v == nil:
		return nil
	case len(*v) > maxCardIDLength:
		return errInvalidField("The card_id field must be at most %d bytes.", maxCardIDLength)
	case !validText(*v):
		return errInvalidText("card_id")
	}
	return nil
}

func requireMerchantID(v *int64) (int64, error) {
	if v == nil {
		return 0, errRequired("merchant_id")
	}
	if *v <= 0 {
		return 0, errInvalidField("The selected merchant_id is invalid.")
	}
	return *v, nil
}

const (
	maxMetadataKeys        = 10
	maxMetadataValueLength = 500
	maxMetadataKeyLength   = 64
)

// validateMetadata applies the public API's limits: at most 10 keys, string values of
// at most 500 characters.
func validateMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return errInvalidField("The metadata field must have at most %d keys.", maxMetadataKeys)
	}
	for k, v := range md {
		if k == "" || utf8.RuneCountInString(k) > maxMetadataKeyLength || !validText(k) {
			return errInvalidField("The metadata keys must be 1 to %d characters of text.", maxMetadataKeyLength)
		}
		if !validText(v) {
			return errInvalidText("metadata." + k)
		}
		if utf8.RuneCountInString(v) > maxMetadataValueLength {
			return errInvalidField("The metadata.%s field must be at most %d characters.", k, maxMetadataValueLength)
		}
	}
	return nil
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func validatePhone(field string, v *string) error {
	if v != nil && !e164.MatchString(*v) {
		return errInvalidField("The %s field must be a phone number in E.164 format, such as +14155550123.", field)
	}
	return nil
}

func validateEmail(field string, v *string) error {
	if v == nil {
		return nil
	}
	addr, err := mail.ParseAddress(*v)
	if err != nil || addr.Name != "" || addr.Address != *v || len(*v) > 254 || !strings.Contains((*v)[strings.LastIndexByte(*v, '@'):], ".") {
		return errInvalidField("The %s field must be a valid e-mail address.", field)
	}
	return nil
}

// queryString returns a required query parameter.
func queryString(query url.Values, name string) (string, error) {
	v := query.Get(name)
	if strings.TrimSpace(v) == "" {
		return "", errRequired(name)
	}
	return v, nil
}

// queryInt returns an optional positive integer query parameter and whether
// it was given.
func queryInt(query url.Values, name string) (int64, bool, error) {
	raw := query.Get(name)
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, false, errInvalidField("The %s field must be a positive integer.", name)
	}
	return n, true, nil
}

// userMerchantQuery reads the required external_user_id and the optional
// merchant_id of a query, and whether merchant_id was given.
func userMerchantQuery(query url.Values) (externalUserID string, merchantID int64, given bool, err error) {
	if externalUserID, err = queryString(query, "external_user_id"); err != nil {
		return "", 0, false, err
	}
	if _, err := validateExternalUserID("external_user_id", &externalUserID); err != nil {
		return "", 0, false, err
	}
	merchantID, given, err = queryInt(query, "merchant_id")
	return externalUserID, merchantID, given, err
}
