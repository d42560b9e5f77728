package card

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nyaruka/phonenumbers"
)

// Payload is the card data payload (the public API's card data payload): the JSON a developer encrypts in a JWE or posts in the plain form.
type Payload struct {
	User PayloadUser `json:"user"`
	Card PayloadCard `json:"card"`
}

// PayloadUser is the card holder.
type PayloadUser struct {
	Name        PayloadName    `json:"name"`
	Address     PayloadAddress `json:"address"`
	PhoneNumber string         `json:"phone_number"`
}

// PayloadName is the card holder's name.
type PayloadName struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// PayloadAddress is the card's billing address.
type PayloadAddress struct {
	Street     string `json:"street"`
	Street2    string `json:"street2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// PayloadCard is the card itself.
type PayloadCard struct {
	Number     string `json:"number"`
	Expiration string `json:"expiration"`
	CVV        string `json:"cvv"`
}

// FieldError is a payload field that failed validation. Message never contains the field's value (it may be card data).
type FieldError struct {
	Field   string // dotted wire path, e.g. "card.number", "user.address.region"
	Message string // a sentence for the API error body, e.g. "The card.number field must pass the Luhn check."
}

// Error returns Message, which is safe to show to the client and to log.
func (e *FieldError) Error() string { return e.Message }

// fieldError builds the message "The <field> field <rest>".
func fieldError(field, rest string) *FieldError {
	return &FieldError{Field: field, Message: "The " + field + " field " + rest}
}

// payloadError is a decode error that cannot be pinned on one field.
func payloadError(message string) *FieldError {
	return &FieldError{Field: "payload", Message: message}
}

// Limits of the text fields, in characters (runes) after trimming white space.
const (
	maxNameLength   = 255
	maxStreetLength = 46
	maxCityLength   = 32
)

// maxExpiryMonthsAhead rejects expirations more than 20 years away: no
// network issues cards that long, so such a date is a typo.
const maxExpiryMonthsAhead = 20 * 12

// DecodePayload decodes JSON strictly into a Payload: unknown fields are
// rejected, the input must hold exactly one JSON value, and every field must
// be a string. A decode error is a *FieldError too: Field names the
// offending field when it can be told, else "payload", and the message
// never echoes input values.
//
// It also rejects duplicate names, null, and names that differ from the
// wire names only in letter case. A missing field decodes as "" and is left
// for Validate to report. The caller should clear data (clear(data)) once
// decoded, since it holds the card number too.
func DecodePayload(data []byte) (*Payload, error) {
	var p Payload
	dec := jsontext.NewDecoder(bytes.NewBuffer(data)) // a Buffer is read in place, not copied
	if err := json.UnmarshalDecode(dec, &p, json.RejectUnknownMembers(true), refuseNull); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, payloadError("The payload must contain exactly one JSON value.")
	}
	return &p, nil
}

// refuseNull makes a JSON null an error wherever it stands: the decoder
// would take it for an empty string or object.
var refuseNull = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() == 'n' {
		return &json.SemanticError{GoType: reflect.TypeOf(v).Elem(), JSONKind: 'n'}
	}
	return errors.ErrUnsupported // decode as usual
}))

// decodeError names the field of a decoding error from its JSON pointer.
func decodeError(err error) *FieldError {
	if syn, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		if syn.Err == jsontext.ErrDuplicateName {
			return fieldError(dotted(syn.JSONPointer), "must appear only once.")
		}
		return payloadError("The payload must be valid JSON.")
	}
	sem, ok := errors.AsType[*json.SemanticError](err)
	switch {
	case !ok || sem.JSONPointer == "": // io.EOF or a value that is not an object
		return payloadError("The payload must be a JSON object.")
	case sem.Err == json.ErrUnknownName:
		return unknownField(dotted(sem.JSONPointer.Parent()))
	case sem.GoType != nil && sem.GoType.Kind() == reflect.Struct:
		return fieldError(dotted(sem.JSONPointer), "must be an object.")
	}
	return fieldError(dotted(sem.JSONPointer), "must be a string.")
}

// dotted turns a JSON pointer (/user/name) into a field path (user.name).
func dotted(ptr jsontext.Pointer) string {
	return strings.Join(slices.Collect(ptr.Tokens()), ".")
}

// unknownField names the object that holds an unexpected key, never the
// key: a key is input too, and a developer who put card data in a key must
// not see it echoed in logs or error bodies.
func unknownField(path string) *FieldError {
	if path == "" {
		return payloadError("The payload contains a field that is not allowed.")
	}
	return &FieldError{Field: path, Message: "The " + path + " object contains a field that is not allowed."}
}

// Validate checks every constraint and returns the first failing field, or
// nil. now decides whether the expiration is in the past: a card is valid
// through the last day of its expiration month, compared in UTC.
//
// Fields are checked in this fixed order, so the error reported is the first
// failing one: user.name.first_name, user.name.last_name,
// user.address.street, user.address.street2, user.address.city,
// user.address.country, user.address.region, user.address.postal_code,
// user.phone_number, card.number, card.expiration, card.cvv. The country
// comes before the region because the region is checked against it.
//
// Every field is required except user.address.street2 and user.phone_number;
// an empty or white-space-only value counts as missing ("The X field is
// required."). Validate does not modify p. The rules:
//
//   - first_name, last_name: at most 255 characters; street, street2: at
//     most 46; city: at most 32. Characters are Unicode code points counted
//     after trimming leading and trailing white space; control characters
//     and invalid UTF-8 are rejected.
//   - country: an ISO 3166-1 alpha-2 code, any letter case ("US", "us").
//   - region: an ISO 3166-2 subdivision code of that country, any letter
//     case, in the full form "US-NY" or as the part after the hyphen, "NY".
//     A code of another country ("CA-ON" with country "US") is rejected.
//     Any level of ISO 3166-2 counts ("FR-IDF", "FR-75", "GB-ENG"). A
//     country with no ISO 3166-2 subdivisions (such as "HK" or "PR") takes
//     its own alpha-2 code as the region: country "PR", region "PR". The
//     table is Debian's iso-codes; see iso3166_data.txt.
//   - postal_code: 5 to 10 characters after trimming white space, only
//     ASCII letters, digits, spaces and hyphens.
//   - phone_number: E.164, "+" and 1 to 15 digits, the first not 0, with a
//     country calling code that exists and a length that is possible for it
//     (libphonenumber's IsPossibleNumber: made-up test numbers pass).
//   - card.number: ASCII digits only (no spaces or dashes), 12 to 19 of
//     them, passing the Luhn check.
//   - card.expiration: "MM/YYYY" or "MM/YY" (YY means 20YY), month 01 to 12,
//     not before now's month in UTC and at most 20 years after it.
//   - card.cvv: 3 or 4 digits.
//
// Validate returns *FieldError rather than error; store the result in an
// error variable only when it is non-nil, or the typed nil will not compare
// equal to nil.
func (p *Payload) Validate(now time.Time) *FieldError {
	if p == nil {
		return payloadError("The payload is required.")
	}
	u, a, c := &p.User, &p.User.Address, &p.Card
	checks := []func() *FieldError{
		func() *FieldError { return checkText("user.name.first_name", u.Name.FirstName, maxNameLength, true) },
		func() *FieldError { return checkText("user.name.last_name", u.Name.LastName, maxNameLength, true) },
		func() *FieldError { return checkText("user.address.street", a.Street, maxStreetLength, true) },
		func() *FieldError { return checkText("user.address.street2", a.Street2, maxStreetLength, false) },
		func() *FieldError { return checkText("user.address.city", a.City, maxCityLength, true) },
		func() *FieldError { return checkCountry(a.Country) },
		func() *FieldError { return checkRegion(a.Country, a.Region) },
		func() *FieldError { return checkPostalCode(a.PostalCode) },
		func() *FieldError { return checkPhoneNumber(u.PhoneNumber) },
		func() *FieldError { return checkCardNumber(c.Number) },
		func() *FieldError { return checkExpiration(c.Expiration, now) },
		func() *FieldError { return checkCVV(c.CVV) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func missing(v string) bool { return strings.TrimSpace(v) == "" }

func checkText(field, v string, maxRunes int, required bool) *FieldError {
	s := strings.TrimSpace(v)
	if s == "" {
		if required {
			return fieldError(field, "is required.")
		}
		return nil
	}
	if !utf8.ValidString(s) {
		return fieldError(field, "must be valid UTF-8 text.")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fieldError(field, "must not contain control characters.")
		}
	}
	if utf8.RuneCountInString(s) > maxRunes {
		return fieldError(field, fmt.Sprintf("must be at most %d characters long.", maxRunes))
	}
	return nil
}

func checkCountry(v string) *FieldError {
	const field = "user.address.country"
	if missing(v) {
		return fieldError(field, "is required.")
	}
	if len(v) != 2 || !isASCIILetter(v[0]) || !isASCIILetter(v[1]) {
		return fieldError(field, "must be an ISO 3166-1 alpha-2 country code.")
	}
	if _, ok := iso3166().countries[strings.ToUpper(v)]; !ok {
		return fieldError(field, "must be an ISO 3166-1 alpha-2 country code.")
	}
	return nil
}

// checkRegion assumes checkCountry passed.
func checkRegion(country, v string) *FieldError {
	const field = "user.address.region"
	if missing(v) {
		return fieldError(field, "is required.")
	}
	country, region := strings.ToUpper(country), strings.ToUpper(v)
	table := iso3166()
	if prefix, part, full := strings.Cut(region, "-"); full {
		if prefix != country {
			if _, ok := table.subdivisions[region]; ok {
				return fieldError(field, "must be a subdivision of the country in user.address.country.")
			}
			return fieldError(field, "must be an ISO 3166-2 subdivision code of the country in user.address.country.")
		}
		region = part
	} else if region == country && !table.countries[country] {
		return nil
	}
	if region == "" || strings.Contains(region, "-") {
		return fieldError(field, "must be an ISO 3166-2 subdivision code of the country in user.address.country.")
	}
	if _, ok := table.subdivisions[country+"-"+region]; !ok {
		return fieldError(field, "must be an ISO 3166-2 subdivision code of the country in user.address.country.")
	}
	return nil
}

func checkPostalCode(v string) *FieldError {
	const field = "user.address.postal_code"
	s := strings.TrimSpace(v)
	if s == "" {
		return fieldError(field, "is required.")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isASCIILetter(c) && !isASCIIDigit(c) && c != ' ' && c != '-' {
			return fieldError(field, "must contain only letters, digits, spaces and hyphens.")
		}
	}
	if len(s) < 5 || len(s) > 10 {
		return fieldError(field, "must be 5 to 10 characters long.")
	}
	return nil
}

func checkPhoneNumber(v string) *FieldError {
	const field = "user.phone_number"
	if missing(v) {
		return nil
	}
	if len(v) < 2 || len(v) > 16 || v[0] != '+' || v[1] == '0' || !allDigits(v[1:]) {
		return fieldError(field, "must be in E.164 format: a + followed by 1 to 15 digits, the first not 0.")
	}
	n, err := phonenumbers.Parse(v, "")
	if errors.Is(err, phonenumbers.ErrInvalidCountryCode) ||
		(err == nil && phonenumbers.GetRegionCodeForCountryCode(int(n.GetCountryCode())) == phonenumbers.UNKNOWN_REGION) {
		return fieldError(field, "must start with an existing country calling code.")
	}
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return fieldError(field, "must have a possible length for its country calling code.")
	}
	return nil
}

func checkCardNumber(v string) *FieldError {
	const field = "card.number"
	if missing(v) {
		return fieldError(field, "is required.")
	}
	if !allDigits(v) {
		return fieldError(field, "must contain digits only.")
	}
	if len(v) < 12 || len(v) > 19 {
		return fieldError(field, "must be 12 to 19 digits long.")
	}
	if !LuhnValid(v) {
		return fieldError(field, "must pass the Luhn check.")
	}
	return nil
}

func checkExpiration(v string, now time.Time) *FieldError {
	const field = "card.expiration"
	if missing(v) {
		return fieldError(field, "is required.")
	}
	month, year, ok := parseExpiration(v)
	if !ok {
		return fieldError(field, "must be in MM/YYYY or MM/YY format.")
	}
	if month < 1 || month > 12 {
		return fieldError(field, "must have a month from 01 to 12.")
	}
	// Count in months: the card works through the last day of its month.
	utc := now.UTC()
	current := utc.Year()*12 + int(utc.Month()) - 1
	expiry := year*12 + month - 1
	if expiry < current {
		return fieldError(field, "must not be in the past.")
	}
	if expiry-current > maxExpiryMonthsAhead {
		return fieldError(field, "must be at most 20 years in the future.")
	}
	return nil
}

func checkCVV(v string) *FieldError {
	const field = "card.cvv"
	if missing(v) {
		return fieldError(field, "is required.")
	}
	if len(v) < 3 || len(v) > 4 || !allDigits(v) {
		return fieldError(field, "must be 3 or 4 digits.")
	}
	return nil
}

// parseExpiration reads "MM/YYYY" or "MM/YY" (20YY) without checking the
// month's range.
func parseExpiration(s string) (month, year int, ok bool) {
	mm, yy, found := strings.Cut(s, "/")
	if !found || len(mm) != 2 || (len(yy) != 2 && len(yy) != 4) || !allDigits(mm) || !allDigits(yy) {
		return 0, 0, false
	}
	month, year = atoi(mm), atoi(yy)
	if len(yy) == 2 {
		year += 2000
	}
	return month, year, true
}

// Expiry parses card.expiration ("MM/YYYY" or "MM/YY"; YY means 20YY) — only call after Validate.
// It returns 0, 0 for an expiration Validate would reject as malformed.
func (c *PayloadCard) Expiry() (month, year int) {
	month, year, ok := parseExpiration(c.Expiration)
	if !ok {
		return 0, 0
	}
	return month, year
}

// Brand names the card network from the number's prefix (IIN ranges): "visa", "mastercard", "amex", "discover", "jcb", "diners", "unionpay", "maestro", or "unknown".
//
// Ranges: amex 34, 37; visa 4; mastercard 51–55, 2221–2720; discover 6011,
// 644–649, 65; jcb 3528–3589; diners 300–305, 3095, 36, 38, 39; unionpay 62,
// 81; maestro 50, 56–58, 6304, 67. A number that is empty or holds a
// non-digit is "unknown". The length is not checked.
func Brand(number string) string {
	if number == "" || !allDigits(number) {
		return "unknown"
	}
	// prefix returns the first n digits as a number, or -1 if too short.
	prefix := func(n int) int {
		if len(number) < n {
			return -1
		}
		return atoi(number[:n])
	}
	in := func(n, lo, hi int) bool { p := prefix(n); return lo <= p && p <= hi }
	switch {
	case prefix(2) == 34 || prefix(2) == 37:
		return "amex"
	case prefix(1) == 4:
		return "visa"
	case in(2, 51, 55) || in(4, 2221, 2720):
		return "mastercard"
	case prefix(4) == 6011 || in(3, 644, 649) || prefix(2) == 65:
		return "discover"
	case in(4, 3528, 3589):
		return "jcb"
	case in(3, 300, 305) || prefix(4) == 3095 || prefix(2) == 36 || prefix(2) == 38 || prefix(2) == 39:
		return "diners"
	case prefix(2) == 62 || prefix(2) == 81:
		return "unionpay"
	case prefix(2) == 50 || in(2, 56, 58) || prefix(4) == 6304 || prefix(2) == 67:
		return "maestro"
	}
	return "unknown"
}

// LastFour returns the last four digits of the number.
// A number shorter than four characters is returned whole.
func (c *PayloadCard) LastFour() string {
	if len(c.Number) < 4 {
		return c.Number
	}
	return c.Number[len(c.Number)-4:]
}

// Wipe overwrites the card fields (number, cvv, expiration) with empty
// strings so the payload stops referencing them.
//
// This is best effort: Go strings are immutable, and the JSON decoder, the
// runtime and the caller may hold copies, so Wipe cannot erase the bytes
// from memory. It only drops this payload's references so the garbage
// collector can reclaim them sooner. Callers should also clear the raw request body ([]byte) they
// decoded from.
func (p *Payload) Wipe() {
	p.Card.Number = ""
	p.Card.CVV = ""
	p.Card.Expiration = ""
}

// LuhnValid reports whether a string of ASCII digits passes the Luhn check.
func LuhnValid(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// allDigits reports whether s is non-empty and made of ASCII digits only.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isASCIIDigit(s[i]) {
			return false
		}
	}
	return true
}

// atoi converts a short string of ASCII digits; callers check allDigits.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func isASCIIDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
