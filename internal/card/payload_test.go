package card

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// testNow is the clock for expiration cases: May 2026, so "05/2026" is the
// last valid month and "04/2026" is expired.
var testNow = time.Date(2026, time.May, 15, 12, 0, 0, 0, time.UTC)

// validPayload returns a payload that passes Validate at testNow.
func validPayload() *Payload {
	return &Payload{
		User: PayloadUser{
			Name: PayloadName{FirstName: "Ada", LastName: "Lovelace"},
			Address: PayloadAddress{
				Street:     "12 Analytical Way",
				Street2:    "Apt 3",
				City:       "New York",
				Region:     "US-NY",
				PostalCode: "10001",
				Country:    "US",
			},
			PhoneNumber: "+12125550123",
		},
		Card: PayloadCard{Number: "4242424242424242", Expiration: "12/2028", CVV: "123"},
	}
}

// fieldValue reads a field by its wire path, for messages that must not
// echo it.
func fieldValue(t *testing.T, p *Payload, path string) string {
	t.Helper()
	values := map[string]string{
		"user.name.first_name":     p.User.Name.FirstName,
		"user.name.last_name":      p.User.Name.LastName,
		"user.address.street":      p.User.Address.Street,
		"user.address.street2":     p.User.Address.Street2,
		"user.address.city":        p.User.Address.City,
		"user.address.region":      p.User.Address.Region,
		"user.address.postal_code": p.User.Address.PostalCode,
		"user.address.country":     p.User.Address.Country,
		"user.phone_number":        p.User.PhoneNumber,
		"card.number":              p.Card.Number,
		"card.expiration":          p.Card.Expiration,
		"card.cvv":                 p.Card.CVV,
	}
	v, ok := values[path]
	if !ok {
		t.Fatalf("no field %q", path)
	}
	return v
}

type validateCase struct {
	name   string
	mutate func(*Payload)
	field  string // "" when the payload must pass
	msg    string // a substring of the expected message
}

func set(f func(*Payload, string), v string) func(*Payload) {
	return func(p *Payload) { f(p, v) }
}

var (
	setFirstName  = func(p *Payload, v string) { p.User.Name.FirstName = v }
	setLastName   = func(p *Payload, v string) { p.User.Name.LastName = v }
	setStreet     = func(p *Payload, v string) { p.User.Address.Street = v }
	setStreet2    = func(p *Payload, v string) { p.User.Address.Street2 = v }
	setCity       = func(p *Payload, v string) { p.User.Address.City = v }
	setPostalCode = func(p *Payload, v string) { p.User.Address.PostalCode = v }
	setPhone      = func(p *Payload, v string) { p.User.PhoneNumber = v }
	setNumber     = func(p *Payload, v string) { p.Card.Number = v }
	setExpiration = func(p *Payload, v string) { p.Card.Expiration = v }
	setCVV        = func(p *Payload, v string) { p.Card.CVV = v }
)

func setAddress(country, region string) func(*Payload) {
	return func(p *Payload) {
		p.User.Address.Country = country
		p.User.Address.Region = region
	}
}

