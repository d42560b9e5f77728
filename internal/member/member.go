// Package member is the dashboard's people: a developer's team members,
// their roles, their passwords (argon2id hashes only) and their sign-ins.
// Every change it makes and every sign-in, successful or not, is written
// to the developer's audit log in the same transaction.
//
// It knows nothing of HTTP: cookies, CSRF tokens and pages are
// internal/web's.
package member

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/mail"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/store"
)

// Roles, from most to least powerful.
var Roles = []string{store.RoleAdmin, store.RoleDeveloper, store.RoleViewer}

var (
	// ErrInvalidCredentials is every refused sign-in: unknown e-mail, wrong
	// password, or a member locked after repeated failures. One error, so
	// that the answer does not tell which e-mails are members.
	ErrInvalidCredentials = errors.New("member: invalid e-mail or password")
	// ErrSessionEnded: the sign-in is unknown, signed out, idle too long
	// or past its lifetime.
	ErrSessionEnded = errors.New("member: the sign-in has ended")
	// ErrForbidden: the member's role does not allow the action.
	ErrForbidden = errors.New("member: the role does not allow this")
	// ErrBusy: too many passwords are being checked at once; try again
	// shortly.
	ErrBusy = errors.New("member: too many sign-ins at once")
	// ErrNotFound: the developer has no such member.
	ErrNotFound = errors.New("member: not found")
	// ErrExists: the e-mail belongs to a member of the developer already.
	// (Members of other developers do not matter: e-mails are unique per
	// developer.)
	ErrExists = errors.New("member: the e-mail belongs to a member of the developer already")
	// ErrLastAdmin: the change would leave the developer without an admin.
	ErrLastAdmin = errors.New("member: a developer keeps at least one admin")
)

// ChooseError answers a sign-in whose e-mail and password are right for
// members of several developers: the person picks one, and signs in again
// with its client_id. It names only the developers the password is right
// for.
type ChooseError struct {
	Clients []*store.Client
}

func (e *ChooseError) Error() string {
	return "member: the e-mail and password are those of members of several developers"
}

// Defaults of Config.
const (
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultSessionLifetime = 12 * time.Hour
	DefaultMaxFailures     = 5
	DefaultLockout         = 15 * time.Minute
	DefaultRefusalFloor    = 60 * time.Millisecond
	DefaultCheckWait       = time.Second
	// MaxSignInMembers bounds the members whose password one sign-in
	// checks, and so the password checks one sign-in makes: an e-mail that
	// belongs to members of more developers signs in to the others with
	// their client_id.
	MaxSignInMembers = 10
	// touchEvery bounds how often a sign-in's last_seen_at is written.
	touchEvery = time.Minute
)

// Config tunes sign-ins; zero fields take the defaults.
type Config struct {
	// IdleTimeout ends a sign-in unused this long (default 30 minutes).
	IdleTimeout time.Duration
	// SessionLifetime ends any sign-in this long after it began (default
	// 12 hours).
	SessionLifetime time.Duration
	// MaxFailures wrong passwords in a row lock the member (default 5)...
	MaxFailures int
	// ...for Lockout (default 15 minutes).
	Lockout time.Duration
	// RefusalFloor is the least time a refused sign-in takes, on Clock
	// from when it gets its turn to check passwords, beyond the
	// estimated time of MaxSignInMembers password checks: the reads and
	// writes of a refusal of that many members (default 60 ms; negative:
	// refusals are not padded at all). So every refusal takes the time of
	// the slowest, and the time tells neither whether an e-mail is a
	// member's nor of how many developers.
	RefusalFloor time.Duration
	// MaxConcurrentChecks bounds the password checks and hashes (by
	// default 19 MiB and ~25 ms each) of sign-ins and password changes
	// running at once (default 2 × GOMAXPROCS). A sign-in takes one turn
	// and makes its checks one after another in it.
	MaxConcurrentChecks int
	// CheckWait is how long a sign-in or password change waits for a turn
	// before ErrBusy (default 1 second).
	CheckWait time.Duration
	// Hasher hashes and checks passwords (default DefaultArgon2id: 19 MiB,
	// 2 passes, 1 lane).
	Hasher Hasher
	// Clock measures password checks, for the estimate RefusalFloor adds
	// to, and waits out the padding of refusals (default the wall clock).
	// It is not NewService's now, which dates records, sign-ins and locks.
	Clock Clock
}

