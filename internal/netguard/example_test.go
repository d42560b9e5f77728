package netguard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/netguard"
)

func ExamplePolicy_CheckURL() {
	ctx := context.Background()

	production := netguard.Policy{}
	for _, raw := range []string{
		"http://hooks.example.com/webhooks",
		"https://user:secret@hooks.example.com/webhooks",
		"https://10.0.0.5/webhooks",
		"https://[::ffff:127.0.0.1]/webhooks",
		"https://localhost/webhooks",
	} {
		_, err := production.CheckURL(ctx, raw)
		fmt.Println(err)
	}

	development := netguard.Policy{AllowPrivate: true}
	u, err := development.CheckURL(ctx, "http://localhost:8080/webhooks")
	fmt.Println(u, err)
	// Output:
	// url must use https
	// url must not contain a user name or password
	// url host is a private address (10.0.0.5)
	// url host is a loopback address (::ffff:127.0.0.1)
	// url host "localhost" is a local host name
	// http://localhost:8080/webhooks <nil>
}

func ExampleNewHTTPClient() {
	client := netguard.NewHTTPClient(netguard.Policy{}, 10*time.Second, 0)
	// Delivery through this client refuses blocked addresses at dial time
	// and returns redirects instead of following them.
	fmt.Println(client.Timeout)
	// Output: 10s
}
