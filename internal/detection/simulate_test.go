package detection

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
)

// simCatalog loads the embedded catalog or stops the test.
func simCatalog(tb testing.TB) *merchant.Catalog {
	tb.Helper()
	c, err := merchant.Load()
	if err != nil {
		tb.Fatalf("merchant.Load: %v", err)
	}
	return c
}

// simEmails returns n distinct, ordinary addresses (no test tags).
func simEmails(n int) []string {
	first := []string{"ada", "grace", "alan", "edsger", "barbara", "donald", "frances", "ken", "margaret", "linus"}
	domains := []string{"example.com", "mail.example.org", "example.net"}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, fmt.Sprintf("%s.%d@%s", first[i%len(first)], i, domains[i%len(domains)]))
	}
	return out
}

// simPhones returns n distinct E.164 numbers, none ending in 0000.
func simPhones(n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, fmt.Sprintf("+1415555%04d", 1+i))
	}
	return out
}

// onlySource checks that every account in found came from source.
func onlySource(t *testing.T, in string, found []Found, source string) {
	t.Helper()
	for _, f := range found {
		if f.Source != source {
			t.Errorf("%s: %s has source %q, want %q", in, f.Name, f.Source, source)
		}
	}
}

// noDuplicates checks that found names each catalog merchant and each
// unsupported name key at most once.
func noDuplicates(t *testing.T, in string, found []Found) {
	t.Helper()
	ids := map[int64]bool{}
	keys := map[string]bool{}
	for _, f := range found {
		if f.MerchantID != 0 {
			if ids[f.MerchantID] {
				t.Errorf("%s: merchant %d (%s) found twice", in, f.MerchantID, f.Name)
			}
			ids[f.MerchantID] = true
			continue
		}
		key := merchant.NameKey(f.Name)
		if keys[key] {
			t.Errorf("%s: unsupported %q found twice", in, f.Name)
		}
		keys[key] = true
	}
}

func TestSimulatorDeterministic(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	a, b := NewSimulator(c), NewSimulator(c)
	phones := simPhones(300)
	for i, email := range simEmails(300) {
		in := Input{Email: email, Phone: phones[i], ProcessorToken: "tok-" + email}
		first := a.Detect(in)
		if again := a.Detect(in); !reflect.DeepEqual(first, again) {
			t.Fatalf("Detect(%+v) differs on a second call:\n%v\n%v", in, first, again)
		}
		if other := b.Detect(in); !reflect.DeepEqual(first, other) {
			t.Fatalf("Detect(%+v) differs between simulators:\n%v\n%v", in, first, other)
		}
	}
	// The e-mail is normalised: case and surrounding space do not count.
	if x, y := a.Detect(Input{Email: " Ada.Lovelace@Example.COM\n"}), a.Detect(Input{Email: "ada.lovelace@example.com"}); !reflect.DeepEqual(x, y) {
		t.Errorf("a differently cased address detects differently:\n%v\n%v", x, y)
	}
}