// validateCases holds every constraint at its pass and fail edges.
var validateCases = []validateCase{
	{name: "valid", mutate: func(*Payload) {}},

	// Names: 255 characters, counted in runes ("é" is two bytes).
	{name: "first name 255 runes", mutate: set(setFirstName, strings.Repeat("é", 255))},
	{name: "first name 255 runes plus spaces", mutate: set(setFirstName, "  "+strings.Repeat("é", 255)+" ")},
	{name: "first name 256 runes", mutate: set(setFirstName, strings.Repeat("é", 256)), field: "user.name.first_name", msg: "at most 255 characters"},
	{name: "first name missing", mutate: set(setFirstName, ""), field: "user.name.first_name", msg: "is required."},
	{name: "first name blank", mutate: set(setFirstName, "   "), field: "user.name.first_name", msg: "is required."},
	{name: "first name control character", mutate: set(setFirstName, "Ada\x00Byron"), field: "user.name.first_name", msg: "control characters"},
	{name: "first name tab", mutate: set(setFirstName, "Ada\tByron"), field: "user.name.first_name", msg: "control characters"},
	{name: "first name invalid UTF-8", mutate: set(setFirstName, "Ad\xffa"), field: "user.name.first_name", msg: "UTF-8"},
	{name: "last name 255 runes", mutate: set(setLastName, strings.Repeat("x", 255))},
	{name: "last name 256 runes", mutate: set(setLastName, strings.Repeat("x", 256)), field: "user.name.last_name", msg: "at most 255 characters"},
	{name: "last name missing", mutate: set(setLastName, ""), field: "user.name.last_name", msg: "is required."},

	// Street, street2, city.
	{name: "street 46", mutate: set(setStreet, strings.Repeat("s", 46))},
	{name: "street 47", mutate: set(setStreet, strings.Repeat("s", 47)), field: "user.address.street", msg: "at most 46 characters"},
	{name: "street missing", mutate: set(setStreet, ""), field: "user.address.street", msg: "is required."},
	{name: "street2 absent", mutate: set(setStreet2, "")},
	{name: "street2 blank", mutate: set(setStreet2, "  ")},
	{name: "street2 46", mutate: set(setStreet2, strings.Repeat("ß", 46))},
	{name: "street2 47", mutate: set(setStreet2, strings.Repeat("ß", 47)), field: "user.address.street2", msg: "at most 46 characters"},
	{name: "street2 control character", mutate: set(setStreet2, "Apt\n3"), field: "user.address.street2", msg: "control characters"},
	{name: "city 32", mutate: set(setCity, strings.Repeat("c", 32))},
	{name: "city 33", mutate: set(setCity, strings.Repeat("c", 33)), field: "user.address.city", msg: "at most 32 characters"},
	{name: "city missing", mutate: set(setCity, ""), field: "user.address.city", msg: "is required."},

	// Country.
	{name: "country lower case", mutate: setAddress("us", "US-NY")},
	{name: "country unknown", mutate: setAddress("ZZ", "NY"), field: "user.address.country", msg: "ISO 3166-1 alpha-2"},
	{name: "country alpha-3", mutate: setAddress("USA", "NY"), field: "user.address.country", msg: "ISO 3166-1 alpha-2"},
	{name: "country with digit", mutate: setAddress("U1", "NY"), field: "user.address.country", msg: "ISO 3166-1 alpha-2"},
	{name: "country padded", mutate: setAddress(" US", "NY"), field: "user.address.country", msg: "ISO 3166-1 alpha-2"},
	{name: "country missing", mutate: setAddress("", "NY"), field: "user.address.country", msg: "is required."},
	{name: "country and region both bad", mutate: setAddress("ZZ", "XX-YY"), field: "user.address.country"},

	// Region.
	{name: "region full form", mutate: setAddress("US", "US-NY")},
	{name: "region bare form", mutate: setAddress("US", "NY")},
	{name: "region lower case bare", mutate: setAddress("US", "ny")},
	{name: "region lower case full", mutate: setAddress("us", "us-ny")},
	{name: "region Canada", mutate: setAddress("CA", "ON")},
	{name: "region second level", mutate: setAddress("FR", "FR-75")},
	{name: "region alphanumeric", mutate: setAddress("FR", "2A")},
	{name: "region country without subdivisions", mutate: setAddress("PR", "PR")},
	{name: "region country without subdivisions lower case", mutate: setAddress("hk", "hk")},
	{name: "region of another country", mutate: setAddress("US", "CA-ON"), field: "user.address.region", msg: "must be a subdivision of the country"},
	{name: "region unknown country prefix", mutate: setAddress("US", "XX-YY"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region unknown bare", mutate: setAddress("US", "QQ"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region bare of another country", mutate: setAddress("US", "ON"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region empty part", mutate: setAddress("US", "US-"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region two hyphens", mutate: setAddress("US", "US-NY-1"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region country code itself", mutate: setAddress("US", "US"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region self code full form", mutate: setAddress("PR", "PR-PR"), field: "user.address.region", msg: "ISO 3166-2"},
	{name: "region missing", mutate: setAddress("US", ""), field: "user.address.region", msg: "is required."},

	// Postal code.
	{name: "postal code 4", mutate: set(setPostalCode, "1234"), field: "user.address.postal_code", msg: "5 to 10 characters"},
	{name: "postal code 5", mutate: set(setPostalCode, "12345")},
	{name: "postal code 10", mutate: set(setPostalCode, "12345-6789")},
	{name: "postal code 11", mutate: set(setPostalCode, "12345-67890"), field: "user.address.postal_code", msg: "5 to 10 characters"},
	{name: "postal code with space", mutate: set(setPostalCode, "SW1A 1AA")},
	{name: "postal code bad character", mutate: set(setPostalCode, "1234_5"), field: "user.address.postal_code", msg: "letters, digits, spaces and hyphens"},
	{name: "postal code non-ASCII", mutate: set(setPostalCode, "12345é"), field: "user.address.postal_code", msg: "letters, digits, spaces and hyphens"},
	{name: "postal code missing", mutate: set(setPostalCode, ""), field: "user.address.postal_code", msg: "is required."},

	// Phone number.
	{name: "phone absent", mutate: set(setPhone, "")},
	{name: "phone UK", mutate: set(setPhone, "+442071838750")},
	{name: "phone made-up US", mutate: set(setPhone, "+15555555555")},
	{name: "phone non-geographic", mutate: set(setPhone, "+80012345678")},
	{name: "phone without plus", mutate: set(setPhone, "12125550123"), field: "user.phone_number", msg: "E.164"},
	{name: "phone with spaces", mutate: set(setPhone, "+1 212 555 0123"), field: "user.phone_number", msg: "E.164"},
	{name: "phone leading zero", mutate: set(setPhone, "+0123456789"), field: "user.phone_number", msg: "E.164"},
	{name: "phone 16 digits", mutate: set(setPhone, "+1234567890123456"), field: "user.phone_number", msg: "E.164"},
	{name: "phone plus only", mutate: set(setPhone, "+"), field: "user.phone_number", msg: "E.164"},
	{name: "phone unknown calling code", mutate: set(setPhone, "+999123456789"), field: "user.phone_number", msg: "country calling code"},
	{name: "phone too short for US", mutate: set(setPhone, "+1212555012"), field: "user.phone_number", msg: "possible length"},
	{name: "phone too long for US", mutate: set(setPhone, "+121255501234"), field: "user.phone_number", msg: "possible length"},

	// Card number.
	{name: "number 11 digits", mutate: set(setNumber, "42424242424"), field: "card.number", msg: "12 to 19 digits"},
	{name: "number 12 digits", mutate: set(setNumber, "424242424242")},
	{name: "number 19 digits", mutate: set(setNumber, "4242424242424242428")},
	{name: "number 20 digits", mutate: set(setNumber, "42424242424242424242"), field: "card.number", msg: "12 to 19 digits"},
	{name: "number Luhn failure", mutate: set(setNumber, "4242424242424241"), field: "card.number", msg: "must pass the Luhn check."},
	{name: "number with spaces", mutate: set(setNumber, "4242 4242 4242 4242"), field: "card.number", msg: "must contain digits only."},
	{name: "number with dashes", mutate: set(setNumber, "4242-4242-4242-4242"), field: "card.number", msg: "must contain digits only."},
	{name: "number full-width digits", mutate: set(setNumber, "４２４２４２４２４２４２４２４２"), field: "card.number", msg: "must contain digits only."},
	{name: "number missing", mutate: set(setNumber, ""), field: "card.number", msg: "is required."},

	// Expiration, at testNow (May 2026).
	{name: "expiration MM/YYYY this month", mutate: set(setExpiration, "05/2026")},
	{name: "expiration MM/YY this month", mutate: set(setExpiration, "05/26")},
	{name: "expiration MM/YYYY last month", mutate: set(setExpiration, "04/2026"), field: "card.expiration", msg: "must not be in the past."},
	{name: "expiration MM/YY last month", mutate: set(setExpiration, "04/26"), field: "card.expiration", msg: "must not be in the past."},
	{name: "expiration last year", mutate: set(setExpiration, "12/2025"), field: "card.expiration", msg: "must not be in the past."},
	{name: "expiration 20 years ahead", mutate: set(setExpiration, "05/2046")},
	{name: "expiration over 20 years ahead", mutate: set(setExpiration, "06/2046"), field: "card.expiration", msg: "at most 20 years"},
	{name: "expiration month 00", mutate: set(setExpiration, "00/2027"), field: "card.expiration", msg: "month from 01 to 12"},
	{name: "expiration month 13", mutate: set(setExpiration, "13/2027"), field: "card.expiration", msg: "month from 01 to 12"},
	{name: "expiration month 12", mutate: set(setExpiration, "12/27")},
	{name: "expiration one-digit month", mutate: set(setExpiration, "5/2027"), field: "card.expiration", msg: "MM/YYYY or MM/YY"},
	{name: "expiration three-digit year", mutate: set(setExpiration, "05/202"), field: "card.expiration", msg: "MM/YYYY or MM/YY"},
	{name: "expiration dash", mutate: set(setExpiration, "05-2027"), field: "card.expiration", msg: "MM/YYYY or MM/YY"},
	{name: "expiration letters", mutate: set(setExpiration, "ab/cdef"), field: "card.expiration", msg: "MM/YYYY or MM/YY"},
	{name: "expiration missing", mutate: set(setExpiration, ""), field: "card.expiration", msg: "is required."},

	// CVV.
	{name: "cvv 2", mutate: set(setCVV, "12"), field: "card.cvv", msg: "3 or 4 digits"},
	{name: "cvv 3", mutate: set(setCVV, "123")},
	{name: "cvv 4", mutate: set(setCVV, "1234")},
	{name: "cvv 5", mutate: set(setCVV, "12345"), field: "card.cvv", msg: "3 or 4 digits"},
	{name: "cvv letter", mutate: set(setCVV, "12a"), field: "card.cvv", msg: "3 or 4 digits"},
	{name: "cvv missing", mutate: set(setCVV, ""), field: "card.cvv", msg: "is required."},

	// Order: the first failing field in the documented order wins.
	{name: "first name before card", mutate: func(p *Payload) { p.User.Name.FirstName = ""; p.Card = PayloadCard{} }, field: "user.name.first_name"},
	{name: "country before region and postal code", mutate: func(p *Payload) {
		p.User.Address = PayloadAddress{Street: "1 Main St", City: "Springfield", Country: "XX", Region: "XX-YY", PostalCode: "1"}
	}, field: "user.address.country"},
	{name: "card number before cvv", mutate: func(p *Payload) { p.Card.Number = "1"; p.Card.CVV = "1" }, field: "card.number"},
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range validateCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := validPayload()
			tc.mutate(p)
			before := *p
			err := p.Validate(testNow)
			if *p != before {
				t.Error("Validate modified the payload")
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %q (%s), want nil", err.Message, err.Field)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error on %s", tc.field)
			}
			if err.Field != tc.field {
				t.Errorf("Field = %q, want %q (message %q)", err.Field, tc.field, err.Message)
			}
			if !strings.Contains(err.Message, tc.msg) {
				t.Errorf("Message = %q, want it to contain %q", err.Message, tc.msg)
			}
			if want := "The " + err.Field + " field "; !strings.HasPrefix(err.Message, want) {
				t.Errorf("Message = %q, want it to start with %q", err.Message, want)
			}
		})
	}
}

