package reqlog

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/hitchdev/hitch/internal/card"
)

// MaxStoredBody is the most of a redacted body the log keeps; longer ones
// are cut and marked.
const MaxStoredBody = 16 << 10

// MaxCapturedBody is the most of a body the request path copies for the
// log. A body over it is never parsed, so it is stored as a placeholder:
// a cut JSON document could not be redacted by its structure.
const MaxCapturedBody = 64 << 10

// Redacted replaces every value the log must not keep.
const Redacted = "[redacted]"

// truncatedMark ends a stored body that was cut at MaxStoredBody.
const truncatedMark = "\n[truncated]"

// secretKeys are the object keys whose values are never kept, whatever
// they hold (lower case): the whole value is replaced, so that not even
// the field names of a card are stored. Besides them, any key holding "secret",
// "password", "token", "encrypted" or "signature" (Knot-Signature) is
// redacted (secretWords).
var secretKeys = map[string]bool{
	"session": true, "jwe": true, "card": true, "number": true, "cvv": true, "cvc": true, "expiration": true,
	"expiry": true, "otp": true, "answer": true, "answers": true, "authorization": true, "api_key": true,
	"pin": true, "credentials": true, "cookie": true,
	// Detection's inputs are sealed at rest wherever Hitch keeps them.
	"email": true, "phone_number": true, "phone": true,
}

var secretWords = []string{"secret", "password", "token", "encrypted", "signature"}

// secretPrefixes are the prefixes of Hitch's own bearer values (API
// secrets, connector secrets, session values, webhook signing secrets): a
// string holding one is redacted under any key.
var secretPrefixes = []string{"hsk_", "csec_", "sess_", "whsec_"}

// cardKeys are the only top-level keys of POST /card's request body and
// query that are kept: the rest is the card and the cardholder, or copies
// of them under names the API does not take (flattened, misnamed, in
// another spelling), which a deny-list of names would miss.
var cardKeys = map[string]bool{"task_id": true, "external_user_id": true, "merchant_id": true}

// cardPath is the path whose requests are card data.
const cardPath = "/card"

// keptKey reports whether a top-level key of a request to path may keep
// its value (subject to the other rules).
func keptKey(path, key string) bool { return path != cardPath || cardKeys[key] }

