package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/session"
)

type listMerchantsRequest struct {
	Type     *string `json:"type"`
	Platform *string `json:"platform"`
	Search   *string `json:"search"`
}

type merchantJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Category string `json:"category"`
	Logo     string `json:"logo"`
}

var platforms = []string{"web", "ios", "android"}

const maxSearchLength = 100

func (s *Server) listMerchants(w http.ResponseWriter, r *http.Request) error {
	var req listMerchantsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	product, err := requireProduct(req.Type, session.Types)
	if err != nil {
		return err
	}
	if req.Platform != nil && !slices.Contains(platforms, *req.Platform) {
		return errInvalidField("The platform field must be one of web, ios or android.")
	}
	search := ""
	if req.Search != nil {
		if len(*req.Search) > maxSearchLength {
			return errInvalidField("The search field must be at most %d characters.", maxSearchLength)
		}
		search = *req.Search
	}
	merchants := s.Catalog.List(product, search)
	out := make([]merchantJSON, len(merchants))
	for i, m := range merchants {
		out[i] = merchantJSON{ID: m.ID, Name: m.Name, Category: m.Category, Logo: s.Accounts.Merchant(m.ID).Logo}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// merchantLogo serves the generated SVG logo of a merchant.
func (s *Server) merchantLogo(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound("No merchant has this id.")
	}
	m, ok := s.Catalog.Get(id)
	if !ok {
		return errNotFound("No merchant has this id.")
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(merchant.LogoSVG(m))
	return nil
}
