package web

import (
	"errors"
	"net/http"

	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/member"
)

// A member's own password.

type passwordData struct {
	// Must: someone else chose the password; every other page sends the
	// member here until they choose their own.
	Must      bool
	MinLength int
}

func (d *dashboard) renderPassword(w http.ResponseWriter, r *http.Request, p *member.Principal, status int, v *view) {
	v.Title, v.Active, v.P = "Your password", "password", p
	v.Data = passwordData{Must: p.Member.MustChangePassword, MinLength: member.MinPasswordLength}
	d.render(w, r, status, "password", v)
}

func (d *dashboard) passwordPage(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	d.renderPassword(w, r, p, http.StatusOK, &view{Notice: notice(r)})
	return nil
}

// changePassword changes the member's own password and ends their
// sign-ins, this one replaced by a new one: the answer carries its cookie,
// and the pages after it the form token derived from that. A member who
// had to change it goes on to the overview; one who chose to, back to this
// page. A refusal
// shows the form again with what was wrong; the passwords typed are never
// shown back.
func (d *dashboard) changePassword(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	forced := p.Member.MustChangePassword // the change clears it
	token, err := d.Members.ChangePassword(r.Context(), p, r.PostFormValue("current"), r.PostFormValue("new"),
		r.PostFormValue("confirm"), origin(r))
	var invalid *field.Error
	switch {
	case err == nil:
		d.setCookie(w, sessionCookie, token, d.Members.SessionLifetime())
		if forced {
			// The change was what stood between the member and the
			// dashboard: in they go.
			return redirect(w, r, "/dashboard", "password.changed")
		}
		return redirect(w, r, passwordPath, "password.changed")
	case errors.As(err, &invalid):
		d.renderPassword(w, r, p, http.StatusBadRequest, &view{Error: "The " + invalid.Error() + "."})
	case errors.Is(err, member.ErrInvalidCredentials):
		d.renderPassword(w, r, p, http.StatusForbidden, &view{Error: "The current password is wrong, or your account is " +
			"locked for a while after repeated wrong passwords."})
	case errors.Is(err, member.ErrBusy):
		w.Header().Set("Retry-After", "1")
		d.renderPassword(w, r, p, http.StatusServiceUnavailable, &view{Error: "Too many people are signing in right now. " +
			"Try again in a moment."})
	case errors.Is(err, member.ErrSessionEnded):
		d.clearCookie(w, sessionCookie)
		http.Redirect(w, r, signinPath, http.StatusSeeOther)
	default:
		return err
	}
	return nil
}
