package api

import (
	"context"
	"net/http"
	"time"
)

type status struct {
	Status string `json:"status"`
}

// healthz answers while the process is alive.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, status{Status: "ok"})
	return nil
}

// readyz answers 200 when the database is reachable and every migration
// this binary knows is applied.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	unavailable := func(msg string) error {
		return &Error{Status: http.StatusServiceUnavailable, Type: TypeAPIError, Code: CodeServiceUnavailable, Message: msg}
	}
	if err := s.Store.Ping(ctx); err != nil {
		return unavailable("The database is not reachable.")
	}
	applied, latest, err := s.Store.MigrationVersion(ctx)
	if err != nil || applied < latest {
		return unavailable("Database migrations are not applied.")
	}
	writeJSON(w, http.StatusOK, status{Status: "ready"})
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.OpenAPI)
	return nil
}

func (s *Server) jweKey(w http.ResponseWriter, r *http.Request) error {
	key, err := s.Keys.Current(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, key)
	return nil
}
