package merchant

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// loadCatalog loads the embedded catalog or stops the test.
func loadCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// names returns the names of ms, in order.
func names(ms []*Merchant) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	all := c.All()
	if len(all) < 72 {
		t.Errorf("catalog has %d merchants, want at least 72", len(all))
	}
	cats := c.Categories()
	if len(cats) < 10 {
		t.Errorf("catalog has %d categories, want at least 10: %v", len(cats), cats)
	}
	if !slices.IsSorted(cats) || len(slices.Compact(slices.Clone(cats))) != len(cats) {
		t.Errorf("Categories() = %v, want sorted and distinct", cats)
	}
	for _, cat := range cats {
		if !knownCategory(cat) {
			t.Errorf("Categories() contains unknown %q", cat)
		}
	}

	for i, m := range all {
		if i > 0 && all[i-1].ID >= m.ID {
			t.Errorf("All() not ordered by id: %d before %d", all[i-1].ID, m.ID)
		}
		if m.ID <= 0 || m.Name == "" || m.Domain == "" || !validColor(m.Color) {
			t.Errorf("merchant %+v is incomplete", m)
		}
		if !slices.Contains(cats, m.Category) {
			t.Errorf("%s: category %q missing from Categories()", m.Name, m.Category)
		}
		if len(m.Products) == 0 {
			t.Errorf("%s: no products", m.Name)
		}
		for _, p := range m.Products {
			if p != "card_switcher" && p != "transaction_link" && p != "vault" {
				t.Errorf("%s: invalid product %q", m.Name, p)
			}
		}
		if m.Aliases == nil {
			t.Errorf("%s: nil aliases would encode as null", m.Name)
		}
	}
}

// TestPinnedIDs pins the ids of well-known merchants. They are part of the
// API contract: if this test fails, fix the catalog, not the test.
func TestPinnedIDs(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	tests := []struct {
		name string
		id   int64
	}{
		{"Amazon", 1},
		{"Walmart", 2},
		{"Target", 3},
		{"Netflix", 4},
		{"Spotify", 5},
		{"Uber", 6},
		{"Uber Eats", 7},
		{"Lyft", 8},
		{"DoorDash", 9},
		{"Instacart", 10},
		{"Costco", 11},
		{"Apple", 12},
		{"Disney+", 13},
		{"Hulu", 14},
		{"Max", 15},
		{"YouTube Premium", 16},
		{"Airbnb", 17},
		{"Expedia", 18},
		{"Verizon", 19},
		{"T-Mobile", 20},
		{"AT&T", 21},
		{"Comcast Xfinity", 22},
		{"Adobe", 23},
		{"Microsoft 365", 24},
		{"Dropbox", 25},
		{"The New York Times", 26},
		{"Wall Street Journal", 27},
		{"Xbox", 28},
		{"PlayStation", 29},
		{"Steam", 30},
		{"CVS Pharmacy", 31},
		{"Walgreens", 32},
		{"Peloton", 33},
		{"Planet Fitness", 34},
		{"Home Depot", 35},
		{"Lowe's", 36},
		{"Best Buy", 37},
		{"eBay", 38},
		{"Etsy", 39},
		{"Chewy", 40},
		{"Grubhub", 41},
		{"Kroger", 42},
		{"Whole Foods", 43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, ok := c.Get(tt.id)
			if !ok {
				t.Fatalf("Get(%d) found nothing, want %s", tt.id, tt.name)
			}
			if m.Name != tt.name {
				t.Errorf("Get(%d).Name = %q, want %q", tt.id, m.Name, tt.name)
			}
		})
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	for _, id := range []int64{0, -1, 1 << 40} {
		if m, ok := c.Get(id); ok || m != nil {
			t.Errorf("Get(%d) = %v, %v; want nil, false", id, m, ok)
		}
	}

	// Callers get copies: changing one must not change the catalog.
	m, _ := c.Get(1)
	m.Name = "changed"
	m.Aliases[0] = "changed"
	m.Products[0] = "changed"
	again, _ := c.Get(1)
	if again.Name == "changed" || again.Aliases[0] == "changed" || again.Products[0] == "changed" {
		t.Errorf("Get returned shared state: %+v", again)
	}
}

