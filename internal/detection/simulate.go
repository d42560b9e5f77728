package detection

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
)

// Sources of a detection.
const (
	SourceEmail          = "email"
	SourcePhone          = "phone"
	SourceProcessorToken = "processor_token"
)

// Login methods reported with a detected account ("" when unknown).
const (
	LoginGoogleSSO = "GOOGLE_SSO"
	LoginAppleSSO  = "APPLE_SSO"
	LoginPassword  = "PASSWORD"
)

// Input is what a detection starts from; empty fields are absent.
type Input struct{ Email, Phone, ProcessorToken string }

// Found is one merchant account a source reports.
type Found struct {
	MerchantID int64 // 0 for a merchant not in the catalog
	// Name is the catalog name when MerchantID is not 0, else the name as
	// reported ("Patreon, Inc.").
	Name             string
	AccountCreatedAt *time.Time // nil when unknown
	LoginMethod      string
	Source           string
}

// Test inputs of the simulator (docs/detection.md): an e-mail whose local
// part ends in "+none" detects nothing, "+unsupported" the first of
// unsupportedMerchants ("Patreon, Inc.") and "+<name of a catalog merchant>"
// that merchant; a phone number ending in 0000 detects nothing.
const (
	tagNone        = "none"
	tagUnsupported = "unsupported"
	phoneNone      = "0000"
)

// What a test input's account reports, fixed so that tests can assert it.
var taggedCreatedAt = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)

const taggedLogin = LoginPassword

// The span of simulated account creation dates.
var (
	earliestCreated = time.Date(2008, 1, 1, 0, 0, 0, 0, time.UTC)
	latestCreated   = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)
)

// emailCategoryWeight is how likely an e-mail address is to hold an account
// at a merchant of each category, relative to the others: everyone shops and
// streams, fewer people pay a utility online.
var emailCategoryWeight = map[string]float64{
	"shopping": 10, "streaming": 9, "food_delivery": 8, "rides": 6, "groceries": 6, "software": 6,
	"travel": 5, "telecom": 5, "gaming": 4, "news": 3, "home": 3, "fitness": 3, "pharmacy": 3,
	"utilities": 2,
}

// phoneCategories are the categories whose accounts are keyed by a phone
// number; merchants of other categories are ten times less likely.
var phoneCategories = map[string]bool{"rides": true, "food_delivery": true, "telecom": true, "groceries": true}

// launched is when accounts could first be opened at catalog merchants that
// started after 2008, as yyyymm (roughly the US launch), so that no account
// predates its merchant.
var launched = map[int64]int{
	6: 201006, 7: 201408, 8: 201206, 9: 201306, 10: 201206, 13: 201911, 14: 200803, 15: 202005,
	16: 201510, 17: 200808, 24: 201106, 25: 200809, 33: 201401, 40: 201104, 47: 202209, 48: 201201,
	53: 201704, 54: 201410, 55: 202007, 56: 200807, 58: 201502, 59: 201706, 75: 201504, 76: 201601,
	78: 201808, 79: 202211, 80: 201308, 81: 201301, 82: 201606, 83: 200907, 84: 201206, 88: 201707,
	89: 201106, 90: 201403, 92: 201106, 93: 201607, 94: 201109, 95: 201711, 104: 201306, 105: 200901,
	107: 201003, 108: 201109, 110: 201401,
}

// ownIdentity are the merchants that are themselves a sign-in provider
// (Apple; Google's YouTube, Fi and One): one signs in to them with the
// provider's own account, never through a "Sign in with" button.
var ownIdentity = map[int64]bool{12: true, 16: true, 53: true, 75: true, 78: true}

// Simulator derives plausible accounts from an input, the same every time
// for the same input. It stands in for detection sources in development;
// it is safe for concurrent use.
type Simulator struct {
	email, phone, token []candidate // catalog merchants, weighted per source
	unsupported         []candidate // unsupportedMerchants not in the catalog
	// byTag maps the name key of every catalog name and alias to its
	// merchant, for "+<name>" test e-mails.
	byTag map[string]candidate
}

// candidate is a merchant the simulator may report.
type candidate struct {
	id     int64  // 0 when not in the catalog
	name   string // the catalog name, or the name as reported
	since  time.Time
	weight float64
	// item identifies the merchant in draws: its catalog id or its name
	// key, so that its draws stay the same when other merchants are added.
	item uint64
}

