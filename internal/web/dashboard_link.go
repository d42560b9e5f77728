package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

// The dashboard's Link flow page: the web origins allowed to embed the
// developer's hosted flow. Every role reads it; admins change it, and each
// change is audited (link.origins_update).

const linkSettingsPath = "/dashboard/link"

// linkNotices are the notices the page's redirect may ask for.
var linkNotices = map[string]string{
	"origins.updated": "The allowed origins were saved. They apply from the next time the flow is opened.",
}

type linkSettingsData struct {
	Origins []string
	// Text is the form's content: the origins, one a line.
	Text           string
	FrameAncestors string
	Development    bool
	Max            int
}

func (d *dashboard) linkSettings(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	origins, err := d.Links.AllowedOrigins(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	v := &view{Title: "Link flow", Active: "link", P: p, Notice: linkNotices[r.URL.Query().Get("notice")]}
	d.renderLinkSettings(w, r, http.StatusOK, v, origins, strings.Join(origins, "\n"))
	return nil
}

func (d *dashboard) renderLinkSettings(w http.ResponseWriter, r *http.Request, status int, v *view, origins []string, text string) {
	v.Data = linkSettingsData{Origins: origins, Text: text, FrameAncestors: link.FrameAncestorsFor(d.cfg.Environment, origins),
		Development: d.cfg.Environment == "development", Max: link.MaxAllowedOrigins}
	d.render(w, r, status, "link", v)
}

// maxOriginsFormBytes bounds the form's text: 20 origins of 300
// characters, with room for blank lines.
const maxOriginsFormBytes = 16 << 10

// setLinkOrigins replaces the list with the form's, one origin a line
// (blank lines ignored). A refused list is shown again with the reason,
// and nothing changes.
func (d *dashboard) setLinkOrigins(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if !p.Can(member.Administer) {
		return forbidden()
	}
	text := r.PostFormValue("origins")
	if len(text) > maxOriginsFormBytes {
		return &pageError{http.StatusBadRequest, "The list is too long."}
	}
	var given []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			given = append(given, line)
		}
	}
	_, err := d.Links.SetAllowedOrigins(r.Context(), p.Client.ID, given, func(ex store.Executor, stored []string) error {
		_, err := d.Audit.Write(r.Context(), ex, p.Entry(audit.ActionLinkOriginsUpdate, audit.TargetLinkOrigins,
			link.OriginsAuditName(stored), origin(r)))
		return err
	})
	var bad *link.OriginError
	switch {
	case errors.As(err, &bad):
		return d.refuseLinkOrigins(w, r, p, text, "The origin "+bad.Error()+".")
	case errors.Is(err, link.ErrTooManyOrigins):
		return d.refuseLinkOrigins(w, r, p, text, fmt.Sprintf("You can allow at most %d origins.", link.MaxAllowedOrigins))
	case err != nil:
		return err
	}
	return redirectLink(w, r, "origins.updated")
}

// refuseLinkOrigins shows the page again with the member's text and why it
// was refused.
func (d *dashboard) refuseLinkOrigins(w http.ResponseWriter, r *http.Request, p *member.Principal, text, message string) error {
	origins, err := d.Links.AllowedOrigins(r.Context(), p.Client.ID)
	if err != nil {
		return err
	}
	d.renderLinkSettings(w, r, http.StatusBadRequest, &view{Title: "Link flow", Active: "link", P: p, Error: message}, origins, text)
	return nil
}

func redirectLink(w http.ResponseWriter, r *http.Request, notice string) error {
	http.Redirect(w, r, linkSettingsPath+"?notice="+notice, http.StatusSeeOther)
	return nil
}
