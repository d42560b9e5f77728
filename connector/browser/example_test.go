package browser_test

import (
	"context"
	"log"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector/browser"
)

// A connector logs a user in, reads their orders and keeps the cookies for
// the next run. A failing step leaves a masked screenshot in ScreenshotDir.
func Example() {
	ctx := context.Background()
	email, password := "ann@example.com", "hunter2"

	pool, err := browser.NewPool(ctx, browser.Options{ScreenshotDir: "/var/lib/hitch/screenshots"})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	s, err := pool.NewSession(ctx, browser.SessionOptions{Label: "refshop/login", Secrets: []string{password}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	var orders []string
	err = s.Run(ctx, "login",
		browser.Navigate("https://refshop.example/login"),
		chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#orders")),
		browser.Texts("#orders .order-id", &orders),
	)
	if err != nil {
		log.Fatal(err) // names the step; never holds the password
	}
	state, err := s.SaveState(ctx) // seal it; pass it as SessionOptions.State next time
	if err != nil {
		log.Fatal(err)
	}
	_ = state
}