// TestValidateMessagesNeverEchoValue runs every failing case and checks
// that the message does not quote the offending value, which may be card
// data.
func TestValidateMessagesNeverEchoValue(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, tc := range validateCases {
		if tc.field == "" {
			continue
		}
		p := validPayload()
		tc.mutate(p)
		err := p.Validate(testNow)
		if err == nil {
			t.Errorf("%s: Validate = nil", tc.name)
			continue
		}
		value := fieldValue(t, p, err.Field)
		if len(strings.TrimSpace(value)) < 3 {
			continue
		}
		checked++
		if strings.Contains(err.Message, value) || strings.Contains(err.Error(), value) {
			t.Errorf("%s: message %q contains the value", tc.name, err.Message)
		}
	}
	if checked < 40 {
		t.Errorf("checked %d failing values, want at least 40", checked)
	}
}

func TestValidateExpirationUsesUTC(t *testing.T) {
	t.Parallel()
	// 1 June 01:00 at UTC+5 is still 31 May in UTC: May cards are valid.
	zone := time.FixedZone("UTC+5", 5*60*60)
	now := time.Date(2026, time.June, 1, 1, 0, 0, 0, zone)
	p := validPayload()
	p.Card.Expiration = "05/2026"
	if err := p.Validate(now); err != nil {
		t.Fatalf("Validate = %q, want nil", err.Message)
	}
	// One day later in UTC, the card has expired.
	if err := p.Validate(now.Add(24 * time.Hour)); err == nil || err.Field != "card.expiration" {
		t.Fatalf("Validate = %v, want a card.expiration error", err)
	}
}