// Clock is the time of password checks and of the padding of refusals.
type Clock interface {
	Now() time.Time
	// Sleep returns after d, or as soon as ctx ends.
	Sleep(ctx context.Context, d time.Duration)
}

// wallClock is the Clock of a running Hitch.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Service manages members and their sign-ins.
type Service struct {
	store store.Store
	audit *audit.Log
	now   func() time.Time
	cfg   Config
	// dummyHash is checked against for unknown e-mails, so that they cost
	// the same time as a member's wrong password. It is made on first use:
	// every command builds a Service, few sign anyone in.
	dummyHash func() string
	// checks holds a token per running password check or hash.
	checks chan struct{}
	// costs estimates what a password check takes on this server now.
	costs costs
}

// NewService returns a Service; now is the clock that dates records,
// sign-ins and locks.
func NewService(st store.Store, log *audit.Log, now func() time.Time, cfg Config) *Service {
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.SessionLifetime == 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.MaxFailures == 0 {
		cfg.MaxFailures = DefaultMaxFailures
	}
	if cfg.Lockout == 0 {
		cfg.Lockout = DefaultLockout
	}
	if cfg.RefusalFloor == 0 {
		cfg.RefusalFloor = DefaultRefusalFloor
	}
	if cfg.MaxConcurrentChecks <= 0 {
		cfg.MaxConcurrentChecks = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.CheckWait <= 0 {
		cfg.CheckWait = DefaultCheckWait
	}
	if cfg.Hasher == nil {
		cfg.Hasher = DefaultArgon2id
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	s := &Service{store: st, audit: log, now: now, cfg: cfg, checks: make(chan struct{}, cfg.MaxConcurrentChecks)}
	s.dummyHash = sync.OnceValue(func() string {
		// A hash costs what a check does: the first measure of one.
		begin := cfg.Clock.Now()
		phc := cfg.Hasher.Hash(NewPassword())
		s.costs.observe(cfg.Clock.Now().Sub(begin))
		return phc
	})
	return s
}

// Principal is a signed-in member, with the developer it belongs to.
type Principal struct {
	Session *store.DashboardSession
	Member  *store.Member
	Client  *store.Client
	// Token is the sign-in's cookie value (internal/web derives the CSRF
	// token from it).
	Token string
}

// Permission is what a role may do.
type Permission int

// Permissions. Every role reads the dashboard, secrets excepted.
const (
	// ManageWebhooks: add, remove, rotate and test endpoints, resend
	// events (developer and admin).
	ManageWebhooks Permission = iota
	// Administer: members, the API secret and the merchants of the link
	// flow (admin).
	Administer
)

// Can reports whether the member's role has the permission.
func (p *Principal) Can(perm Permission) bool {
	switch perm {
	case ManageWebhooks:
		return p.Member.Role == store.RoleAdmin || p.Member.Role == store.RoleDeveloper
	case Administer:
		return p.Member.Role == store.RoleAdmin
	}
	return false
}

// Actor is the principal as the audit log names it.
func (p *Principal) Actor() audit.Actor {
	return audit.Actor{Name: p.Member.Name, Email: p.Member.Email}
}

// Entry starts an audit entry for an action of the principal.
func (p *Principal) Entry(action, targetType string, targetName *string, origin audit.Origin) audit.Entry {
	return audit.Entry{ClientID: p.Client.ID, Environment: p.Client.Environment, Action: action, Actor: p.Actor(),
		TargetType: targetType, TargetName: targetName, Origin: origin}
}

// OperatorActor is the actor of members added with the hitch command.
var OperatorActor = audit.Operator("members add").Actor

// AddParams describe a new member.
type AddParams struct {
	ClientID string
	Email    string
	Name     string
	Role     string
}

// Add creates a member with a generated password, returned this once. by
// is the admin adding them, nil for the operator's hitch members add.
// Someone else knows the password, so the member must change it before
// anything else. The e-mail may be a member of other developers; not of
// this one (ErrExists).
func (s *Service) Add(ctx context.Context, by *Principal, p AddParams, origin audit.Origin) (*store.Member, string, error) {
	if by != nil && !by.Can(Administer) {
		return nil, "", ErrForbidden
	}
	email, err := NormalizeEmail(p.Email)
	if err != nil {
		return nil, "", err
	}
	name := strings.TrimSpace(p.Name)
	if name == "" {
		name = email
	}
	if utf8.RuneCountInString(name) > 100 || !utf8.ValidString(name) {
		return nil, "", field.Invalid("name", "must be at most 100 characters")
	}
	if !slices.Contains(Roles, p.Role) {
		return nil, "", field.Invalid("role", "must be admin, developer or viewer")
	}
	client, err := s.store.ClientGetByID(ctx, p.ClientID)
	if err != nil {
		return nil, "", err
	}
	password := NewPassword()
	now := s.now().UTC()
	m := &store.Member{ID: uuid.NewString(), ClientID: client.ID, Email: email, Name: name, Role: p.Role,
		PasswordHash: s.cfg.Hasher.Hash(password), MustChangePassword: true, CreatedAt: now, UpdatedAt: now}
	entry := audit.Entry{ClientID: client.ID, Environment: client.Environment, Action: audit.ActionMemberAdd,
		Actor: OperatorActor, TargetType: audit.TargetMember, TargetName: &email, Origin: origin}
	if by != nil {
		entry = by.Entry(audit.ActionMemberAdd, audit.TargetMember, &email, origin)
	}
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		if _, err := s.audit.Write(ctx, ex, entry); err != nil {
			return err
		}
		return ex.MemberInsert(ctx, m)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, "", ErrExists
	}
	if err != nil {
		return nil, "", err
	}
	return m, password, nil
}

// NormalizeEmail trims and lower-cases an address and checks its form.
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return "", field.Invalid("email", "must be an e-mail address such as ada@example.com")
	}
	return s, nil
}

