package merchant

import (
	"slices"
	"strings"
	"unicode"
)

// NameKey reduces a merchant or company name to the form names are matched
// in: normalize's letters and digits, without what tells nothing about the
// merchant. "AMAZON.COM, INC.", "Amazon.com" and "amazon" all give
// "amazon"; "Barnes & Noble" and "Barnes and Noble" give "barnesnoble";
// "Uber Eats" stays "ubereats", apart from "uber".
//
// It drops, in order: a leading "www."; a web domain's ending (".com",
// ".co.uk", …) at the end of a word; the words "and" and "&"; a leading
// "the"; and trailing legal forms ("Inc.", "LLC", "Ltd", "Corp.", "Co.",
// "GmbH", …), repeatedly, as in "Foo Holdings Co., Ltd." → "fooholdings".
// At least one word is always kept: "The Co." is "co", "Inc." is "inc".
func NameKey(name string) string {
	words := nameWords(name)
	kept := slices.DeleteFunc(slices.Clone(words), func(w string) bool { return w == "and" })
	if len(kept) > 1 && kept[0] == "the" {
		kept = kept[1:]
	}
	for len(kept) > 1 && legalForms[kept[len(kept)-1]] {
		kept = kept[:len(kept)-1]
	}
	if len(kept) == 0 {
		kept = words
	}
	var b strings.Builder
	for _, w := range kept {
		b.WriteString(normalize(w))
	}
	return b.String()
}

// legalForms are the company-form words NameKey drops from a name's end,
// as normalize spells them ("l.l.c." is "llc").
var legalForms = map[string]bool{
	"inc": true, "incorporated": true, "llc": true, "llp": true, "lp": true, "ltd": true, "limited": true,
	"corp": true, "corporation": true, "co": true, "company": true, "plc": true, "gmbh": true, "ag": true,
	"sa": true, "sarl": true, "bv": true, "nv": true, "pty": true, "pte": true, "srl": true, "spa": true,
	"ab": true, "as": true, "oy": true, "kk": true, "pbc": true,
}

// domainEndings are the web domain endings NameKey drops, longest first.
var domainEndings = []string{
	".co.uk", ".com.au", ".co.jp", ".com", ".net", ".org", ".co", ".io", ".us", ".uk", ".ca", ".de",
	".fr", ".tv", ".app", ".shop", ".store", ".ai",
}

// nameWords splits a name into lower-case words, normalised by normalize
// except that "&" is a word of its own (kept as "and"), and with the
// domain endings and "www." prefixes removed from words.
func nameWords(name string) []string {
	var words []string
	for _, field := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == '/' || r == '(' || r == ')' || r == '|'
	}) {
		field = strings.TrimPrefix(field, "www.")
		for _, end := range domainEndings {
			if len(field) > len(end) && strings.HasSuffix(field, end) {
				field = field[:len(field)-len(end)]
				break
			}
		}
		// "&" between words is "and"; inside one ("AT&T") it joins it.
		if field == "&" {
			words = append(words, "and")
			continue
		}
		if w := normalize(field); w != "" {
			words = append(words, w)
		}
	}
	return words
}