// NewSimulator returns a simulator over the catalog c.
func NewSimulator(c *merchant.Catalog) *Simulator {
	s := &Simulator{byTag: map[string]candidate{}}
	var all []*merchant.Merchant
	if c != nil {
		all = c.All()
	}
	catalogKeys := map[string]bool{}
	ambiguous := map[string]bool{}
	for _, m := range all {
		base := candidate{id: m.ID, name: m.Name, since: launchDate(launched[m.ID]),
			item: itemHash("merchant", strconv.FormatInt(m.ID, 10))}
		email, phone, token := base, base, base
		email.weight = emailCategoryWeight[m.Category]
		if email.weight == 0 {
			email.weight = 1 // a category added to the catalog later
		}
		phone.weight = 1
		if phoneCategories[m.Category] {
			phone.weight = 10
		}
		token.weight = email.weight // people buy where they hold accounts
		s.email = append(s.email, email)
		s.phone = append(s.phone, phone)
		if m.Supports("transaction_link") {
			s.token = append(s.token, token)
		}

		// Catalog validation keeps normalised names unique, not name keys:
		// a key two merchants share would make a test e-mail ambiguous.
		for _, text := range slices.Concat([]string{m.Name}, m.Aliases) {
			key := merchant.NameKey(text)
			catalogKeys[key] = true
			if other, ok := s.byTag[key]; ok && other.id != m.ID {
				ambiguous[key] = true
			}
			s.byTag[key] = base
		}
	}
	for key := range ambiguous {
		delete(s.byTag, key)
	}
	for _, u := range unsupportedMerchants {
		key := merchant.NameKey(u.name)
		if catalogKeys[key] {
			continue // the catalog has taken the merchant in since
		}
		s.unsupported = append(s.unsupported, candidate{name: u.name, since: launchDate(u.since), weight: 1,
			item: itemHash("unsupported", key)})
	}
	return s
}

// launchDate turns a yyyymm launch into the earliest creation date of an
// account.
func launchDate(yyyymm int) time.Time {
	if yyyymm == 0 {
		return earliestCreated
	}
	t := time.Date(yyyymm/100, time.Month(yyyymm%100), 1, 0, 0, 0, 0, time.UTC)
	if t.Before(earliestCreated) {
		return earliestCreated
	}
	return t
}

// Detect returns the accounts the input's sources report, e-mail's first,
// then phone's, then the processor token's; a merchant an earlier source
// found is not repeated. The result is never nil.
func (s *Simulator) Detect(in Input) []Found {
	out := []Found{}
	seenID := map[int64]bool{}
	seenKey := map[string]bool{}
	add := func(found []Found) {
		for _, f := range found {
			if f.MerchantID != 0 {
				if seenID[f.MerchantID] {
					continue
				}
				seenID[f.MerchantID] = true
			} else {
				key := merchant.NameKey(f.Name)
				if seenKey[key] {
					continue
				}
				seenKey[key] = true
			}
			out = append(out, f)
		}
	}
	if email := strings.ToLower(strings.TrimSpace(in.Email)); email != "" {
		add(s.fromEmail(email))
	}
	if in.Phone != "" {
		add(s.fromPhone(in.Phone))
	}
	if in.ProcessorToken != "" {
		add(s.fromToken(in.ProcessorToken))
	}
	return out
}

// fromEmail reports 5 to 25 accounts, roughly a quarter of them at
// merchants not in the catalog, unless the address is a test input.
func (s *Simulator) fromEmail(email string) []Found {
	if found, ok := s.testInput(email); ok {
		return found
	}
	st := newStream(SourceEmail, email)
	st.reset(purposeCount, 0)
	// The sum of two uniform draws favours mid-sized sets, as real
	// mailboxes do.
	n := 5 + st.IntN(11) + st.IntN(11)
	share := 0.15 + 0.2*st.Float64()
	unsupported := min(max(1, int(math.Round(float64(n)*share))), len(s.unsupported))
	found := st.accounts(pick(st, s.email, n-unsupported), SourceEmail, true)
	found = append(found, st.accounts(pick(st, s.unsupported, unsupported), SourceEmail, true)...)
	return oldestFirst(found)
}

// testInput returns the accounts of a test e-mail, whose local part ends in
// "+<tag>"; ok is false for any other address, including other tags.
func (s *Simulator) testInput(email string) (found []Found, ok bool) {
	local := email
	if at := strings.LastIndexByte(email, '@'); at >= 0 {
		local = email[:at]
	}
	plus := strings.LastIndexByte(local, '+')
	if plus < 0 {
		return nil, false
	}
	tag := local[plus+1:]
	var c candidate
	switch tag {
	case tagNone:
		return nil, true
	case tagUnsupported:
		if len(s.unsupported) == 0 {
			return nil, false
		}
		c = s.unsupported[0]
	default:
		if c, ok = s.byTag[merchant.NameKey(tag)]; !ok {
			return nil, false
		}
	}
	created := taggedCreatedAt
	return []Found{{MerchantID: c.id, Name: c.name, AccountCreatedAt: &created, LoginMethod: taggedLogin,
		Source: SourceEmail}}, true
}

// fromPhone reports 2 to 8 catalog accounts, mostly at merchants that key
// accounts by phone number; a number ending in 0000 reports none.
func (s *Simulator) fromPhone(phone string) []Found {
	var digits []byte
	for _, r := range []byte(phone) {
		if '0' <= r && r <= '9' {
			digits = append(digits, r)
		}
	}
	if strings.HasSuffix(string(digits), phoneNone) {
		return nil
	}
	st := newStream(SourcePhone, phone)
	st.reset(purposeCount, 0)
	return oldestFirst(st.accounts(pick(st, s.phone, 2+st.IntN(7)), SourcePhone, true))
}