// List returns the developer's members, oldest first.
func (s *Service) List(ctx context.Context, clientID string) ([]*store.Member, error) {
	return s.store.MemberList(ctx, clientID)
}

// Remove removes a member (an admin's action). The developer's last admin
// stays.
func (s *Service) Remove(ctx context.Context, by *Principal, memberID string, origin audit.Origin) error {
	return s.change(ctx, by, memberID, audit.ActionMemberRemove, origin, func(ex store.Executor, m *store.Member) error {
		return ex.MemberDelete(ctx, m.ClientID, m.ID)
	}, func(m *store.Member) bool { return m.Role == store.RoleAdmin })
}

// SetRole changes a member's role (an admin's action). The developer's last
// admin stays an admin.
func (s *Service) SetRole(ctx context.Context, by *Principal, memberID, role string, origin audit.Origin) error {
	if !slices.Contains(Roles, role) {
		return field.Invalid("role", "must be admin, developer or viewer")
	}
	return s.change(ctx, by, memberID, audit.ActionMemberRoleChange, origin, func(ex store.Executor, m *store.Member) error {
		return ex.MemberSetRole(ctx, m.ClientID, m.ID, role, s.now().UTC())
	}, func(m *store.Member) bool { return m.Role == store.RoleAdmin && role != store.RoleAdmin })
}

