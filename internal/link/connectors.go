package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/store"
)

// ReasonInterrupted: the connector logging the user in stopped answering,
// or none took the login in time; the user may try again.
const ReasonInterrupted = connector.ReasonInterrupted

// Routed is the Authenticator of a deployment with connectors: a login at a
// merchant that an online connector serves goes to connectors (the
// credentials sealed until one claims it, then only in its memory); any
// other goes to Fallback (the test logins in development, Unavailable in
// production).
type Routed struct {
	Work     *connector.Work
	Fallback Authenticator
}

// routedState is Routed's state between steps: the login's work id.
type routedState struct {
	Work string `json:"work"`
}

// Login implements Authenticator.
func (r *Routed) Login(ctx context.Context, a Attempt, c Credentials) (Step, error) {
	online, err := r.Work.Online(ctx, a.Merchant.ID)
	if err != nil {
		return Step{}, err
	}
	if !online {
		return r.Fallback.Login(ctx, a, c)
	}
	id, err := r.Work.StartLogin(ctx, connector.LoginParams{ClientID: a.Session.ClientID,
		ExternalUserID: a.Session.ExternalUserID, MerchantID: a.Merchant.ID, Product: a.Session.Product,
		Credentials: connector.UserCredentials{Username: c.Username, Password: c.Password}})
	if err != nil {
		return Step{}, err
	}
	return r.wait(ctx, a, id)
}

// Answer implements Authenticator.
func (r *Routed) Answer(ctx context.Context, a Attempt, state []byte, answer string) (Step, error) {
	var st routedState
	if err := json.Unmarshal(state, &st); err != nil || st.Work == "" {
		return r.Fallback.Answer(ctx, a, state, answer)
	}
	err := r.Work.Answer(ctx, st.Work, answer)
	if errors.Is(err, connector.ErrTransition) {
		// The connector gave up on the login meanwhile.
		return Step{Status: StatusFailed, Reason: ReasonInterrupted}, nil
	}
	if err != nil {
		return Step{}, err
	}
	return r.wait(ctx, a, st.Work)
}

// Linked ends a routed login the flow has linked: its first refresh is
// queued for a transaction_link.
func (r *Routed) Linked(ctx context.Context, a Attempt, step Step) error {
	if step.work == "" {
		return nil
	}
	if err := r.Work.Done(ctx, step.work); err != nil && !errors.Is(err, connector.ErrTransition) {
		return err
	}
	if a.Session.Product == productTransactionLink {
		return r.Work.EnqueueRefresh(ctx, a.Session.ClientID, a.Session.ExternalUserID, a.Merchant.ID)
	}
	return nil
}

// wait turns the login's next step into the flow's.
func (r *Routed) wait(ctx context.Context, a Attempt, id string) (Step, error) {
	wk, err := r.Work.Wait(ctx, id)
	if err != nil {
		return Step{}, err
	}
	state, err := json.Marshal(routedState{Work: id})
	if err != nil {
		return Step{}, err
	}
	var step Step
	switch wk.Status {
	case store.WorkOTPRequired:
		step = Step{Status: StatusOTPRequired, State: state}
	case store.WorkQuestionsRequired:
		step = Step{Status: StatusQuestionsRequired, State: state}
		if wk.Question != nil {
			step.Question = *wk.Question
		}
	case store.WorkWrongAnswer:
		// The challenge stands; a question is stored with the work.
		step = Step{Wrong: true, Status: StatusOTPRequired, State: state}
		if wk.Question != nil {
			step.Status, step.Question = StatusQuestionsRequired, *wk.Question
		}
	case store.WorkAuthenticated:
		step = Step{Status: StatusSuccess, work: id}
	case store.WorkPending, store.WorkClaimed, store.WorkAnswered:
		step = Step{Status: StatusPending, State: state}
	case store.WorkFailed:
		step = Step{Status: StatusFailed, Reason: ReasonInterrupted}
		if wk.Reason != nil && *wk.Reason != connector.ReasonAbandoned {
			step.Reason = *wk.Reason
		}
	default:
		return Step{}, fmt.Errorf("link: connector login in status %q", wk.Status)
	}
	return step, err
}

// Continue implements Continuer: it waits again for a login that was
// still under way.
func (r *Routed) Continue(ctx context.Context, a Attempt, state []byte) (Step, error) {
	var st routedState
	if err := json.Unmarshal(state, &st); err != nil || st.Work == "" {
		return Step{}, ErrChallenge
	}
	return r.wait(ctx, a, st.Work)
}
