package web

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// The hosted flow's visible text, in every language it speaks, is kept in
// one place: locales/link.json, a table of locales ("en" is the default)
// of keys to strings. The page is rendered in English from it (the
// template's t), and carries the whole table for link.js, which switches
// to the locale of the SDK's init message (docs/link.md). Placeholders
// are {name}: {merchant}, {count}, {category}, {code}.

//go:embed locales/link.json
var linkStringsJSON []byte

// defaultLocale is the flow's language when the SDK asks for none or for
// one it does not speak.
const defaultLocale = "en"

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// linkStrings is the parsed table: locale → key → text.
type linkStrings map[string]map[string]string

// loadLinkStrings parses the table and checks it: every locale has exactly
// the default locale's keys, with the same placeholders.
func loadLinkStrings() (linkStrings, error) {
	var table linkStrings
	if err := json.Unmarshal(linkStringsJSON, &table); err != nil {
		return nil, fmt.Errorf("web: locales/link.json: %w", err)
	}
	en, ok := table[defaultLocale]
	if !ok || len(en) == 0 {
		return nil, fmt.Errorf("web: locales/link.json has no %q table", defaultLocale)
	}
	for _, locale := range slices.Sorted(maps.Keys(table)) {
		strs := table[locale]
		for key, text := range en {
			other, ok := strs[key]
			if !ok || other == "" {
				return nil, fmt.Errorf("web: locales/link.json: %s has no %q", locale, key)
			}
			if !slices.Equal(sortedPlaceholders(text), sortedPlaceholders(other)) {
				return nil, fmt.Errorf("web: locales/link.json: %s %q has placeholders %v, %s has %v", locale, key,
					sortedPlaceholders(other), defaultLocale, sortedPlaceholders(text))
			}
		}
		for key := range strs {
			if _, ok := en[key]; !ok {
				return nil, fmt.Errorf("web: locales/link.json: %s has %q, which %s has not", locale, key, defaultLocale)
			}
		}
	}
	return table, nil
}

func sortedPlaceholders(s string) []string {
	ps := placeholder.FindAllString(s, -1)
	slices.Sort(ps)
	return ps
}

// text is the default locale's string of key, for the template: an
// unknown key fails the page's rendering, so at start.
func (t linkStrings) text(key string) (string, error) {
	s, ok := t[defaultLocale][key]
	if !ok {
		return "", fmt.Errorf("web: no string %q in locales/link.json", key)
	}
	return s, nil
}

// json is the table as the page carries it for link.js.
func (t linkStrings) json() (string, error) {
	b, err := json.Marshal(t)
	return string(b), err
}