// change runs an admin's change to a member: the audit record first, which
// serialises the developer's recorded actions, then the last-admin rule on
// what is committed, then the change.
func (s *Service) change(ctx context.Context, by *Principal, memberID, action string, origin audit.Origin,
	apply func(store.Executor, *store.Member) error, dropsAdmin func(*store.Member) bool) error {
	if !by.Can(Administer) {
		return ErrForbidden
	}
	if _, err := uuid.Parse(memberID); err != nil {
		return ErrNotFound
	}
	clientID := by.Client.ID
	target, err := s.store.MemberGet(ctx, clientID, memberID)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ex store.Executor) error {
		if _, err := s.audit.Write(ctx, ex, by.Entry(action, audit.TargetMember, &target.Email, origin)); err != nil {
			return err
		}
		m, err := ex.MemberGet(ctx, clientID, memberID)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if dropsAdmin(m) {
			admins, err := ex.MemberCountAdmins(ctx, clientID)
			if err != nil {
				return err
			}
			if admins <= 1 {
				return ErrLastAdmin
			}
		}
		return apply(ex, m)
	})
}

// SignedIn is a new sign-in: the cookie value, shown to the browser only.
type SignedIn struct {
	Token     string
	Principal *Principal
}

// SignIn checks an e-mail and password. The e-mail may belong to members of
// several developers (at most MaxSignInMembers are considered): the
// password is checked against each, and the sign-in is to the one it is
// right for; when it is right for several, nothing is signed in and a
// *ChooseError names them (SignInTo then picks one). A wrong password
// counts towards the lockout of every member it was checked against; a
// locked member is refused whatever the password, and the password is not
// even checked. Every refused attempt on a member's e-mail is audited, for
// each of its members, and so is every success (for the member signed in
// to); attempts on unknown e-mails have no developer to be recorded for
// (docs/audit.md). Every refusal takes the time of the slowest refused
// sign-in (and at least Config.RefusalFloor), and unknown e-mails still
// cost a password check, so timing tells neither whether an e-mail is a
// member's nor of how many developers. ErrBusy when too many passwords are
// being checked at once.
func (s *Service) SignIn(ctx context.Context, email, password string, origin audit.Origin) (*SignedIn, error) {
	return s.SignInTo(ctx, "", email, password, origin)
}

// SignInTo is SignIn to the member of one developer, clientID (all of the
// e-mail's members when clientID is empty). An unknown clientID is
// answered as an unknown e-mail.
func (s *Service) SignInTo(ctx context.Context, clientID, email, password string, origin audit.Origin) (*SignedIn, error) {
	// One turn for the whole attempt, taken before anything is read: then
	// whether it is answered ErrBusy, and how long it waited, do not depend
	// on the e-mail either.
	release, err := s.turn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	s.dummyHash() // the first sign-in measures a check before any deadline
	deadline := s.cfg.Clock.Now().Add(s.refusalFloor())
	signed, err := s.signIn(ctx, release, clientID, email, password, origin)
	release() // if signIn returned before its checks ended; not held while padding
	if errors.Is(err, ErrInvalidCredentials) {
		s.padUntil(ctx, deadline)
	}
	return signed, err
}

// refusalFloor is how long a refused sign-in takes from its turn: the
// estimated time of the slowest refusal, MaxSignInMembers checks one after
// another with half as much again (for a server busier than when they were
// measured), and Config.RefusalFloor for its reads and writes; none when
// that is negative.
//
// Padding is a sleep: a refusal costs the server the same checks and
// writes as before, only its answer waits. Checking MaxSignInMembers
// hashes for every attempt would hide the count as well, but would make
// each guess at an unknown e-mail cost ten times the memory and CPU.
func (s *Service) refusalFloor() time.Duration {
	if s.cfg.RefusalFloor < 0 {
		return 0
	}
	return s.cfg.RefusalFloor + MaxSignInMembers*s.costs.check()*3/2
}

// padUntil sleeps until deadline, or until ctx ends.
func (s *Service) padUntil(ctx context.Context, deadline time.Time) {
	if rest := deadline.Sub(s.cfg.Clock.Now()); rest > 0 {
		s.cfg.Clock.Sleep(ctx, rest)
	}
}

