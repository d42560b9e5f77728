package api

import (
	"net/http"

	"github.com/hitchdev/hitch/internal/link"
)

// The web origins a developer allows to embed its hosted link flow
// (docs/link.md): read and replaced whole. Like the rest of the management
// API, a change here is not audited; the dashboard's is.

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
	origins, err := s.Links.SetAllowedOrigins(r.Context(), clientFrom(r.Context()).ID, *req.AllowedOrigins)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderLinkOrigins(origins))
	return nil
}
