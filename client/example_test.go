package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/hitchdev/hitch/client"
)

// Create a session for the SDK, then read the user's linked accounts,
// telling an unknown user apart from other errors.
func Example() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", "CLIENT_ID", "SECRET")

	cardID := "card-123"
	s, err := c.CreateSession(ctx, &client.CreateSessionRequest{
		Type:           "card_switcher",
		ExternalUserID: "user-1",
		CardID:         &cardID,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("hand this to the SDK:", s.Session != "")

	accounts, err := c.ListAccounts(ctx, "user-1", "card_switcher")
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.Code == "USER_NOT_FOUND":
		fmt.Println("no accounts yet")
	case err != nil:
		log.Fatal(err)
	default:
		for _, a := range accounts {
			fmt.Println(a.Merchant.Name, a.Connection.Status)
		}
	}
}
