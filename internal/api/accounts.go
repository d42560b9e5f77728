package api

import (
	"net/http"
	"time"

	"github.com/hitchdev/hitch/internal/account"
)

type merchantRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Logo string `json:"logo"`
}

type scopeJSON struct {
	Type string `json:"type"`
}

type accountJSON struct {
	Merchant   merchantRef `json:"merchant"`
	Connection struct {
		Status string      `json:"status"`
		Scopes []scopeJSON `json:"scopes"`
	} `json:"connection"`
	Lifecycle struct {
		Status *string `json:"status"`
	} `json:"lifecycle"`
	LastUserAction struct {
		AttemptedAt *time.Time `json:"attempted_at"`
		Status      *string    `json:"status"`
	} `json:"last_user_action"`
}

func (s *Server) renderAccount(a *account.Account) accountJSON {
	var out accountJSON
	out.Merchant = merchantRef(a.Merchant)
	out.Connection.Status = a.ConnectionStatus
	out.Connection.Scopes = make([]scopeJSON, len(a.Scopes))
	for i, sc := range a.Scopes {
		out.Connection.Scopes[i] = scopeJSON{Type: sc}
	}
	out.Lifecycle.Status = a.LifecycleStatus
	out.LastUserAction.AttemptedAt = a.LastActionAt
	out.LastUserAction.Status = a.LastActionStatus
	return out
}

func (s *Server) getAccounts(w http.ResponseWriter, r *http.Request) error {
	query := r.URL.Query()
	externalUserID, merchantID, oneMerchant, err := userMerchantQuery(query)
	if err != nil {
		return err
	}
	product := query.Get("type")
	if product != "" {
		if err := checkProduct(product, account.Products); err != nil {
			return err
		}
	}
	clientID := clientFrom(r.Context()).ID
	if oneMerchant {
		a, err := s.Accounts.Get(r.Context(), clientID, externalUserID, merchantID, product)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, s.renderAccount(a))
		return nil
	}
	// A listing rendered at the user's current accounts version is served
	// again as it is (internal/respcache); the version is read first, so a
	// listing is never cached under a version older than its data.
	var key string
	var version int64
	if s.cache != nil {
		userID, v, err := s.Accounts.Version(r.Context(), clientID, externalUserID)
		if err != nil {
			return err
		}
		key, version = "accounts\x00"+userID+"\x00"+product, v
		if body, ok := s.cache.Get(key, version); ok {
			writeRaw(w, body)
			return nil
		}
	}
	accounts, err := s.Accounts.List(r.Context(), clientID, externalUserID, product)
	if err != nil {
		return err
	}
	out := make([]accountJSON, len(accounts))
	for i, a := range accounts {
		out[i] = s.renderAccount(a)
	}
	if s.cache == nil {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	body, err := marshalJSON(out)
	if err != nil {
		return err
	}
	s.cache.Put(key, version, body)
	writeRaw(w, body)
	return nil
}

// accountRequest is the body of the endpoints that name one account.
type accountRequest struct {
	ExternalUserID *string `json:"external_user_id"`
	MerchantID     *int64  `json:"merchant_id"`
}

func (req *accountRequest) validate() (string, int64, error) {
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return "", 0, err
	}
	merchantID, err := requireMerchantID(req.MerchantID)
	return externalUserID, merchantID, err
}

func (s *Server) unlinkAccount(w http.ResponseWriter, r *http.Request) error {
	var req accountRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	externalUserID, merchantID, err := req.validate()
	if err != nil {
		return err
	}
	if err := s.Accounts.Unlink(r.Context(), clientFrom(r.Context()).ID, externalUserID, merchantID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, success)
	return nil
}
