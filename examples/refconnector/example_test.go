package refconnector_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
	"github.com/hitchdev/hitch/examples/refconnector"
)

// A connector process serves the reference shop's logins, refreshes, card
// tasks and detections until it is interrupted.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	pool, err := browser.NewPool(ctx, browser.Options{Contexts: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	err = connector.Run(ctx, connector.Config{
		Client: connector.NewClient("https://hitch.example", os.Getenv("HITCH_CONNECTOR_ID"), os.Getenv("HITCH_CONNECTOR_SECRET"), nil),
		Pool:   pool,
		Sites:  []connector.Site{refconnector.New("http://127.0.0.1:8090")},
	})
	if err != nil {
		log.Fatal(err)
	}
}
