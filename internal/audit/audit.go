// Package audit keeps each developer's audit log of what its team does in
// the dashboard, and of every change to its credentials, keys, webhook
// endpoints, allowed origins and members made through the API or by the
// operator's hitch commands: append-only records, each chained to the one
// before by a SHA-256 hash, so that changing, removing or reordering a
// record is found by Verify (hitch audit verify).
//
// A record is written in the database transaction of the action it records
// (Write takes the transaction's Executor), so the two commit or roll back
// together. Reads of consequence (a secret viewed, a user's data viewed)
// are recorded alone.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
)

// Actions, as named in records (docs/audit.md lists them).
const (
	ActionSignIn           = "signin"
	ActionSignOut          = "signout"
	ActionMemberAdd        = "member.add"
	ActionMemberRemove     = "member.remove"
	ActionMemberRoleChange = "member.role_change"
	// ActionMemberPasswordChange: a member changes their own password.
	ActionMemberPasswordChange = "member.password_change"
	ActionSecretView           = "secret.view"
	ActionSecretRotate         = "secret.rotate"
	ActionWebhookAdd           = "webhook.add"
	ActionWebhookRemove        = "webhook.remove"
	ActionWebhookUpdate        = "webhook.update" // an endpoint's signing secret is rotated
	ActionWebhookEdit          = "webhook.edit"   // an endpoint's URL or event filter is changed
	ActionWebhookTest          = "webhook.test"
	ActionEventResend          = "event.resend"
	// ActionEventReplay: a time range of events is queued again to one
	// endpoint from the dashboard.
	ActionEventReplay  = "event.replay"
	ActionMerchantHide = "merchant.hide"
	ActionMerchantShow = "merchant.show"
	ActionUserView     = "user.view"
	// ActionLinkOriginsUpdate: the web origins allowed to embed the link
	// flow are replaced.
	ActionLinkOriginsUpdate = "link.origins_update"
	// ActionKeyRotate: the deployment's JWE key is rotated. Every
	// developer encrypts card data to it, so every developer's log
	// records it.
	ActionKeyRotate = "key.rotate"
)

// Outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// Target types.
const (
	TargetSession         = "session"
	TargetMember          = "member"
	TargetSecret          = "secret"
	TargetWebhookEndpoint = "webhook_endpoint"
	TargetEvent           = "event"
	TargetMerchant        = "merchant"
	TargetUser            = "user"
	// TargetLinkOrigins is the developer's list of allowed origins, named
	// by the list as stored (null when emptied).
	TargetLinkOrigins = "link_origins"
	// TargetJWEKey is the deployment's card data key, named by the new
	// key's kid (public: GET /jwe/key serves it).
	TargetJWEKey = "jwe_key"
)

const (
	hashVersion           = "hitch.audit.v1"
	maxFieldBytes         = 1 << 12
	verifyPage            = 500
	datetimeLayout        = "2006-01-02T15:04:05.000000Z"
	nullLength     uint32 = 0xFFFFFFFF
)

// Actions lists every action name.
var Actions = []string{ActionSignIn, ActionSignOut, ActionMemberAdd, ActionMemberRemove, ActionMemberRoleChange,
	ActionMemberPasswordChange,
	ActionSecretView, ActionSecretRotate, ActionWebhookAdd, ActionWebhookRemove, ActionWebhookUpdate, ActionWebhookEdit,
	ActionWebhookTest, ActionEventResend, ActionEventReplay, ActionMerchantHide, ActionMerchantShow, ActionUserView,
	ActionLinkOriginsUpdate, ActionKeyRotate}

// Actor is who did it: a member's name and e-mail.
type Actor struct {
	Name  string
	Email string
}

// Origin is where the request came from.
type Origin struct {
	IP        string
	UserAgent string
}

// APIActorName is the actor of a change made through the API with the
// developer's credentials: there is no member to name, and the e-mail is
// empty.
const APIActorName = "API credentials"

// By is who made a change that no dashboard sign-in made, and from where.
type By struct {
	Actor  Actor
	Origin Origin
}

// API is a call with the developer's API credentials from ip, whose
// User-Agent header was userAgent.
func API(ip, userAgent string) By {
	return By{Actor: Actor{Name: APIActorName}, Origin: Origin{IP: ip, UserAgent: userAgent}}
}

// Operator is the operator's command "hitch <command>": actor
// "hitch <command> (operator)" with no e-mail, user agent "hitch <command>"
// and no IP.
func Operator(command string) By {
	return By{Actor: Actor{Name: "hitch " + command + " (operator)"}, Origin: Origin{UserAgent: "hitch " + command}}
}

