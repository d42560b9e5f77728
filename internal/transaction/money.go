package transaction

import (
	"errors"
	"strconv"
	"strings"
)

// FormatCents writes an amount in cents as a decimal string with two
// places: 1234 → "12.34", -5 → "-0.05".
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	frac := c % 100
	s := sign + strconv.FormatInt(c/100, 10) + "."
	if frac < 10 {
		s += "0"
	}
	return s + strconv.FormatInt(frac, 10)
}

var errAmount = errors.New("not a decimal amount with at most two places")

// ParseCents reads a decimal string ("12.34", "-0.5", "7") as cents. More
// than two decimal places, exponents, signs other than a leading minus,
// and amounts beyond ±10^15 are refused.
func ParseCents(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || len(whole) > 15 || (hasFrac && (len(frac) == 0 || len(frac) > 2)) {
		return 0, errAmount
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, errAmount
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	var f int64
	if hasFrac {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	c := w*100 + f
	if neg {
		c = -c
	}
	return c, nil
}