// TestSimulatorGolden pins one detection per source, so that a change to
// the draws, which would change every developer's simulated users, is seen.
// Adding catalog or unsupported merchants may legitimately change it (a
// new merchant can win a place); then update the expectation.
func TestSimulatorGolden(t *testing.T) {
	t.Parallel()
	s := NewSimulator(simCatalog(t))
	got := s.Detect(Input{Email: "ada@example.com", Phone: "+14155550123", ProcessorToken: "processor-sandbox-1"})
	var lines []string
	for _, f := range got {
		at := "-"
		if f.AccountCreatedAt != nil {
			at = f.AccountCreatedAt.Format(time.RFC3339)
		}
		login := cmp.Or(f.LoginMethod, "-")
		lines = append(lines, fmt.Sprintf("%s %d %s %s %s", f.Source, f.MerchantID, f.Name, at, login))
	}
	want := []string{
		"email 71 Aldi 2013-01-12T09:41:04Z GOOGLE_SSO",
		"email 0 Asana 2013-04-03T18:06:24Z PASSWORD",
		"email 35 Home Depot 2013-05-14T02:15:07Z -",
		"email 18 Expedia 2014-01-21T20:02:06Z PASSWORD",
		"email 85 The Washington Post 2014-06-29T03:39:06Z GOOGLE_SSO",
		"email 5 Spotify 2015-12-11T02:59:36Z PASSWORD",
		"email 113 Crate & Barrel 2018-03-29T21:57:22Z GOOGLE_SSO",
		"email 21 AT&T 2018-12-06T21:28:58Z PASSWORD",
		"email 0 Thrive Market 2019-09-09T01:03:09Z GOOGLE_SSO",
		"email 53 YouTube TV 2020-07-16T21:48:42Z PASSWORD",
		"email 81 Zoom 2021-07-30T05:21:54Z PASSWORD",
		"email 58 Sling TV 2021-12-16T08:27:04Z PASSWORD",
		"email 56 SiriusXM 2022-01-10T13:58:16Z PASSWORD",
		"email 59 Lime 2022-08-09T08:06:15Z PASSWORD",
		"email 106 Anytime Fitness 2022-12-23T21:20:30Z -",
		"email 60 Booking.com 2023-02-13T23:22:44Z PASSWORD",
		"email 0 Hopper 2023-04-09T22:43:21Z PASSWORD",
		"email 54 Paramount+ 2024-01-01T19:35:55Z PASSWORD",
		"email 14 Hulu 2024-10-13T19:51:24Z GOOGLE_SSO",
		"email 114 Hitch Reference Shop 2025-06-25T17:52:13Z PASSWORD",
		"phone 11 Costco 2014-05-07T14:57:34Z PASSWORD",
		"phone 27 Wall Street Journal 2016-04-22T17:12:12Z PASSWORD",
		"phone 75 Google Fi 2018-11-21T05:05:04Z PASSWORD",
		"phone 90 Epic Games 2021-04-22T10:07:42Z PASSWORD",
		"phone 52 McDonald's 2023-07-20T02:35:10Z PASSWORD",
		"phone 13 Disney+ 2024-09-07T14:25:54Z GOOGLE_SSO",
		"phone 43 Whole Foods 2025-05-17T08:26:12Z PASSWORD",
		"phone 51 Chipotle 2025-06-28T20:07:16Z PASSWORD",
		"processor_token 47 Temu - -",
		"processor_token 63 American Airlines - -",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("Detect(ada@example.com, ...) =\n\t%s\nwant\n\t%s", strings.Join(lines, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestSimulatorStableAsListsGrow checks what keying draws by merchant
// buys when merchants are added to the catalog or the unsupported list
// (here, the last ten of each are held back and then added): a new merchant
// may take another's place, but every other account detected afterwards was
// detected before, with the same date and login method.
func TestSimulatorStableAsListsGrow(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	before, grown := NewSimulator(c), NewSimulator(c)
	before.email = before.email[:len(before.email)-10]
	before.unsupported = before.unsupported[:len(before.unsupported)-10]
	added := map[string]bool{}
	for _, a := range slices.Concat(grown.email[len(before.email):], grown.unsupported[len(before.unsupported):]) {
		added[a.name] = true
	}
	kept := 0
	for _, email := range simEmails(200) {
		old := before.Detect(Input{Email: email})
		for _, f := range grown.Detect(Input{Email: email}) {
			if added[f.Name] {
				continue
			}
			kept++
			if !slices.ContainsFunc(old, func(o Found) bool { return reflect.DeepEqual(f, o) }) {
				t.Errorf("%s: %+v was not detected before the lists grew", email, f)
			}
		}
	}
	if kept == 0 {
		t.Error("no account was detected both before and after")
	}
}

func TestSimulatorDistinctInputs(t *testing.T) {
	t.Parallel()
	s := NewSimulator(simCatalog(t))
	seen := map[string]string{}
	for _, email := range simEmails(300) {
		var names []string
		for _, f := range s.Detect(Input{Email: email}) {
			names = append(names, f.Name)
		}
		slices.Sort(names)
		set := strings.Join(names, "|")
		if other, ok := seen[set]; ok {
			t.Errorf("%s and %s detect the same set %v", other, email, names)
		}
		seen[set] = email
	}
}

func TestSimulatorEmail(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	s := NewSimulator(c)
	unsupported := map[string]int{} // name → since
	for _, u := range unsupportedMerchants {
		unsupported[u.name] = u.since
	}
	var total, unsup int
	logins := map[string]int{}
	categories := map[string]int{}
	for _, email := range simEmails(400) {
		found := s.Detect(Input{Email: email})
		if n := len(found); n < 5 || n > 25 {
			t.Errorf("%s: %d accounts, want 5 to 25", email, n)
		}
		onlySource(t, email, found, SourceEmail)
		noDuplicates(t, email, found)
		for i, f := range found {
			total++
			logins[f.LoginMethod]++
			if f.MerchantID == 0 {
				unsup++
				if _, ok := unsupported[f.Name]; !ok {
					t.Errorf("%s: unsupported %q is not in unsupportedMerchants", email, f.Name)
				}
			} else {
				m, ok := c.Get(f.MerchantID)
				if !ok || m.Name != f.Name {
					t.Errorf("%s: %d %q is not a catalog merchant's id and name", email, f.MerchantID, f.Name)
					continue
				}
				categories[m.Category]++
				if ownIdentity[m.ID] && (f.LoginMethod == LoginGoogleSSO || f.LoginMethod == LoginAppleSSO) {
					t.Errorf("%s: %s signs in with %s", email, m.Name, f.LoginMethod)
				}
			}
			at := f.AccountCreatedAt
			switch {
			case at == nil:
				t.Errorf("%s: %s has no creation date", email, f.Name)
				continue
			case at.Before(earliestCreated) || at.After(latestCreated):
				t.Errorf("%s: %s created %v, outside %v to %v", email, f.Name, at, earliestCreated, latestCreated)
			case at.Location() != time.UTC || at.Nanosecond() != 0:
				t.Errorf("%s: %s created %v, want UTC at second precision", email, f.Name, at)
			case f.MerchantID != 0 && at.Before(launchDate(launched[f.MerchantID])),
				f.MerchantID == 0 && at.Before(launchDate(unsupported[f.Name])):
				t.Errorf("%s: %s created %v, before it launched", email, f.Name, at)
			}
			if i > 0 && at.Before(*found[i-1].AccountCreatedAt) {
				t.Errorf("%s: %s (%v) listed after a newer account", email, f.Name, at)
			}
			switch f.LoginMethod {
			case "", LoginGoogleSSO, LoginAppleSSO, LoginPassword:
			default:
				t.Errorf("%s: %s has login method %q", email, f.Name, f.LoginMethod)
			}
		}
	}

	share := func(n int) float64 { return float64(n) / float64(total) }
	t.Logf("%d accounts: %.3f unsupported; logins %.3f Google, %.3f Apple, %.3f password, %.3f unknown; by category %v",
		total, share(unsup), share(logins[LoginGoogleSSO]), share(logins[LoginAppleSSO]), share(logins[LoginPassword]),
		share(logins[""]), categories)
	for _, b := range []struct {
		what   string
		got    float64
		lo, hi float64
	}{
		{"unsupported", share(unsup), 0.15, 0.35},
		{LoginGoogleSSO, share(logins[LoginGoogleSSO]), 0.18, 0.32},
		{LoginAppleSSO, share(logins[LoginAppleSSO]), 0.03, 0.12},
		{LoginPassword, share(logins[LoginPassword]), 0.45, 0.70},
		{"unknown login", share(logins[""]), 0.07, 0.20},
	} {
		if b.got < b.lo || b.got > b.hi {
			t.Errorf("share of %s accounts is %.3f, want %.2f to %.2f", b.what, b.got, b.lo, b.hi)
		}
	}
	// Popular categories come up more often than rare ones, per merchant.
	perMerchant := func(cat string) float64 {
		return float64(categories[cat]) / float64(len(c.List("", "")))
	}
	if perMerchant("shopping") <= perMerchant("utilities") {
		t.Errorf("shopping (%d) not more common than utilities (%d)", categories["shopping"], categories["utilities"])
	}
}

func TestSimulatorPhone(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	s := NewSimulator(c)
	var total, favoured int
	for _, phone := range simPhones(300) {
		found := s.Detect(Input{Phone: phone})
		if n := len(found); n < 2 || n > 8 {
			t.Errorf("%s: %d accounts, want 2 to 8", phone, n)
		}
		onlySource(t, phone, found, SourcePhone)
		noDuplicates(t, phone, found)
		for _, f := range found {
			total++
			m, ok := c.Get(f.MerchantID)
			if !ok {
				t.Errorf("%s: %q is not a catalog merchant", phone, f.Name)
				continue
			}
			if phoneCategories[m.Category] {
				favoured++
			}
			if f.AccountCreatedAt == nil || f.AccountCreatedAt.Before(earliestCreated) || f.AccountCreatedAt.After(latestCreated) {
				t.Errorf("%s: %s created %v", phone, f.Name, f.AccountCreatedAt)
			}
		}
		if !slices.IsSortedFunc(found, func(a, b Found) int { return a.AccountCreatedAt.Compare(*b.AccountCreatedAt) }) {
			t.Errorf("%s: accounts not oldest first: %v", phone, found)
		}
	}
	t.Logf("%d accounts, %d of them rides, food delivery, telecom or groceries", total, favoured)
	if got := float64(favoured) / float64(total); got < 0.6 {
		t.Errorf("%.2f of phone accounts are rides, food delivery, telecom or groceries, want most", got)
	}
}

func TestSimulatorProcessorToken(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	s := NewSimulator(c)
	for i := range 300 {
		token := fmt.Sprintf("processor-sandbox-%08x", i*7919)
		found := s.Detect(Input{ProcessorToken: token})
		if n := len(found); n < 3 || n > 10 {
			t.Errorf("%s: %d accounts, want 3 to 10", token, n)
		}
		onlySource(t, token, found, SourceProcessorToken)
		noDuplicates(t, token, found)
		for _, f := range found {
			m, ok := c.Get(f.MerchantID)
			if !ok || !m.Supports("transaction_link") {
				t.Errorf("%s: %d %q is not a catalog merchant with transaction_link", token, f.MerchantID, f.Name)
			}
			if f.AccountCreatedAt != nil || f.LoginMethod != "" {
				t.Errorf("%s: %s reports created %v and login %q, want both unknown", token, f.Name, f.AccountCreatedAt, f.LoginMethod)
			}
		}
	}
}

// TestSimulatorUnion checks that several inputs give the union of what each
// gives alone, in source order, the first source to find a merchant winning.
func TestSimulatorUnion(t *testing.T) {
	t.Parallel()
	s := NewSimulator(simCatalog(t))
	phones := simPhones(200)
	repeats := 0
	for i, email := range simEmails(200) {
		in := Input{Email: email, Phone: phones[i], ProcessorToken: "tok-" + email}
		var want []Found
		seen := map[string]bool{}
		for _, alone := range []Input{{Email: in.Email}, {Phone: in.Phone}, {ProcessorToken: in.ProcessorToken}} {
			for _, f := range s.Detect(alone) {
				key := merchant.NameKey(f.Name)
				if f.MerchantID != 0 {
					key = fmt.Sprint("#", f.MerchantID)
				}
				if seen[key] {
					repeats++
					continue
				}
				seen[key] = true
				want = append(want, f)
			}
		}
		got := s.Detect(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Detect(%+v) =\n%v\nwant\n%v", in, got, want)
		}
		noDuplicates(t, email, got)
	}
	if repeats == 0 {
		t.Error("no merchant was found by two sources: first-source-wins is untested")
	}
}

func TestSimulatorTestInputs(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	s := NewSimulator(c)
	tagged := func(id int64, name string) []Found {
		at := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
		return []Found{{MerchantID: id, Name: name, AccountCreatedAt: &at, LoginMethod: LoginPassword, Source: SourceEmail}}
	}
	for _, tt := range []struct {
		email string
		want  []Found
	}{
		{"jane+none@example.com", []Found{}},
		{"Jane+None@Example.com", []Found{}},
		{"jane+amazon@example.com", tagged(1, "Amazon")},
		{"jane+amazon.com@example.com", tagged(1, "Amazon")},
		{"jane+netflix@example.com", tagged(4, "Netflix")},
		{"jane+ubereats@example.com", tagged(7, "Uber Eats")},
		{"jane+uber-eats@example.com", tagged(7, "Uber Eats")},
		{"jane+uber@example.com", tagged(6, "Uber")},
		{"jane+disneyplus@example.com", tagged(13, "Disney+")},
		{"jane+hbomax@example.com", tagged(15, "Max")},
		{"jane+work+amazon@example.com", tagged(1, "Amazon")},
		{"jane+unsupported@example.com", tagged(0, "Patreon, Inc.")},
	} {
		if got := s.Detect(Input{Email: tt.email}); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Detect(%s) = %v, want %v", tt.email, got, tt.want)
		}
	}

	// Any other tag is part of an ordinary address.
	for _, email := range []string{"jane+work@example.com", "jane+@example.com", "jane+amazon2@example.com"} {
		found := s.Detect(Input{Email: email})
		if n := len(found); n < 5 || n > 25 {
			t.Errorf("Detect(%s) found %d accounts, want the normal 5 to 25", email, n)
		}
		if reflect.DeepEqual(found, s.Detect(Input{Email: "jane@example.com"})) {
			t.Errorf("Detect(%s) is the same as without the tag", email)
		}
	}

	// Every merchant is reachable by the name key of its name as a tag.
	for _, m := range c.All() {
		email := "t+" + merchant.NameKey(m.Name) + "@example.com"
		if got := s.Detect(Input{Email: email}); len(got) != 1 || got[0].MerchantID != m.ID {
			t.Errorf("Detect(%s) = %v, want only %s", email, got, m.Name)
		}
	}

	// A phone number ending in 0000 detects nothing, however written.
	for _, phone := range []string{"+14155550000", "+1 415 555 0000", "+442071830000"} {
		if got := s.Detect(Input{Phone: phone}); len(got) != 0 {
			t.Errorf("Detect(phone %s) = %v, want nothing", phone, got)
		}
	}

	// A test e-mail does not silence the other sources, and what it found is
	// not repeated by them.
	phoneOnly := s.Detect(Input{Phone: "+14155550123"})
	if got := s.Detect(Input{Email: "jane+none@example.com", Phone: "+14155550123"}); !reflect.DeepEqual(got, phoneOnly) {
		t.Errorf("+none with a phone = %v, want the phone's %v", got, phoneOnly)
	}
	for i := range 50 {
		token := fmt.Sprint("tok-", i)
		got := s.Detect(Input{Email: "jane+amazon@example.com", ProcessorToken: token})
		if got[0].MerchantID != 1 || got[0].Source != SourceEmail {
			t.Fatalf("Detect(+amazon, %s) starts with %v", token, got[0])
		}
		noDuplicates(t, token, got)
	}
}

// TestSimulatorTestTags checks that the tags with a meaning of their own
// cannot be taken for a merchant, and that no merchant's key is left out
// of the tag map unless another merchant shares it.
func TestSimulatorTestTags(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	s := NewSimulator(c)
	owners := map[string]map[int64]bool{}
	for _, m := range c.All() {
		for _, text := range slices.Concat([]string{m.Name}, m.Aliases) {
			key := merchant.NameKey(text)
			if owners[key] == nil {
				owners[key] = map[int64]bool{}
			}
			owners[key][m.ID] = true
		}
	}
	for _, tag := range []string{tagNone, tagUnsupported} {
		if owners[tag] != nil {
			t.Errorf("test tag %q is a catalog merchant's name key", tag)
		}
	}
	for key, ids := range owners {
		c, ok := s.byTag[key]
		switch {
		case len(ids) > 1 && ok:
			t.Errorf("key %q of merchants %v is a test tag", key, ids)
		case len(ids) == 1 && (!ok || !ids[c.id]):
			t.Errorf("key %q is not a test tag of merchant %v", key, ids)
		}
	}
}

// TestUnsupportedMerchants checks the list against the catalog by exact
// name key and by the matcher, which forgives up to two edits: a simulated
// unsupported account must never resolve to a catalog merchant, nor be
// taken for another unsupported one when recorded.
func TestUnsupportedMerchants(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	if len(unsupportedMerchants) < 40 {
		t.Errorf("%d unsupported merchants, want at least 40", len(unsupportedMerchants))
	}
	if got := unsupportedMerchants[0].name; got != "Patreon, Inc." {
		t.Errorf("+unsupported detects %q, docs/detection.md says Patreon, Inc.", got)
	}
	catalogKeys := map[string]string{}
	for _, m := range c.All() {
		for _, text := range slices.Concat([]string{m.Name}, m.Aliases) {
			catalogKeys[merchant.NameKey(text)] = text
		}
	}
	matcher := NewMatcher(c.All())
	keys := map[string]string{}
	for _, u := range unsupportedMerchants {
		key := merchant.NameKey(u.name)
		if key == "" {
			t.Errorf("%q has an empty name key", u.name)
			continue
		}
		if text, ok := catalogKeys[key]; ok {
			t.Errorf("%q has the name key %q of catalog name %q", u.name, key, text)
		}
		for ck, text := range catalogKeys {
			if Distance(key, ck, 2) <= 2 {
				t.Errorf("%q (%s) is within two edits of catalog name %q (%s)", u.name, key, text, ck)
			}
		}
		if id, ok := matcher.Resolve(u.name); ok {
			t.Errorf("%q resolves to catalog merchant %d", u.name, id)
		}
		for other, name := range keys {
			if Distance(key, other, 2) <= 2 {
				t.Errorf("%q (%s) is within two edits of %q (%s)", u.name, key, name, other)
			}
		}
		keys[key] = u.name
		if y, m := u.since/100, u.since%100; u.since != 0 && (y < 2008 || y > 2025 || m < 1 || m > 12) {
			t.Errorf("%q launched %d, want 0 or a yyyymm from 2008", u.name, u.since)
		}
	}
	if got := len(NewSimulator(c).unsupported); got != len(unsupportedMerchants) {
		t.Errorf("simulator keeps %d of %d unsupported merchants", got, len(unsupportedMerchants))
	}
}

func TestSimulatorLaunched(t *testing.T) {
	t.Parallel()
	c := simCatalog(t)
	for id, yyyymm := range launched {
		if _, ok := c.Get(id); !ok {
			t.Errorf("launched[%d]: no such catalog merchant", id)
		}
		if y, m := yyyymm/100, yyyymm%100; y < 2008 || y > 2025 || m < 1 || m > 12 {
			t.Errorf("launched[%d] = %d, want a yyyymm from 2008", id, yyyymm)
		}
	}
	for id := range ownIdentity {
		if _, ok := c.Get(id); !ok {
			t.Errorf("ownIdentity[%d]: no such catalog merchant", id)
		}
	}
}

func TestSimulatorWithoutCatalog(t *testing.T) {
	t.Parallel()
	s := NewSimulator(nil)
	found := s.Detect(Input{Email: "ada@example.com", Phone: "+14155550123", ProcessorToken: "tok"})
	if len(found) == 0 {
		t.Fatal("a simulator without a catalog found nothing, want unsupported merchants")
	}
	for _, f := range found {
		if f.MerchantID != 0 || f.Source != SourceEmail {
			t.Errorf("found %v without a catalog", f)
		}
	}
	if got := s.Detect(Input{}); got == nil || len(got) != 0 {
		t.Errorf("Detect(empty input) = %#v, want an empty slice", got)
	}
}

func BenchmarkDetect(b *testing.B) {
	s := NewSimulator(simCatalog(b))
	in := Input{Email: "ada.lovelace@example.com"}
	b.ReportAllocs()
	for b.Loop() {
		s.Detect(in)
	}
}