// turn waits for a turn among the bounded checks and returns the function
// that gives it back (once, however often called); ErrBusy after waiting
// Config.CheckWait.
func (s *Service) turn(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(s.cfg.CheckWait)
	defer t.Stop()
	select {
	case s.checks <- struct{}{}:
	case <-t.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return sync.OnceFunc(func() { <-s.checks }), nil
}

// bounded runs fn, a password check or hash, in a turn of its own.
func (s *Service) bounded(ctx context.Context, fn func()) error {
	release, err := s.turn(ctx)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// check is a password check in a turn of its own.
func (s *Service) check(ctx context.Context, phc, password string) (ok bool, err error) {
	if busy := s.bounded(ctx, func() { ok, err = s.checkNow(phc, password) }); busy != nil {
		return false, busy
	}
	return ok, err
}

// checkNow is a password check, for a caller that holds a turn; it
// measures checks of today's parameters for the refusal floor.
func (s *Service) checkNow(phc, password string) (bool, error) {
	begin := s.cfg.Clock.Now()
	ok, err := s.cfg.Hasher.Check(phc, password)
	if err == nil && s.cfg.Hasher.Current(phc) {
		s.costs.observe(s.cfg.Clock.Now().Sub(begin))
	}
	return ok, err
}

// hash is a password hash within the bound of concurrent checks.
func (s *Service) hash(ctx context.Context, password string) (phc string, err error) {
	err = s.bounded(ctx, func() { phc = s.cfg.Hasher.Hash(password) })
	return phc, err
}

// costs estimates what a password check takes, from the checks of
// today's parameters measured (wall clock, in a turn): a moving average
// that follows a longer measure faster (a quarter of the way) than a
// shorter one (an eighth), so that when the server slows down refusals
// soon take the longer time, and a quiet moment does not shorten them at
// once.
type costs struct {
	mu  sync.Mutex
	avg time.Duration
}

func (c *costs) observe(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.avg == 0:
		c.avg = d
	case d > c.avg:
		c.avg += (d - c.avg) / 4
	default:
		c.avg -= (c.avg - d) / 8
	}
}

func (c *costs) check() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.avg
}

// errLockedNow is a success refused because the member was locked by the
// time it committed.
var errLockedNow = errors.New("member: locked")

// candidate is a member whose e-mail a sign-in gave, and what its password
// check found.
type candidate struct {
	p *Principal
	// locked: the member was locked when the sign-in began; its password
	// is not checked.
	locked bool
	right  bool
}

// signIn runs a sign-in in the caller's turn, which it gives back (checked)
// once the passwords are checked.
func (s *Service) signIn(ctx context.Context, checked func(), clientID, email, password string, origin audit.Origin) (*SignedIn, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > 254 || len(password) > MaxPasswordBytes || len(clientID) > 100 {
		return nil, s.refuseUnknown(password)
	}
	members, err := s.store.MemberListByEmail(ctx, &store.MemberListByEmailParams{Email: email, ClientID: clientID,
		Limit: MaxSignInMembers})
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, s.refuseUnknown(password)
	}
	now := s.now().UTC()
	cands := make([]*candidate, len(members))
	for i, m := range members {
		client, err := s.store.ClientGetByID(ctx, m.ClientID)
		if err != nil {
			return nil, err
		}
		cands[i] = &candidate{p: &Principal{Member: m, Client: client}, locked: m.LockedUntil != nil && now.Before(*m.LockedUntil)}
	}
	// The members' checks run one after another in the attempt's one turn:
	// an e-mail of several developers' members takes longer, and the
	// refusal floor, which covers the most members there can be, hides
	// it. The password of a locked member is not checked, so guesses while
	// locked teach nothing; the dummy check keeps the time.
	for _, c := range cands {
		var err error
		if c.locked {
			_, err = s.checkNow(s.dummyHash(), password)
		} else {
			c.right, err = s.checkNow(c.p.Member.PasswordHash, password)
		}
		if err != nil {
			return nil, err
		}
	}
	checked()
	var right []*candidate
	for _, c := range cands {
		if c.right {
			right = append(right, c)
		}
	}
	// The hashes took a while and other attempts may have run meanwhile:
	// the lock is decided again, atomically, by the store.
	now = s.now().UTC()
	if len(right) == 0 {
		return nil, s.refuseAll(ctx, cands, origin, now)
	}
	// The members the password was wrong for are refused whatever happens
	// with the others: otherwise one developer's admin, who can set a
	// member's password to a guess, could try guesses at another
	// developer's member of the same e-mail, signing in to their own
	// whenever the guess was wrong, uncounted.
	for _, c := range cands {
		if c.right {
			continue
		}
		if err := s.refuse(ctx, c.p, audit.ActionSignIn, origin, !c.locked, now); !errors.Is(err, ErrInvalidCredentials) {
			return nil, err
		}
	}
	if len(right) > 1 {
		// Offering a member as a choice tells that the password is theirs,
		// so it is decided as a success is: a member locked while the
		// passwords were checked is refused, not offered.
		if right, err = s.unlockedNow(ctx, right, origin, now); err != nil {
			return nil, err
		}
	}
	switch len(right) {
	case 0:
		return nil, ErrInvalidCredentials
	case 1:
		signed, err := s.begin(ctx, right[0].p, origin, now)
		if errors.Is(err, errLockedNow) {
			return nil, s.refuse(ctx, right[0].p, audit.ActionSignIn, origin, false, now)
		}
		return signed, err
	}
	// The password is right for several members: it is theirs, so naming
	// their developers tells the person nothing they could not learn by
	// signing in. Nothing is recorded until they pick one.
	choose := &ChooseError{}
	for _, c := range right {
		choose.Clients = append(choose.Clients, c.p.Client)
	}
	return nil, choose
}

