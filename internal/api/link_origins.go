package api

import (
	"net/http"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/store"
)

// The web origins a developer allows to embed its hosted link flow
// (docs/link.md): read and replaced whole. A change is audited, as the
// dashboard's is.

type linkOriginsJSON struct {
	AllowedOrigins []string `json:"allowed_origins"`
	// FrameAncestors is the source list /link is served with for this
	// developer's flows, defaults included.
	FrameAncestors string `json:"frame_ancestors"`
}

type setLinkOriginsRequest struct {
	AllowedOrigins *[]string `json:"allowed_origins"`
}

func (s *Server) renderLinkOrigins(origins []string) linkOriginsJSON {
	return linkOriginsJSON{AllowedOrigins: origins, FrameAncestors: link.FrameAncestorsFor(s.Env, origins)}
}

func (s *Server) getLinkOrigins(w http.ResponseWriter, r *http.Request) error {
	origins, err := s.Links.AllowedOrigins(r.Context(), clientFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderLinkOrigins(origins))
	return nil
}

// setLinkOrigins replaces the whole list; an empty one removes every origin.
func (s *Server) setLinkOrigins(w http.ResponseWriter, r *http.Request) error {
	var req setLinkOriginsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.AllowedOrigins == nil {
		return errRequired("allowed_origins")
	}
	clientID := clientFrom(r.Context()).ID
	origins, err := s.Links.SetAllowedOrigins(r.Context(), clientID, *req.AllowedOrigins, func(ex store.Executor, stored []string) error {
		return s.Audit.Record(r.Context(), ex, s.by(r), clientID, audit.ActionLinkOriginsUpdate, audit.TargetLinkOrigins,
			link.OriginsAuditName(stored))
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderLinkOrigins(origins))
	return nil
}