func TestValidateNilPayload(t *testing.T) {
	t.Parallel()
	var p *Payload
	if err := p.Validate(testNow); err == nil || err.Field != "payload" {
		t.Fatalf("Validate = %v, want a payload error", err)
	}
}

func TestFieldErrorError(t *testing.T) {
	t.Parallel()
	err := error(&FieldError{Field: "card.cvv", Message: "The card.cvv field is required."})
	if err.Error() != "The card.cvv field is required." {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestBrand(t *testing.T) {
	t.Parallel()
	cases := []struct{ number, want string }{
		{"4242424242424242", "visa"},
		{"4000056655665556", "visa"},
		{"5555555555554444", "mastercard"},
		{"2223003122003222", "mastercard"},
		{"2720990000000007", "mastercard"},
		{"378282246310005", "amex"},
		{"371449635398431", "amex"},
		{"6011111111111117", "discover"},
		{"6445644564456445", "discover"},
		{"6500000000000002", "discover"},
		{"3566002020360505", "jcb"},
		{"3528000000000007", "jcb"},
		{"36227206271667", "diners"},
		{"3056930009020004", "diners"},
		{"3095000000000003", "diners"},
		{"6200000000000005", "unionpay"},
		{"8171999927660000", "unionpay"},
		{"6304000000000000", "maestro"},
		{"6759649826438453", "maestro"},
		{"5018000000000009", "maestro"},
		{"2200000000000004", "unknown"}, // Mir
		{"1234567890123452", "unknown"},
		{"9999999999999995", "unknown"},
		{"4242 4242 4242 4242", "unknown"},
		{"", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.number, func(t *testing.T) {
			t.Parallel()
			if got := Brand(tc.number); got != tc.want {
				t.Errorf("Brand(%q) = %q, want %q", tc.number, got, tc.want)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expiration  string
		month, year int
	}{
		{"05/26", 5, 2026},
		{"12/2030", 12, 2030},
		{"01/00", 1, 2000},
		{"5/26", 0, 0},
		{"", 0, 0},
	}
	for _, tc := range cases {
		c := PayloadCard{Expiration: tc.expiration}
		if m, y := c.Expiry(); m != tc.month || y != tc.year {
			t.Errorf("Expiry(%q) = %d, %d; want %d, %d", tc.expiration, m, y, tc.month, tc.year)
		}
	}
}

func TestLastFour(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"4242424242424242": "4242",
		"378282246310005":  "0005",
		"123":              "123",
	}
	for number, want := range cases {
		c := PayloadCard{Number: number}
		if got := c.LastFour(); got != want {
			t.Errorf("LastFour(%q) = %q, want %q", number, got, want)
		}
	}
}

func TestWipe(t *testing.T) {
	t.Parallel()
	p := validPayload()
	p.Wipe()
	if p.Card != (PayloadCard{}) {
		t.Errorf("card after Wipe = %+v, want empty", p.Card)
	}
	if p.User != validPayload().User {
		t.Error("Wipe changed the user")
	}
}

const validJSON = `{
	"user": {
		"name": {"first_name": "Ada", "last_name": "Lovelace"},
		"address": {
			"street": "12 Analytical Way", "street2": "Apt 3", "city": "New York",
			"region": "US-NY", "postal_code": "10001", "country": "US"
		},
		"phone_number": "+12125550123"
	},
	"card": {"number": "4242424242424242", "expiration": "12/2028", "cvv": "123"}
}`

func TestDecodePayload(t *testing.T) {
	t.Parallel()
	p, err := DecodePayload([]byte(validJSON + "\n"))
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	if *p != *validPayload() {
		t.Errorf("DecodePayload = %+v, want %+v", *p, *validPayload())
	}
	if ferr := p.Validate(testNow); ferr != nil {
		t.Errorf("Validate = %q", ferr.Message)
	}
}

func TestDecodePayloadMissingFieldsLeftToValidate(t *testing.T) {
	t.Parallel()
	p, err := DecodePayload([]byte(`{"user": {"name": {"first_name": "Ada"}}, "card": {}}`))
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	if ferr := p.Validate(testNow); ferr == nil || ferr.Field != "user.name.last_name" || ferr.Message != "The user.name.last_name field is required." {
		t.Errorf("Validate = %v, want user.name.last_name required", ferr)
	}
}

func TestDecodePayloadErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		input  string
		field  string
		msg    string
		secret string // must not appear in the message
	}{
		{name: "empty", input: ``, field: "payload", msg: "must be a JSON object"},
		{name: "array", input: `["4242424242424242"]`, field: "payload", msg: "must be a JSON object", secret: "4242424242424242"},
		{name: "string", input: `"4242424242424242"`, field: "payload", msg: "must be a JSON object", secret: "4242424242424242"},
		{name: "null", input: `null`, field: "payload", msg: "must be a JSON object"},
		{name: "syntax error", input: `{"card": {"number": "4242424242424242", }}`, field: "payload", msg: "must be valid JSON", secret: "4242424242424242"},
		{name: "truncated", input: `{"card": {"number": "4242424242424242"`, field: "payload", msg: "must be valid JSON", secret: "4242424242424242"},
		{name: "missing value", input: `{"card": {"cvv": }}`, field: "payload", msg: "must be valid JSON"},
		{name: "number then garbage", input: `{"card": {"cvv": 4242x}}`, field: "card.cvv", msg: "must be a string", secret: "4242"},
		{name: "unknown top-level field", input: `{"extra": "4242424242424242"}`, field: "payload", msg: "The payload contains a field that is not allowed.", secret: "4242424242424242"},
		{name: "unknown nested field", input: `{"card": {"nmber": "4242424242424242"}}`, field: "card", msg: "The card object contains a field that is not allowed.", secret: "4242424242424242"},
		{name: "field in wrong case", input: `{"card": {"Number": "4242424242424242"}}`, field: "card", msg: "The card object contains a field that is not allowed.", secret: "4242424242424242"},
		{name: "card number as key", input: `{"card": {"4242424242424242": "x"}}`, field: "card", msg: "The card object contains a field that is not allowed.", secret: "4242424242424242"},
		{name: "odd top-level key", input: `{"4242 4242": "x"}`, field: "payload", msg: "contains a field that is not allowed", secret: "4242 4242"},
		{name: "number not a string", input: `{"card": {"number": 4242424242424242}}`, field: "card.number", msg: "The card.number field must be a string.", secret: "4242424242424242"},
		{name: "cvv not a string", input: `{"card": {"cvv": 123}}`, field: "card.cvv", msg: "must be a string", secret: "123"},
		{name: "null field", input: `{"card": {"number": null}}`, field: "card.number", msg: "must be a string"},
		{name: "boolean field", input: `{"user": {"phone_number": true}}`, field: "user.phone_number", msg: "must be a string"},
		{name: "object field", input: `{"card": {"number": {"digits": "4242424242424242"}}}`, field: "card.number", msg: "must be a string", secret: "4242424242424242"},
		{name: "array field", input: `{"card": {"number": ["4242424242424242"]}}`, field: "card.number", msg: "must be a string", secret: "4242424242424242"},
		{name: "object expected", input: `{"card": "4242424242424242"}`, field: "card", msg: "The card field must be an object.", secret: "4242424242424242"},
		{name: "nested object expected", input: `{"user": {"address": null}}`, field: "user.address", msg: "must be an object"},
		{name: "duplicate key", input: `{"card": {"number": "4242424242424242", "number": "5555555555554444"}}`, field: "card.number", msg: "must appear only once", secret: "5555555555554444"},
		{name: "duplicate object", input: `{"card": {}, "card": {"number": "4242424242424242"}}`, field: "card", msg: "The card field must appear only once.", secret: "4242424242424242"},
		{name: "null object", input: `{"user": null}`, field: "user", msg: "The user field must be an object."},
		{name: "deep field in wrong case", input: `{"user": {"address": {"Postal_Code": "10001"}}}`, field: "user.address", msg: "The user.address object contains a field that is not allowed.", secret: "10001"},
		{name: "invalid UTF-8", input: "{\"user\": {\"name\": {\"first_name\": \"Ad\xffa\"}}}", field: "payload", msg: "The payload must be valid JSON."},
		{name: "trailing object", input: validJSON + ` {}`, field: "payload", msg: "exactly one JSON value"},
		{name: "trailing garbage", input: validJSON + ` 4242424242424242`, field: "payload", msg: "exactly one JSON value", secret: "4242424242424242"},
		{name: "trailing bad token", input: validJSON + `x`, field: "payload", msg: "exactly one JSON value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := DecodePayload([]byte(tc.input))
			if err == nil {
				t.Fatalf("DecodePayload = %+v, want an error", p)
			}
			var ferr *FieldError
			if !errors.As(err, &ferr) {
				t.Fatalf("error %T is not a *FieldError", err)
			}
			if p != nil {
				t.Error("DecodePayload returned a payload with its error")
			}
			if ferr.Field != tc.field {
				t.Errorf("Field = %q, want %q", ferr.Field, tc.field)
			}
			if !strings.Contains(ferr.Message, tc.msg) {
				t.Errorf("Message = %q, want it to contain %q", ferr.Message, tc.msg)
			}
			if tc.secret != "" && strings.Contains(ferr.Message, tc.secret) {
				t.Errorf("Message = %q echoes the input", ferr.Message)
			}
		})
	}
}

func TestISO3166Embedded(t *testing.T) {
	t.Parallel()
	table, err := parseISO3166(iso3166Data)
	if err != nil {
		t.Fatalf("embedded table: %v", err)
	}
	if n := len(table.countries); n < 240 {
		t.Errorf("%d countries, want ISO 3166-1's 249 or so", n)
	}
	if n := len(table.subdivisions); n < 4000 {
		t.Errorf("%d subdivisions, want ISO 3166-2's 5000 or so", n)
	}
	for _, code := range []string{"US-NY", "US-DC", "CA-ON", "GB-ENG", "FR-IDF", "DE-BY", "AU-NSW", "JP-13"} {
		if _, ok := table.subdivisions[code]; !ok {
			t.Errorf("subdivision %s missing", code)
		}
	}
	if !table.countries["US"] {
		t.Error("US should have subdivisions")
	}
	if has, ok := table.countries["HK"]; !ok || has {
		t.Errorf("HK: listed %v, has subdivisions %v; want listed without", ok, has)
	}
	if iso3166() == nil {
		t.Error("iso3166() = nil")
	}
}

func TestParseISO3166Malformed(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"no countries":         "# only a comment\n\n",
		"lower-case country":   "us NY\n",
		"three-letter country": "USA NY\n",
		"lower-case part":      "US ny\n",
		"long part":            "US NYCX\n",
		"punctuation in part":  "US N-Y\n",
		"duplicate country":    "US NY\nUS CA\n",
	}
	for name, data := range cases {
		if _, err := parseISO3166(data); err == nil {
			t.Errorf("%s: parseISO3166 succeeded, want an error", name)
		}
	}
	table, err := parseISO3166("# header\nUS NY CA\nHK\n")
	if err != nil {
		t.Fatalf("parseISO3166: %v", err)
	}
	if _, ok := table.subdivisions["US-CA"]; !ok || table.countries["HK"] || !table.countries["US"] {
		t.Errorf("parseISO3166 = %+v", table)
	}
}

func TestParseSummary(t *testing.T) {
	t.Parallel()
	if s, ok := ParseSummary("visa", "4242", "07/2028"); !ok || s.Brand != "visa" || s.LastFour != "4242" || s.ExpMonth != 7 || s.ExpYear != 2028 {
		t.Fatalf("ParseSummary = %+v, %v", s, ok)
	}
	for _, bad := range [][3]string{{"", "4242", "07/2028"}, {"visa", "424", "07/2028"}, {"visa", "42a2", "07/2028"},
		{"visa", "4242", "7/2028"}, {"visa", "4242", "13/2028"}, {"visa", "4242", "00/2028"}, {"visa", "4242", "07-2028"},
		{"visa", "4242", "07/20x8"}, {"visa", "4242", "07/1999"}} {
		if _, ok := ParseSummary(bad[0], bad[1], bad[2]); ok {
			t.Errorf("ParseSummary%q accepted", bad)
		}
	}
}

// go test ./internal/card -run '^$' -bench DecodePayload -benchmem
func BenchmarkDecodePayload(b *testing.B) {
	data := []byte(validJSON)
	for b.Loop() {
		if _, err := DecodePayload(data); err != nil {
			b.Fatal(err)
		}
	}
}