// errDecided rolls back the transaction of unlockedNow.
var errDecided = errors.New("member: decided")

// unlockedNow returns the members of right that are not locked now, as the
// database decides it, and refuses the others (recorded, not counted: their
// password was right). The decision is the conditional statement that
// guards a success, run in a transaction that is rolled back: nothing is
// reset until the person picks a member and signs in to it, when the
// decision is made again.
func (s *Service) unlockedNow(ctx context.Context, right []*candidate, origin audit.Origin, now time.Time) ([]*candidate, error) {
	locked := make([]bool, len(right))
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		for i, c := range right {
			l, err := ex.MemberResetFailures(ctx, c.p.Member.ClientID, c.p.Member.ID, now)
			if errors.Is(err, store.ErrNotFound) { // removed meanwhile
				l, err = true, nil
			}
			if err != nil {
				return err
			}
			locked[i] = l
		}
		return errDecided
	})
	if !errors.Is(err, errDecided) {
		return nil, err
	}
	var unlocked []*candidate
	for i, c := range right {
		if !locked[i] {
			unlocked = append(unlocked, c)
			continue
		}
		if err := s.refuse(ctx, c.p, audit.ActionSignIn, origin, false, now); !errors.Is(err, ErrInvalidCredentials) {
			return nil, err
		}
	}
	return unlocked, nil
}

// begin records a sign-in and starts its session, unless the member was
// locked meanwhile (errLockedNow).
func (s *Service) begin(ctx context.Context, p *Principal, origin audit.Origin, now time.Time) (*SignedIn, error) {
	m := p.Member
	token, sess := s.newSession(m, now)
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		if err := s.succeed(ctx, ex, m, p.Entry(audit.ActionSignIn, audit.TargetSession, nil, origin), now); err != nil {
			return err
		}
		// Ended sign-ins are deleted when used; the others go here, rarely
		// enough for a scan of a small table.
		if _, err := ex.DashboardSessionDeleteExpired(ctx, now, now.Add(-s.cfg.IdleTimeout)); err != nil {
			return err
		}
		return ex.DashboardSessionInsert(ctx, sess)
	})
	if errors.Is(err, store.ErrNotFound) { // removed meanwhile
		return nil, ErrInvalidCredentials
	}
	if err != nil {
		return nil, err
	}
	p.Session, p.Token = sess, token
	return &SignedIn{Token: token, Principal: p}, nil
}

