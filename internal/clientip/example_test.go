package clientip_test

import (
	"fmt"
	"net/http"

	"github.com/hitchdev/hitch/internal/clientip"
)

func ExampleFromRequest() {
	// Hitch behind a load balancer at 10.0.0.1.
	trusted, err := clientip.ParseProxies("10.0.0.0/8")
	if err != nil {
		panic(err)
	}
	r, _ := http.NewRequest("GET", "http://hitch.example/healthz", nil)
	r.RemoteAddr = "10.0.0.1:41234"
	// The client claims to be 192.0.2.1; the load balancer appends the
	// address it was reached from.
	r.Header.Set("X-Forwarded-For", "192.0.2.1, 203.0.113.9")
	fmt.Println(clientip.FromRequest(r, trusted))

	// The same request straight from the client: the header is ignored.
	r.RemoteAddr = "203.0.113.9:41234"
	fmt.Println(clientip.FromRequest(r, trusted))
	// Output:
	// 203.0.113.9
	// 203.0.113.9
}
