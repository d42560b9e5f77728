package refshop

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's Chromium, which CI installs.
const chromiumPath = "/usr/bin/chromium"

// newBrowser starts headless Chromium for the test. Without Chromium the
// test is skipped, except on CI where it fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is required on CI: %v", err)
		}
		t.Skipf("skipping the browser test: no Chromium at %s (%v)", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(browser); err != nil { // starts the browser, outside any step's timeout
		t.Fatalf("starting Chromium: %v", err)
	}
	return browser
}

// newTab opens a tab in a browser context of its own, with its own cookies.
func newTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil { // opens the tab outside any step's timeout
		t.Fatalf("opening a tab: %v", err)
	}
	return tab
}

// stepTimeout is generous: the tests share a busy machine.
const stepTimeout = 30 * time.Second

// do runs browser actions in the tab.
func do(t *testing.T, tab context.Context, name string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// read runs one browser action that reads a value.
func read[T any](t *testing.T, tab context.Context, name string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// fillSignin types the credentials into the sign-in page and waits for
// its script to fill js_proof.
func fillSignin(t *testing.T, tab context.Context, base, email string) {
	t.Helper()
	do(t, tab, "sign-in page",
		chromedp.Navigate(base+"/signin"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), demoPassword),
		chromedp.Poll[chromedp.Void](`document.querySelector('#js_proof').value !== ''`),
	)
	challenge := read(t, tab, "challenge", chromedp.AttributeValue(chromedp.ID("signin-form"), "data-challenge"))
	proof := read(t, tab, "js_proof", chromedp.Value(chromedp.ID("js_proof")))
	if want := jsProof(challenge.Value); proof != want {
		t.Fatalf("the page's script computed js_proof %q, the server wants %q", proof, want)
	}
}

// TestBrowserSignIn drives Chromium through the real pages: ada signs in
// (the page's script fills js_proof) and reads page 1 of her orders; otp@
// signs in with the code read from the test mailbox.
func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)
	ts, _ := newTestShop(t)

	t.Run("ada reads her orders", func(t *testing.T) {
		ada := getUser(t, ts, "ada@refshop.example")
		tab := newTab(t, browser)
		fillSignin(t, tab, ts.URL, "ada@refshop.example")
		do(t, tab, "sign in",
			chromedp.Click(chromedp.ID("signin-submit")),
			chromedp.WaitVisible(chromedp.ID("account-name")),
		)
		if name := read(t, tab, "name", chromedp.Text(chromedp.ID("account-name"))); name != "Ada Lovelace" {
			t.Fatalf("account name %q", name)
		}
		do(t, tab, "orders page 1",
			chromedp.Click(chromedp.ID("nav-orders")),
			chromedp.WaitVisible(chromedp.ID("orders")),
		)
		numbers := read(t, tab, "order numbers",
			chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('tr.order')).map(r => r.dataset.orderNumber)`))
		if len(numbers) != 10 {
			t.Fatalf("page 1 lists %d orders, want 10", len(numbers))
		}
		for i, n := range numbers {
			if n != ada.Orders[i].Number {
				t.Fatalf("row %d is %s, want %s", i, n, ada.Orders[i].Number)
			}
		}
		if total, want := read(t, tab, "first total", chromedp.Text(chromedp.CSS("tr.order .order-total"))), money(ada.Orders[0].TotalCents); total != want {
			t.Fatalf("first total %q, want %q", total, want)
		}
		if next := read(t, tab, "next link", chromedp.AttributeValue(chromedp.CSS(`a[rel="next"]`), "href")); next.Value != "/orders?page=2" {
			t.Fatalf("next link %+v, want /orders?page=2", next)
		}
	})

	t.Run("otp signs in with the mailed code", func(t *testing.T) {
		tab := newTab(t, browser)
		fillSignin(t, tab, ts.URL, "otp@refshop.example")
		do(t, tab, "password",
			chromedp.Click(chromedp.ID("signin-submit")),
			chromedp.WaitVisible(chromedp.ID("code")),
		)
		mailbox := newTab(t, browser)
		do(t, mailbox, "mailbox",
			chromedp.Navigate(ts.URL+"/mailbox?to=otp@refshop.example"),
			chromedp.WaitVisible(chromedp.CSS(".message-body")),
		)
		body := read(t, mailbox, "message", chromedp.Text(chromedp.CSS(".message-body"))) // the newest
		m := regexp.MustCompile(`\b(\d{6})\b`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no code in the message %q", body)
		}
		do(t, tab, "code",
			chromedp.SendKeys(chromedp.ID("code"), m[1]),
			chromedp.Click(chromedp.ID("verify-submit")),
			chromedp.WaitVisible(chromedp.ID("account-email")),
		)
		if email := read(t, tab, "e-mail", chromedp.Text(chromedp.ID("account-email"))); email != "otp@refshop.example" {
			t.Fatalf("signed in as %q", email)
		}
	})
}