// Entry is a record to write.
type Entry struct {
	ClientID    string
	Environment string
	Action      string
	// Outcome is OutcomeSuccess unless set.
	Outcome    string
	Actor      Actor
	TargetType string
	// TargetName names the target; nil when it has no name.
	TargetName *string
	Origin     Origin
}

// Log writes records.
type Log struct {
	now func() time.Time
}

// NewLog returns a Log; now is the clock.
func NewLog(now func() time.Time) *Log { return &Log{now: now} }

// Write appends a record to the developer's chain in the transaction ex. It
// reserves the next sequence number first, which holds the developer's row
// until ex ends: writers of one developer serialise, and an action that
// writes its record first is serialised with every other recorded action
// of its developer (the last-admin rule relies on it).
func (l *Log) Write(ctx context.Context, ex store.Executor, e Entry) (*store.AuditRecord, error) {
	if e.Outcome == "" {
		e.Outcome = OutcomeSuccess
	}
	if e.TargetType == TargetWebhookEndpoint && e.TargetName != nil {
		e.TargetName = endpointName(*e.TargetName)
	}
	seq, err := ex.ClientAuditSeqNext(ctx, e.ClientID)
	if err != nil {
		return nil, err
	}
	var prev []byte
	if seq > 1 {
		p, err := ex.AuditRecordGetBySeq(ctx, e.ClientID, seq-1)
		if err != nil {
			return nil, fmt.Errorf("audit: previous record: %w", err)
		}
		prev = p.Hash
	}
	r := &store.AuditRecord{
		ID:          uuid.NewString(),
		ClientID:    e.ClientID,
		Seq:         seq,
		CreatedAt:   l.now().UTC().Truncate(time.Microsecond),
		Action:      e.Action,
		Outcome:     e.Outcome,
		ActorName:   clip(e.Actor.Name),
		ActorEmail:  clip(e.Actor.Email),
		TargetType:  e.TargetType,
		Environment: e.Environment,
		IP:          clip(e.Origin.IP),
		UserAgent:   clip(e.Origin.UserAgent),
		PrevHash:    prev,
	}
	if e.TargetName != nil {
		name := clip(*e.TargetName)
		r.TargetName = &name
	}
	r.Hash = Hash(prev, r)
	if err := ex.AuditRecordInsert(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Record writes by's record of action on the developer's target in the
// transaction ex, in the developer's environment (read in ex; an unknown
// developer is store.ErrNotFound).
func (l *Log) Record(ctx context.Context, ex store.Executor, by By, clientID, action, targetType string, targetName *string) error {
	c, err := ex.ClientGetByID(ctx, clientID)
	if err != nil {
		return err
	}
	_, err = l.Write(ctx, ex, Entry{ClientID: c.ID, Environment: c.Environment, Action: action, Actor: by.Actor,
		TargetType: targetType, TargetName: targetName, Origin: by.Origin})
	return err
}

// RecordEveryDeveloper writes by's record of a change to what every
// developer shares (the deployment's JWE key) in each developer's log, in
// the transaction ex. Developers are taken in one order (ClientList's), so
// two such writers wait for each other rather than deadlock.
func (l *Log) RecordEveryDeveloper(ctx context.Context, ex store.Executor, by By, action, targetType string, targetName *string) error {
	clients, err := ex.ClientList(ctx)
	if err != nil {
		return err
	}
	for _, c := range clients {
		if _, err := l.Write(ctx, ex, Entry{ClientID: c.ID, Environment: c.Environment, Action: action, Actor: by.Actor,
			TargetType: targetType, TargetName: targetName, Origin: by.Origin}); err != nil {
			return err
		}
	}
	return nil
}

// clip makes a field a client controls (a user agent) text that every
// store holds, its invalid UTF-8 and NULs replaced by U+FFFD (HTTP allows
// such bytes in a header), and bounds it to 4 KiB, on a UTF-8 boundary.
func clip(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= maxFieldBytes {
		return s
	}
	s = s[:maxFieldBytes]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// Hash is the record's chain hash: SHA-256 over the previous record's hash
// (32 zero bytes for a developer's first record) and the record's
// canonical encoding, in which every field is its length as a 4-byte
// big-endian integer followed by its UTF-8 bytes (a NULL target name is the
// length 0xFFFFFFFF alone), in this order: the version "hitch.audit.v1",
// id, client_id, seq in decimal, datetime as 2006-01-02T15:04:05.000000Z,
// action, outcome, actor name, actor e-mail, target type, target name,
// environment, IP, user agent. docs/audit.md repeats this.
func Hash(prev []byte, r *store.AuditRecord) []byte {
	h := sha256.New()
	if prev == nil {
		prev = make([]byte, sha256.Size)
	}
	h.Write(prev)
	var n [4]byte
	field := func(s string) {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(hashVersion)
	field(r.ID)
	field(r.ClientID)
	field(strconv.FormatInt(r.Seq, 10))
	field(r.CreatedAt.UTC().Format(datetimeLayout))
	field(r.Action)
	field(r.Outcome)
	field(r.ActorName)
	field(r.ActorEmail)
	field(r.TargetType)
	if r.TargetName == nil {
		binary.BigEndian.PutUint32(n[:], nullLength)
		h.Write(n[:])
	} else {
		field(*r.TargetName)
	}
	field(r.Environment)
	field(r.IP)
	field(r.UserAgent)
	return h.Sum(nil)
}

// BreakError names the first record where a developer's chain is broken.
type BreakError struct {
	ClientID string
	// Seq is the sequence number of the first bad or missing record.
	Seq int64
	// ID is the bad record's id ("" when it is missing).
	ID     string
	Reason string
}

func (e *BreakError) Error() string {
	id := e.ID
	if id == "" {
		id = "missing"
	}
	return fmt.Sprintf("audit: the chain of client %s is broken at record %d (%s): %s", e.ClientID, e.Seq, id, e.Reason)
}

// Head is a verified chain's end: operators may keep it elsewhere, to find
// a rewritten chain, which no stored hash can.
type Head struct {
	ClientID string
	Records  int64
	// Hash is the last record's hash (nil with no records).
	Hash []byte
}

// Verify checks the developer's chain from its first record to the last
// sequence number reserved: numbering without gaps, each record's
// prev_hash, and each record's hash. A broken chain is a *BreakError.
func Verify(ctx context.Context, ex store.Executor, clientID string) (*Head, error) {
	// The reserved number is read first: a record commits with its
	// reservation, so every record up to it is visible to the reads below.
	last, err := ex.ClientAuditSeq(ctx, clientID)
	if err != nil {
		return nil, err
	}
	head := &Head{ClientID: clientID}
	var prev []byte
	seq := int64(0)
	for seq < last {
		page, err := ex.AuditRecordChain(ctx, clientID, seq, verifyPage)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return nil, &BreakError{ClientID: clientID, Seq: seq + 1, Reason: fmt.Sprintf("records %d to %d are missing", seq+1, last)}
		}
		for _, r := range page {
			if r.Seq > last {
				break
			}
			if r.Seq != seq+1 {
				return nil, &BreakError{ClientID: clientID, Seq: seq + 1, Reason: fmt.Sprintf("the next record present is %d", r.Seq)}
			}
			if !equal(r.PrevHash, prev) {
				return nil, &BreakError{ClientID: clientID, Seq: r.Seq, ID: r.ID, Reason: "prev_hash is not the previous record's hash"}
			}
			if !equal(Hash(prev, r), r.Hash) {
				return nil, &BreakError{ClientID: clientID, Seq: r.Seq, ID: r.ID, Reason: "the hash does not match the record's fields"}
			}
			prev, seq = r.Hash, r.Seq
		}
	}
	head.Records, head.Hash = seq, prev
	return head, nil
}

func equal(a, b []byte) bool {
	return string(a) == string(b)
}

// VerifyAll verifies the chain of every developer. It returns the heads of
// the intact chains and every broken chain's *BreakError, joined (IsBreak
// and errors.As see them); it stops early only when the store fails.
func VerifyAll(ctx context.Context, st store.Store) ([]*Head, error) {
	clients, err := st.ClientList(ctx)
	if err != nil {
		return nil, err
	}
	var heads []*Head
	var breaks []error
	for _, c := range clients {
		h, err := Verify(ctx, st, c.ID)
		if IsBreak(err) {
			breaks = append(breaks, err)
			continue
		}
		if err != nil {
			return heads, errors.Join(append(breaks, err)...)
		}
		heads = append(heads, h)
	}
	return heads, errors.Join(breaks...)
}

// IsBreak reports whether err is a broken chain.
func IsBreak(err error) bool {
	var b *BreakError
	return errors.As(err, &b)
}

// endpointName names a webhook endpoint by its URL without the query and
// fragment, where a developer may have put a token: the log keeps no secret.
func endpointName(raw string) *string {
	u, err := url.Parse(raw)
	if err != nil || (u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery) {
		return &raw
	}
	name := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String() + "?…"
	return &name
}
