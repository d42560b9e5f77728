package card

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:generate go run ./internal/gen -out iso3166_data.txt

// iso3166Data is the ISO 3166-1/3166-2 code table; its header names the
// source and version.
//
//go:embed iso3166_data.txt
var iso3166Data string

// iso3166Table holds the country and subdivision codes, all upper case.
type iso3166Table struct {
	// countries maps each ISO 3166-1 alpha-2 code to whether it has
	// ISO 3166-2 subdivisions.
	countries map[string]bool
	// subdivisions holds full ISO 3166-2 codes such as "US-NY".
	subdivisions map[string]struct{}
}

// iso3166 parses the embedded table on first use. The file is build-time
// data checked by TestISO3166Embedded, so a parse failure is a broken build,
// not bad input: panicking is the honest answer.
var iso3166 = sync.OnceValue(func() *iso3166Table {
	t, err := parseISO3166(iso3166Data)
	if err != nil {
		panic(fmt.Sprintf("card: embedded iso3166_data.txt: %v", err))
	}
	return t
})

// parseISO3166 reads the table format written by internal/gen: lines of
// "COUNTRY [PART...]", blank lines and "#" comments ignored.
func parseISO3166(data string) (*iso3166Table, error) {
	t := &iso3166Table{countries: map[string]bool{}, subdivisions: map[string]struct{}{}}
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		country := fields[0]
		if len(country) != 2 || !isUpperAlnum(country, false) {
			return nil, fmt.Errorf("line %d: bad country code", i+1)
		}
		if _, dup := t.countries[country]; dup {
			return nil, fmt.Errorf("line %d: country %s listed twice", i+1, country)
		}
		t.countries[country] = len(fields) > 1
		for _, part := range fields[1:] {
			if len(part) < 1 || len(part) > 3 || !isUpperAlnum(part, true) {
				return nil, fmt.Errorf("line %d: bad subdivision code", i+1)
			}
			t.subdivisions[country+"-"+part] = struct{}{}
		}
	}
	if len(t.countries) == 0 {
		return nil, fmt.Errorf("no countries")
	}
	return t, nil
}

// isUpperAlnum reports whether s is made of A-Z (and 0-9 when digits is set).
func isUpperAlnum(s string, digits bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z') && !(digits && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
