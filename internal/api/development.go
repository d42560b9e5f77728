package api

import (
	"net/http"
	"strings"

	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/transaction"
)

type devLinkRequest struct {
	ExternalUserID *string `json:"external_user_id"`
	MerchantID     *int64  `json:"merchant_id"`
	CardSwitcher   *bool   `json:"card_switcher"`
	CardID         *string `json:"card_id"`
	Transactions   *struct {
		New     *bool `json:"new"`
		Updated *bool `json:"updated"`
	} `json:"transactions"`
	// Vault is Hitch's: simulate a vault login, whose vaulting succeeds
	// unless outcome is "failed".
	Vault *struct {
		Outcome *string `json:"outcome"`
	} `json:"vault"`
	Metadata map[string]string `json:"metadata"`
}

// devLinkAccount simulates a successful login that links an account, for
// the card switcher (card_switcher: true), for transactions or for the
// vault. It links through link.Service.Link, as a login in the hosted flow
// does.
func (s *Server) devLinkAccount(w http.ResponseWriter, r *http.Request) error {
	var req devLinkRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return err
	}
	merchantID, err := requireMerchantID(req.MerchantID)
	if err != nil {
		return err
	}
	cardSwitcher := req.CardSwitcher != nil && *req.CardSwitcher
	var product string
	vaultFails := false
	switch {
	case cardSwitcher && req.Transactions != nil:
		return errInvalidField("The card_switcher and transactions fields cannot be used together.")
	case req.Vault != nil && (cardSwitcher || req.Transactions != nil):
		return errInvalidField("The vault field cannot be used with card_switcher or transactions.")
	case req.Vault != nil:
		if err := validateCardID(req.CardID); err != nil {
			return err
		}
		if o := req.Vault.Outcome; o != nil && *o != "succeeded" && *o != "failed" {
			return errInvalidField("The vault.outcome field must be succeeded or failed.")
		}
		vaultFails = req.Vault.Outcome != nil && *req.Vault.Outcome == "failed"
		product = "vault"
	case cardSwitcher:
		if req.CardID == nil || strings.TrimSpace(*req.CardID) == "" {
			return errInvalidField("The card_id field is required when card_switcher is true.")
		}
		if err := validateCardID(req.CardID); err != nil {
			return err
		}
		product = "card_switcher"
	case req.Transactions != nil:
		if req.Transactions.New == nil {
			return errRequired("transactions.new")
		}
		if req.Transactions.Updated != nil && *req.Transactions.Updated && !*req.Transactions.New {
			return errInvalidField("The transactions.updated field needs transactions.new to be true.")
		}
		if req.CardID != nil {
			return errInvalidField("The card_id field is only allowed when card_switcher is true.")
		}
		product = "transaction_link"
	default:
		return errInvalidField("One of card_switcher (true), transactions or vault is required.")
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	p := link.Params{
		ClientID:       clientFrom(r.Context()).ID,
		ExternalUserID: externalUserID,
		MerchantID:     merchantID,
		Product:        product,
		CardID:         req.CardID,
		Metadata:       req.Metadata,
		VaultFails:     vaultFails,
	}
	if req.Transactions != nil {
		p.Transactions = &link.Transactions{New: *req.Transactions.New,
			Updated: req.Transactions.Updated != nil && *req.Transactions.Updated}
	}
	if _, err := s.Links.Link(r.Context(), p); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, success)
	return nil
}

// devRefreshTransactions serves POST /transactions/refresh in development:
// the simulator adds the next page of a linked account's history (what is
// new, else older orders) and moves on the stored orders that were on their
// way, as a merchant connector would on its next run.
func (s *Server) devRefreshTransactions(w http.ResponseWriter, r *http.Request) error {
	var req accountRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	externalUserID, merchantID, err := req.validate()
	if err != nil {
		return err
	}
	key := transaction.AccountKey{ClientID: clientFrom(r.Context()).ID, ExternalUserID: externalUserID, MerchantID: merchantID}
	if err := s.Simulator.Run(r.Context(), key, false); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, success)
	return nil
}

func (s *Server) devDisconnectAccount(w http.ResponseWriter, r *http.Request) error {
	var req accountRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	externalUserID, merchantID, err := req.validate()
	if err != nil {
		return err
	}
	if _, err := s.Accounts.Disconnect(r.Context(), clientFrom(r.Context()).ID, externalUserID, merchantID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, success)
	return nil
}
