package merchant

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fallbackColor fills the logo of a merchant whose colour is not #RRGGBB.
const fallbackColor = "#6B7280"

// LogoPath returns the URL path at which the merchant's logo is served.
func LogoPath(id int64) string {
	return "/merchants/" + strconv.FormatInt(id, 10) + "/logo.svg"
}

// LogoSVG draws the merchant's logo: a 128×128 rounded square in its colour
// with its initials in white or black, whichever contrasts more. The SVG is
// self-contained, so it can be served as is or inlined in a page.
func LogoSVG(m *Merchant) []byte {
	fill := m.Color
	if !validColor(fill) {
		fill = fallbackColor
	}
	text := initials(m.Name)
	size := 56
	if utf8.RuneCountInString(text) > 1 {
		size = 48
	}
	name := escapeXML(m.Name)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128" role="img" aria-label="%s">`, name)
	fmt.Fprintf(&b, `<title>%s</title>`, name)
	fmt.Fprintf(&b, `<rect width="128" height="128" rx="24" ry="24" fill="%s"/>`, fill)
	fmt.Fprintf(&b, `<text x="64" y="64" dy="0.35em" text-anchor="middle" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="%d" font-weight="700" fill="%s">%s</text>`,
		size, textColor(fill), escapeXML(text))
	b.WriteString(`</svg>`)
	return []byte(b.String())
}

// initials picks one or two letters for a logo: the first letters of the
// first two words ("Uber Eats" → "UE", "AT&T" → "AT"), or for a single word
// its first letter and the next capital after a lower-case letter
// ("DoorDash" → "DD", "Netflix" → "N"). A leading "The" is skipped, and
// apostrophes and dots do not split words ("Lowe's" → "L", "Booking.com" → "B").
func initials(name string) string {
	name = strings.NewReplacer("'", "", "\u2019", "", ".", "").Replace(name)
	words := strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) > 1 && strings.EqualFold(words[0], "the") {
		words = words[1:]
	}
	if len(words) == 0 {
		return "?"
	}

	first, _ := utf8.DecodeRuneInString(words[0])
	out := []rune{unicode.ToUpper(first)}
	if len(words) > 1 {
		for _, w := range words[1:] {
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsLetter(r) {
				out = append(out, unicode.ToUpper(r))
				break
			}
		}
		return string(out)
	}
	prevLower := false
	for _, r := range words[0] {
		if prevLower && unicode.IsUpper(r) {
			out = append(out, r)
			break
		}
		prevLower = unicode.IsLower(r)
	}
	return string(out)
}

// textColor returns white or black, whichever has the higher WCAG contrast
// ratio against the #RRGGBB background.
func textColor(background string) string {
	v, _ := strconv.ParseUint(background[1:], 16, 32)
	channel := func(shift uint) float64 {
		c := float64(v>>shift&0xFF) / 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	l := 0.2126*channel(16) + 0.7152*channel(8) + 0.0722*channel(0)
	if (1.05)/(l+0.05) >= (l+0.05)/0.05 {
		return "#FFFFFF"
	}
	return "#000000"
}

// escapeXML escapes s for use in XML text or a double-quoted attribute.
func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}