func secretKey(key string) bool {
	k := strings.ToLower(key)
	if secretKeys[k] {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Body is what the log keeps of a body: redacted JSON, compact and in the
// order it was sent, cut at MaxStoredBody, or a placeholder saying what it
// was. The dashboard indents it for reading.
type Body struct {
	Text string
	// ExternalUserID is a top-level external_user_id the body held.
	ExternalUserID string
	// ErrorCode is a top-level error_code the body held.
	ErrorCode string
}

// RedactBody turns a captured response body into what may be stored.
// overflow says the body was longer than what was captured (size is its
// full length when known, else the captured length).
func RedactBody(path, contentType string, body []byte, size int, overflow bool) Body {
	return redactBody(path, contentType, body, size, overflow, false)
}

// RedactRequestBody is RedactBody for a request's body, whose top-level
// keys on POST /card are also held against cardKeys.
func RedactRequestBody(path, contentType string, body []byte, size int, overflow bool) Body {
	return redactBody(path, contentType, body, size, overflow, true)
}

func redactBody(path, contentType string, body []byte, size int, overflow, request bool) Body {
	if len(body) == 0 && !overflow {
		return Body{}
	}
	if overflow {
		return Body{Text: fmt.Sprintf("[body of %d bytes or more not kept: over %d KiB]", size, MaxCapturedBody>>10)}
	}
	if !gjson.ValidBytes(body) {
		ct := contentType
		if ct == "" {
			ct = "no content type"
		}
		return Body{Text: fmt.Sprintf("[body of %d bytes not kept: not JSON (%s)]", len(body), redactText(ct, 100))}
	}
	if nestedDeeperThan(body, maxDepth) {
		return Body{Text: fmt.Sprintf("[body of %d bytes not kept: nested deeper than %d]", len(body), maxDepth)}
	}
	// Both stores take only valid UTF-8, which a JSON body need not be.
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	r := redactor{buf: make([]byte, 0, len(text)), path: path, request: request}
	r.top(gjson.Parse(text))
	return Body{Text: cut(string(r.buf), MaxStoredBody), ExternalUserID: redactText(r.user, 256),
		ErrorCode: cleanText(r.errorCode, 100)}
}

// maxDepth is the deepest nesting of a body the log parses: the redactor
// reads each level again for the level above it, so its time grows with
// the depth times the size, and no body of the API nests a tenth as deep.
const maxDepth = 64

// nestedDeeperThan reports whether a valid JSON document nests objects and
// arrays deeper than limit.
func nestedDeeperThan(body []byte, limit int) bool {
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case inString:
			if c == '\\' {
				i++ // the escaped byte
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// redactor writes a redacted copy of a JSON document, compact and in the
// order it was sent: copying what may be kept, rather than decoding and
// encoding it again, is what keeps the writer's cost per request low
// (BenchmarkRedact).
type redactor struct {
	buf     []byte
	path    string
	request bool
	// user and errorCode are the last top-level external_user_id and
	// error_code strings, as a decoder would keep them.
	user, errorCode string
}

// top writes the document. On a request, the top-level keys of POST /card
// are held against cardKeys; its kept keys hold a number or a string, so
// an object or a list under them is card data all the same, and so is a
// document that is not an object.
func (r *redactor) top(doc gjson.Result) {
	card := r.request && r.path == cardPath
	if !doc.IsObject() {
		if card {
			r.redacted()
			return
		}
		r.value(doc)
		return
	}
	r.buf = append(r.buf, '{')
	first := true
	doc.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "external_user_id" && v.Type == gjson.String:
			r.user = v.Str
		case k.Str == "error_code" && v.Type == gjson.String:
			r.errorCode = v.Str
		}
		r.key(k, &first)
		nested := v.IsObject() || v.IsArray()
		if r.request && (!keptKey(r.path, k.Str) || nested && card) && v.Type != gjson.Null {
			r.redacted()
		} else {
			r.member(k.Str, v)
		}
		return true
	})
	r.buf = append(r.buf, '}')
}

// member writes the value of key: a secret key's value is replaced
// whatever it holds (null stays null: it holds nothing).
func (r *redactor) member(key string, v gjson.Result) {
	if secretKey(key) && v.Type != gjson.Null {
		r.redacted()
		return
	}
	r.value(v)
}

// value writes v, replacing bearer values and card numbers, and keys that
// hold them (a caller's object keys are data too).
func (r *redactor) value(v gjson.Result) {
	switch {
	case v.IsObject():
		r.buf = append(r.buf, '{')
		first := true
		v.ForEach(func(k, val gjson.Result) bool {
			r.key(k, &first)
			r.member(k.Str, val)
			return true
		})
		r.buf = append(r.buf, '}')
	case v.IsArray():
		r.buf = append(r.buf, '[')
		first := true
		v.ForEach(func(_, val gjson.Result) bool {
			if !first {
				r.buf = append(r.buf, ',')
			}
			first = false
			r.value(val)
			return true
		})
		r.buf = append(r.buf, ']')
	case v.Type == gjson.String:
		r.string(v)
	case v.Type == gjson.Number:
		// A card number sent as a number is stored as the string that
		// replaces it.
		if s := maskCardNumbers(v.Raw); s != v.Raw {
			r.quote(s)
			return
		}
		r.buf = append(r.buf, v.Raw...)
	default: // true, false, null
		r.buf = append(r.buf, v.Raw...)
	}
}

// key writes an object key and its colon, after a comma unless first.
func (r *redactor) key(k gjson.Result, first *bool) {
	if !*first {
		r.buf = append(r.buf, ',')
	}
	*first = false
	r.string(k)
	r.buf = append(r.buf, ':')
}

// string writes a string redacted. It copies the string as sent only when
// redaction leaves it as is and it holds no escape, so that what is copied
// is exactly what was checked.
func (r *redactor) string(v gjson.Result) {
	s := redactString(v.Str)
	if s == v.Str && !strings.Contains(v.Raw, `\`) {
		r.buf = append(r.buf, v.Raw...)
		return
	}
	r.quote(s)
}

func (r *redactor) redacted() { r.quote(Redacted) }

// quote writes s as a JSON string.
func (r *redactor) quote(s string) {
	b, err := json.Marshal(s)
	if err != nil { // a string always encodes
		panic(err)
	}
	r.buf = append(r.buf, b...)
}

// redactString redacts a string holding one of Hitch's bearer values, and
// masks card numbers within any other.
func redactString(s string) string {
	for _, p := range secretPrefixes {
		if strings.Contains(s, p) {
			return Redacted
		}
	}
	return maskCardNumbers(s)
}

// RedactQuery redacts a query string by the same keys, keeping the order of
// its keys sorted.
func RedactQuery(path, rawQuery string) (query, externalUserID string) {
	if rawQuery == "" {
		return "", ""
	}
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "[query not kept: it could not be parsed]", ""
	}
	if ids := values["external_user_id"]; len(ids) > 0 {
		externalUserID = redactText(ids[0], 256)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range values[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			if secretKey(k) || !keptKey(path, k) {
				v = Redacted
			} else {
				v = redactString(v)
			}
			b.WriteString(url.QueryEscape(redactString(k)) + "=" + url.QueryEscape(v))
		}
	}
	return cut(cleanText(b.String(), -1), 2048), externalUserID
}

// redactPath redacts each segment of a path as a string value: the ids in
// a path are the caller's, and may hold a bearer value or a card number.
func redactPath(path string) string {
	segments := strings.Split(cleanText(path, -1), "/")
	for i, s := range segments {
		segments[i] = redactString(s)
	}
	return cut(strings.Join(segments, "/"), 2048)
}

// redactText makes a caller's text storable and redacted, then cuts it at
// n bytes: cut first, a card number's first digits would be kept, too few
// to be recognised, and a NUL removed could join two runs of digits.
func redactText(s string, n int) string {
	return cut(redactString(cleanText(s, -1)), n)
}

// maskCardNumbers replaces every card number within s: a span of whole
// groups of a run of digits (groups joined by single spaces or dashes),
// 12 to 19 digits long, that starts as the card networks' numbers do (2 to
// 6: Mastercard, Amex, Diners, JCB, Visa, Maestro, Discover, UnionPay) and
// passes the Luhn check; the longest such span first, from the left, so
// that a CVV or an expiry written next to a number does not hide it. The
// first digit keeps ids made of Unix times (1…) from being masked one time
// in ten.
func maskCardNumbers(s string) string {
	var out strings.Builder
	last := 0
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		// The run's groups, as [start, end) in s.
		var groups [][2]int
		end := i
		for {
			j := end
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			groups = append(groups, [2]int{end, j})
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
				end = j + 1
				continue
			}
			end = j
			break
		}
		for g := 0; g < len(groups); {
			cardEnd := -1
			digits = digits[:0]
			for h := g; h < len(groups); h++ {
				if digits = append(digits, s[groups[h][0]:groups[h][1]]...); len(digits) > 19 {
					break
				}
				if len(digits) >= 12 && digits[0] >= '2' && digits[0] <= '6' && card.LuhnValid(string(digits)) {
					cardEnd = h
				}
			}
			if cardEnd < 0 {
				g++
				continue
			}
			out.WriteString(s[last:groups[g][0]])
			out.WriteString("[redacted card number]")
			last = groups[cardEnd][1]
			g = cardEnd + 1
		}
		i = end
	}
	if last == 0 {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// cleanText makes s storable in both stores (valid UTF-8, no NUL) and cuts
// it at n bytes (n < 0: no cut).
func cleanText(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if n >= 0 && len(s) > n {
		s = cut(s, n)
	}
	return s
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + truncatedMark
}