// newSession is a new sign-in of m and its cookie value, not yet stored.
func (s *Service) newSession(m *store.Member, now time.Time) (string, *store.DashboardSession) {
	token := newToken()
	return token, &store.DashboardSession{ID: uuid.NewString(), ClientID: m.ClientID, MemberID: m.ID,
		TokenHash: tokenHash(token), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(s.cfg.SessionLifetime)}
}

// succeed records a member's successful attempt in ex and forgets their
// earlier failures, or returns errLockedNow when the member was locked
// meanwhile: a success never commits while the member is locked. The lock
// is checked and the count reset in one statement, which holds the
// member's row until commit.
func (s *Service) succeed(ctx context.Context, ex store.Executor, m *store.Member, entry audit.Entry, now time.Time) error {
	if _, err := s.audit.Write(ctx, ex, entry); err != nil {
		return err
	}
	locked, err := ex.MemberResetFailures(ctx, m.ClientID, m.ID, now)
	if err != nil {
		return err
	}
	if locked {
		return errLockedNow
	}
	return nil
}

// refuseUnknown refuses an e-mail that is no member's, after a password
// check as long as a member's, in the caller's turn.
func (s *Service) refuseUnknown(password string) error {
	if _, err := s.checkNow(s.dummyHash(), password); err != nil {
		return err
	}
	return ErrInvalidCredentials
}

// refuseAll refuses a sign-in for each of its members: a failure in each
// developer's log, and the wrong password counted towards the lockout of
// each member that was not locked.
func (s *Service) refuseAll(ctx context.Context, cands []*candidate, origin audit.Origin, now time.Time) error {
	for _, c := range cands {
		if err := s.refuse(ctx, c.p, audit.ActionSignIn, origin, !c.locked, now); !errors.Is(err, ErrInvalidCredentials) {
			return err
		}
	}
	return ErrInvalidCredentials
}

// refuse records a refused attempt of a member (a sign-in or a password
// change) and returns ErrInvalidCredentials; count is whether a wrong
// password counts towards the lockout (the store counts nothing while the
// member is locked).
func (s *Service) refuse(ctx context.Context, p *Principal, action string, origin audit.Origin, count bool, now time.Time) error {
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		entry := p.Entry(action, audit.TargetSession, nil, origin)
		if action != audit.ActionSignIn {
			entry = p.Entry(action, audit.TargetMember, &p.Member.Email, origin)
		}
		entry.Outcome = audit.OutcomeFailure
		if _, err := s.audit.Write(ctx, ex, entry); err != nil {
			return err
		}
		if !count {
			return nil
		}
		locked, err := ex.MemberRecordFailure(ctx, p.Member.ClientID, p.Member.ID, s.cfg.MaxFailures, now.Add(s.cfg.Lockout), now)
		if err != nil || !locked {
			return err
		}
		// A lock ends the member's sign-ins too: someone who signed in
		// with a password being guessed may not be its owner.
		_, err = ex.DashboardSessionDeleteMember(ctx, p.Member.ClientID, p.Member.ID)
		return err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) { // not found: removed meanwhile
		return err
	}
	return ErrInvalidCredentials
}