func TestSupports(t *testing.T) {
	t.Parallel()
	switcherOnly := &Merchant{Products: []string{"card_switcher"}}
	tests := []struct {
		product string
		want    bool
	}{
		{"", true},
		{"link", true},
		{"card_switcher", true},
		{"transaction_link", false},
		{"vault", false},
		{"unknown", false},
	}
	for _, tt := range tests {
		t.Run(tt.product, func(t *testing.T) {
			t.Parallel()
			if got := switcherOnly.Supports(tt.product); got != tt.want {
				t.Errorf("Supports(%q) = %v, want %v", tt.product, got, tt.want)
			}
		})
	}

	c := loadCatalog(t)
	for _, m := range c.All() {
		if !m.Supports("link") || !m.Supports("") {
			t.Errorf("%s does not support link", m.Name)
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	tests := []struct {
		name            string
		product, search string
		want            []string // exactly these, in this order; nil to skip
		contains        []string
		excludes        []string
	}{
		{name: "alias", search: "amzn", want: []string{"Amazon"}},
		{name: "statement descriptor", search: "AMZN Mktp", want: []string{"Amazon"}},
		{name: "both ubers", search: "uber", want: []string{"Uber", "Uber Eats"}},
		{name: "uber eats only", search: "uber eats", want: []string{"Uber Eats"}},
		{name: "case", search: "DISNEY", want: []string{"Disney+"}},
		{name: "punctuation in search", search: "at&t", contains: []string{"AT&T"}},
		{name: "spaces ignored", search: "at t", contains: []string{"AT&T"}},
		{name: "hyphen ignored", search: "tmobile", contains: []string{"T-Mobile"}},
		{name: "apostrophe ignored", search: "lowes", want: []string{"Lowe's"}},
		{name: "accented catalog name", search: "pokemon", want: []string{"Pokémon GO"}},
		{name: "accented search", search: "LÖWE'S", want: []string{"Lowe's"}},
		{name: "decomposed accent", search: "Poke\u0301mon", want: []string{"Pokémon GO"}},
		{name: "no match", search: "no such merchant", want: []string{}},
		{name: "vault filter", product: "vault", search: "uber", want: []string{"Uber", "Uber Eats"}},
		{name: "vault excludes", product: "vault", contains: []string{"Amazon", "Netflix"}, excludes: []string{"Trader Joe's", "Substack"}},
		{name: "transaction_link excludes", product: "transaction_link", search: "substack", want: []string{}},
		{name: "card_switcher excludes", product: "card_switcher", search: "trader joe", want: []string{}},
		{name: "link supported by all", product: "link", search: "trader joe", want: []string{"Trader Joe's"}},
		{name: "unknown product", product: "teleport", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := c.List(tt.product, tt.search)
			if got == nil {
				t.Fatal("List returned nil, want an empty slice")
			}
			gotNames := names(got)
			if tt.want != nil && !slices.Equal(gotNames, tt.want) {
				t.Errorf("List(%q, %q) = %q, want %q", tt.product, tt.search, gotNames, tt.want)
			}
			for _, n := range tt.contains {
				if !slices.Contains(gotNames, n) {
					t.Errorf("List(%q, %q) lacks %q", tt.product, tt.search, n)
				}
			}
			for _, n := range tt.excludes {
				if slices.Contains(gotNames, n) {
					t.Errorf("List(%q, %q) has %q", tt.product, tt.search, n)
				}
			}
			for _, m := range got {
				if !m.Supports(tt.product) {
					t.Errorf("List(%q, ...) has %s, which does not support it", tt.product, m.Name)
				}
			}
		})
	}
}

func TestListAllOrderedByName(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	for _, search := range []string{"", "  ", "&+"} {
		got := c.List("", search)
		if len(got) != len(c.All()) {
			t.Errorf("List(\"\", %q) has %d merchants, want all %d", search, len(got), len(c.All()))
		}
		if !slices.IsSortedFunc(got, func(a, b *Merchant) int {
			return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
		}) {
			t.Errorf("List(\"\", %q) not ordered by name: %q", search, names(got))
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"Amazon.com, Inc.", "amazoncominc"},
		{"AT&T", "att"},
		{"T-Mobile", "tmobile"},
		{"Disney+", "disney"},
		{"Pokémon GO", "pokemongo"},
		{"POKÉMON", "pokemon"},
		{"Poke\u0301mon", "pokemon"},
		{"Straße Œuvre Ærø", "strasseoeuvreaero"},
		{"Łódź", "lodz"},
		{"UBER *TRIP HELP.UBER.COM", "ubertriphelpubercom"},
		{"東京 7", "東京7"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := normalize(tt.in); got != tt.want {
				t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// svgText parses an SVG fully and returns the character data of its <text>
// and <title> elements.
func svgText(t *testing.T, svg []byte) (text, title string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var stack []string
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Space + " " + tok.Name.Local
			}
			stack = append(stack, tok.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			switch stack[len(stack)-1] {
			case "text":
				text += string(tok)
			case "title":
				title += string(tok)
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Errorf("root element is %q, want an SVG <svg>", root)
	}
	return text, title
}

func TestLogoSVG(t *testing.T) {
	t.Parallel()
	c := loadCatalog(t)

	for _, m := range c.All() {
		svg := LogoSVG(m)
		text, title := svgText(t, svg)
		if text != initials(m.Name) || runeCount(text) < 1 || runeCount(text) > 2 {
			t.Errorf("%s: logo text %q, want 1–2 initials %q", m.Name, text, initials(m.Name))
		}
		if title != m.Name {
			t.Errorf("%s: logo title %q", m.Name, title)
		}
		if !bytes.Contains(svg, []byte(`fill="`+m.Color+`"`)) {
			t.Errorf("%s: logo not filled with %s", m.Name, m.Color)
		}
	}
}

func runeCount(s string) int { return len([]rune(s)) }

func TestInitials(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want string }{
		{"Amazon", "A"},
		{"Uber Eats", "UE"},
		{"AT&T", "AT"},
		{"T-Mobile", "TM"},
		{"Disney+", "D"},
		{"DoorDash", "DD"},
		{"eBay", "EB"},
		{"IKEA", "I"},
		{"Lowe's", "L"},
		{"Booking.com", "B"},
		{"The New York Times", "NY"},
		{"Microsoft 365", "M"},
		{"Pokémon GO", "PG"},
		{"The", "T"},
		{"", "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := initials(tt.name); got != tt.want {
				t.Errorf("initials(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestLogoSVGEscapesAndContrasts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		m        Merchant
		wantText string
		wantInk  string
	}{
		{"dark background", Merchant{Name: "Netflix", Color: "#000000"}, "N", `fill="#FFFFFF"`},
		{"light background", Merchant{Name: "McDonald's", Color: "#FFC72C"}, "MD", `fill="#000000"`},
		{"markup in name", Merchant{Name: `<b>&"Co"</b>`, Color: "#FFFFFF"}, "BC", `fill="#000000"`},
		{"invalid colour", Merchant{Name: "X", Color: `red"/><script>`}, "X", `fill="` + fallbackColor + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svg := LogoSVG(&tt.m)
			text, title := svgText(t, svg)
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if title != tt.m.Name {
				t.Errorf("title = %q, want %q", title, tt.m.Name)
			}
			if !bytes.Contains(svg, []byte(tt.wantInk)) {
				t.Errorf("logo lacks %s:\n%s", tt.wantInk, svg)
			}
			if bytes.Contains(svg, []byte("<script")) || bytes.Contains(svg, []byte("<b>")) {
				t.Errorf("logo carries unescaped markup:\n%s", svg)
			}
		})
	}
}

func TestLogoPath(t *testing.T) {
	t.Parallel()
	if got, want := LogoPath(44), "/merchants/44/logo.svg"; got != want {
		t.Errorf("LogoPath(44) = %q, want %q", got, want)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	// entry builds one catalog entry as JSON; fields override the defaults.
	entry := func(id, name, extra string) string {
		if extra == "" {
			extra = `"products": ["card_switcher"]`
		}
		return `{"id": ` + id + `, "name": "` + name + `", "category": "shopping",` +
			` "aliases": [], "domain": "example.com", "color": "#123456", ` + extra + `}`
	}
	valid := entry("1", "Acme", "")

	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"duplicate id", `[` + valid + `, ` + entry("1", "Other", "") + `]`, `entry 1 (id 1, "Other"): duplicate id 1 (also entry 0)`},
		{"unknown product", `[` + entry("2", "Acme", `"products": ["teleport"]`) + `]`, `entry 0 (id 2, "Acme"): unknown product "teleport"`},
		{"link is not a product", `[` + entry("2", "Acme", `"products": ["link"]`) + `]`, `unknown product "link"`},
		{"duplicate product", `[` + entry("2", "Acme", `"products": ["vault", "vault"]`) + `]`, `duplicate product "vault"`},
		{"no products", `[` + entry("2", "Acme", `"products": []`) + `]`, `no products`},
		{"zero id", `[` + entry("0", "Acme", "") + `]`, `id must be positive`},
		{"negative id", `[` + entry("-3", "Acme", "") + `]`, `id must be positive`},
		{"duplicate name", `[` + valid + `, ` + entry("2", "ACME", "") + `]`, `name "ACME" is the same as "Acme" of id 1`},
		{"alias collides", `[` + valid + `, ` + entry("2", "Other", `"products": ["vault"], "aliases": ["A.C.M.E."]`) + `]`, `alias "A.C.M.E." is the same as "Acme" of id 1`},
		{"same name key", `[` + valid + `, ` + entry("2", "Acme, Inc.", "") + `]`, `name "Acme, Inc." matches "Acme" of id 1 by name`},
		{"alias repeats name", `[` + entry("2", "Acme", `"products": ["vault"], "aliases": ["acme"]`) + `]`, `alias "acme" repeats "Acme"`},
		{"empty alias", `[` + entry("2", "Acme", `"products": ["vault"], "aliases": ["&"]`) + `]`, `alias "&" has no letters or digits`},
		{"empty name", `[` + entry("2", "", "") + `]`, `name "" has no letters or digits`},
		{"unknown category", strings.Replace(`[`+valid+`]`, `"shopping"`, `"spaceflight"`, 1), `unknown category "spaceflight"`},
		{"short colour", strings.Replace(`[`+valid+`]`, `#123456`, `#123`, 1), `invalid color "#123"`},
		{"named colour", strings.Replace(`[`+valid+`]`, `"#123456"`, `"red"`, 1), `invalid color "red"`},
		{"bad domain", strings.Replace(`[`+valid+`]`, `example.com`, `https://Example.com`, 1), `invalid domain`},
		{"unknown field", `[` + entry("2", "Acme", `"products": ["vault"], "logo": "x"`) + `]`, `unknown field "logo"`},
		{"not an array", `{}`, `parse catalog`},
		{"empty", `[]`, `no merchants`},
		{"trailing data", `[` + valid + `] []`, `unexpected data`},
		{"fractional id", `[` + entry("1.5", "Acme", "") + `]`, `parse catalog`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("parse succeeded with %d merchants, want error containing %q", len(c.All()), tt.wantErr)
			}
			if c != nil {
				t.Errorf("parse returned a catalog with its error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse error = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}

	if _, err := parse([]byte(`[` + valid + `]`)); err != nil {
		t.Errorf("parse of a valid catalog: %v", err)
	}
}

func TestParseReportsEveryBadEntry(t *testing.T) {
	t.Parallel()
	data := `[
		{"id": 1, "name": "A", "category": "x", "products": ["vault"], "aliases": [], "domain": "a.com", "color": "#000000"},
		{"id": 2, "name": "B", "category": "home", "products": ["y"], "aliases": [], "domain": "b.com", "color": "#000000"}
	]`
	_, err := parse([]byte(data))
	if err == nil {
		t.Fatal("parse succeeded, want an error")
	}
	for _, want := range []string{`entry 0 (id 1, "A"): unknown category "x"`, `entry 1 (id 2, "B"): unknown product "y"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("parse error %q lacks %q", err, want)
		}
	}
}