// oldestFirst sorts dated accounts by creation, as an account history reads;
// the sort is stable, so equal dates keep the draw order.
func oldestFirst(found []Found) []Found {
	slices.SortStableFunc(found, func(a, b Found) int { return a.AccountCreatedAt.Compare(*b.AccountCreatedAt) })
	return found
}

// fromToken reports 3 to 10 merchants whose purchases an aggregator's
// transaction data shows. Purchases tell neither when the account was
// opened nor how its owner signs in, so both are unknown.
func (s *Simulator) fromToken(token string) []Found {
	st := newStream(SourceProcessorToken, token)
	st.reset(purposeCount, 0)
	return st.accounts(pick(st, s.token, 3+st.IntN(8)), SourceProcessorToken, false)
}

// The purposes of draws. Each has its own stream per merchant, so that
// drawing more for one purpose never changes another's draws.
const (
	purposeCount   = 1 // how many accounts a source reports
	purposePick    = 2 // which merchants
	purposeAccount = 3 // an account's creation date and login method
)

// stream draws the numbers of one source's value. It is reseeded for every
// purpose and merchant: a merchant's draws then depend only on the value and
// the merchant, never on which other merchants the catalog or the
// unsupported list holds, so growing either leaves earlier detections
// mostly as they were.
type stream struct {
	hi, lo uint64 // the value's seed
	pcg    rand.PCG
	*rand.Rand
}

// newStream seeds a stream with the SHA-256 of the source and its
// normalised value. PCG and rand.Rand's methods are pinned by Go's own
// regression tests, so a value draws the same numbers on every Go release.
func newStream(source, value string) *stream {
	sum := sha256.Sum256([]byte("hitch detection simulator v1\x00" + source + "\x00" + value))
	st := &stream{hi: binary.BigEndian.Uint64(sum[:8]), lo: binary.BigEndian.Uint64(sum[8:16])}
	st.Rand = rand.New(&st.pcg)
	return st
}

// reset starts the draws of one purpose for one item.
func (st *stream) reset(purpose, item uint64) {
	st.pcg.Seed(st.hi^mix64(purpose), st.lo^mix64(item))
}

// pick draws n of pool (all when it holds fewer) without replacement, each
// with probability proportional to its weight, in draw order. Each merchant
// gets an exponential race time from its own stream and the n fastest win.
func pick(st *stream, pool []candidate, n int) []candidate {
	type entry struct {
		i    int
		time float64
	}
	race := make([]entry, len(pool))
	for i, c := range pool {
		st.reset(purposePick, c.item)
		race[i] = entry{i, st.ExpFloat64() / c.weight}
	}
	slices.SortFunc(race, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(pool[a.i].item, pool[b.i].item))
	})
	out := make([]candidate, 0, min(n, len(race)))
	for _, e := range race[:min(n, len(race))] {
		out = append(out, pool[e.i])
	}
	return out
}

// accounts returns the accounts at cs; with details, each gets a creation
// date and a login method of its own.
func (st *stream) accounts(cs []candidate, source string, details bool) []Found {
	out := make([]Found, 0, len(cs))
	for _, c := range cs {
		f := Found{MerchantID: c.id, Name: c.name, Source: source}
		if details {
			st.reset(purposeAccount, c.item)
			created := st.createdAt(c.since)
			f.AccountCreatedAt, f.LoginMethod = &created, st.login(c.id)
		}
		out = append(out, f)
	}
	return out
}

// createdAt draws a creation date between since and latestCreated, at
// second precision. The square root leans it towards recent years, as
// people open more accounts than they used to.
func (st *stream) createdAt(since time.Time) time.Time {
	span := latestCreated.Unix() - since.Unix()
	return time.Unix(since.Unix()+int64(math.Sqrt(st.Float64())*float64(span)), 0).UTC()
}

// login draws a login method: a quarter of accounts use Google sign-in, a
// few Apple's, most a password, and some are unknown.
func (st *stream) login(id int64) string {
	switch u := st.Float64(); {
	case u < 0.25 && !ownIdentity[id]:
		return LoginGoogleSSO
	case u < 0.32 && !ownIdentity[id]:
		return LoginAppleSSO
	case u < 0.87:
		return LoginPassword
	default:
		return ""
	}
}

// itemHash identifies a merchant in draws: FNV-1a of kind and name, fixed
// forever, unlike a position in a list.
func itemHash(kind, name string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, b := range []byte(kind + "\x00" + name) {
		h = (h ^ uint64(b)) * prime
	}
	return h
}

// mix64 is SplitMix64's finaliser: it spreads nearby purposes and item
// hashes over the whole seed space.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