// ChangePassword sets the principal's own password to next, typed twice
// (confirm), after checking current, and returns the cookie value of the
// principal's new sign-in. The change is recorded in its transaction,
// clears must_change_password and ends every sign-in of the member, the
// principal's too, which a new one replaces (p's Session and Token are
// updated): a cookie taken before the change does not outlive it.
// ErrSessionEnded if the principal's sign-in ended meanwhile. A wrong
// current password is refused as at sign-in: it counts towards the
// lockout and is recorded as a failure, and a locked member's is not
// checked (ErrInvalidCredentials for both). ErrBusy as SignIn;
// *field.Error for a next password that is too short, too long,
// unconfirmed or the current one.
func (s *Service) ChangePassword(ctx context.Context, p *Principal, current, next, confirm string, origin audit.Origin) (string, error) {
	if next != confirm {
		return "", field.Invalid("new password", "and its confirmation differ")
	}
	if err := ValidatePassword(next); err != nil {
		return "", err
	}
	if next == current {
		return "", field.Invalid("new password", "must differ from the current one")
	}
	m := p.Member
	now := s.now().UTC()
	locked := m.LockedUntil != nil && now.Before(*m.LockedUntil)
	phc := m.PasswordHash
	if locked {
		phc = s.dummyHash()
	}
	right := false
	if len(current) <= MaxPasswordBytes {
		var err error
		if right, err = s.check(ctx, phc, current); err != nil {
			return "", err
		}
	}
	now = s.now().UTC()
	if locked || !right {
		return "", s.refuse(ctx, p, audit.ActionMemberPasswordChange, origin, !locked, now)
	}
	hash, err := s.hash(ctx, next)
	if err != nil {
		return "", err
	}
	token, sess := s.newSession(m, now)
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		entry := p.Entry(audit.ActionMemberPasswordChange, audit.TargetMember, &m.Email, origin)
		if err := s.succeed(ctx, ex, m, entry, now); err != nil {
			return err
		}
		if err := ex.MemberSetPassword(ctx, m.ClientID, m.ID, hash, false, now); err != nil {
			return err
		}
		// The principal's sign-in is replaced, not kept: whoever holds its
		// cookie (copied before the change) is signed out with the others.
		// Not found: it ended meanwhile, and nothing changes.
		if err := ex.DashboardSessionDelete(ctx, m.ClientID, p.Session.ID); err != nil {
			return err
		}
		if err := ex.DashboardSessionInsert(ctx, sess); err != nil {
			return err
		}
		_, err = ex.DashboardSessionDeleteOthers(ctx, m.ClientID, m.ID, sess.ID)
		return err
	})
	switch {
	case errors.Is(err, errLockedNow):
		return "", s.refuse(ctx, p, audit.ActionMemberPasswordChange, origin, false, now)
	case errors.Is(err, store.ErrNotFound): // removed, or signed out, meanwhile
		return "", ErrSessionEnded
	case err != nil:
		return "", err
	}
	m.PasswordHash, m.MustChangePassword = hash, false
	p.Session, p.Token = sess, token
	return token, nil
}

// Authenticate returns the principal of a sign-in's cookie value. An idle
// or too old sign-in, or one of a locked member, is ended and
// ErrSessionEnded returned. A removed member's sign-ins are gone with it.
func (s *Service) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" || len(token) > 128 {
		return nil, ErrSessionEnded
	}
	sess, m, err := s.store.DashboardSessionGetByTokenHash(ctx, tokenHash(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrSessionEnded
	}
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	locked := m.LockedUntil != nil && now.Before(*m.LockedUntil)
	if locked || !now.Before(sess.ExpiresAt) || now.Sub(sess.LastSeenAt) >= s.cfg.IdleTimeout {
		if err := s.store.DashboardSessionDelete(ctx, sess.ClientID, sess.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, ErrSessionEnded
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.store.DashboardSessionTouch(ctx, sess.ClientID, sess.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		sess.LastSeenAt = now
	}
	client, err := s.store.ClientGetByID(ctx, sess.ClientID)
	if err != nil {
		return nil, err
	}
	return &Principal{Session: sess, Member: m, Client: client, Token: token}, nil
}

// SignOut ends the principal's sign-in.
func (s *Service) SignOut(ctx context.Context, p *Principal, origin audit.Origin) error {
	return s.store.InTx(ctx, func(ex store.Executor) error {
		if _, err := s.audit.Write(ctx, ex, p.Entry(audit.ActionSignOut, audit.TargetSession, nil, origin)); err != nil {
			return err
		}
		err := ex.DashboardSessionDelete(ctx, p.Client.ID, p.Session.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
}

// SessionLifetime is how long a sign-in lasts at most (its cookie's
// Max-Age).
func (s *Service) SessionLifetime() time.Duration { return s.cfg.SessionLifetime }

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("member: crypto/rand failed: " + err.Error())
	}
	return "hds_" + base64.RawURLEncoding.EncodeToString(b)
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
