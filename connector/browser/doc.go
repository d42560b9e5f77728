// Package browser is the browser runtime of Hitch connectors: it drives
// headless Chromium to log in to merchant websites with a user's credentials.
//
// # Pool and sessions
//
// A [Pool] runs one Chromium process (Debian's /usr/bin/chromium by default)
// and hands out at most [Options.Contexts] sessions at a time; [Pool.NewSession]
// waits for a free slot for as long as its context allows. A [Session] is one
// browser context, like an incognito window: its cookies, storage and cache
// are its own and are never shared with another session, so one session serves
// one user's login. Close a session to dispose of its browser context and free
// its slot. If Chromium dies, the pool starts it again once; after that,
// NewSession returns an error.
//
// # Steps
//
// [Session.Run] runs a named step: chromedp actions under [Options.StepTimeout].
// A step that fails with a [Transient] error (a 5xx page from [Navigate], a
// page that did not load in time) is tried again up to [Options.Retries] times.
// When a step finally fails, Run saves a screenshot named
// <time>-<label>-<step>.png in [Options.ScreenshotDir] and returns a
// [*StepError] naming the step.
//
// # Secrets
//
// Passwords, OTPs, card numbers and CVVs given in [SessionOptions.Secrets] or
// [Session.AddSecret] never leave the package in an error, a log line or a
// screenshot. Errors have every occurrence replaced by "•••" (also URL- and
// JSON-escaped forms). Before a failure screenshot, a script in an isolated
// JavaScript world (out of reach of the page's own scripts) replaces every
// secret in text, attributes and input values, and blanks password, card and
// one-time-code fields, in the page and its same-origin frames and shadow
// roots; after the capture the page is put back as it was, so a connector can
// go on. Secrets drawn on a canvas or inside images cannot be masked, and a
// page that redraws itself between masking and capture could show one again,
// so ScreenshotDir must be as private as the credentials themselves: files
// are written with mode 0600.
//
// # State
//
// [Session.SaveState] serializes all cookies of the session's browser context
// as JSON. The bytes hold live session cookies: seal them before storing.
// [SessionOptions.State] restores them before the first navigation, so a later
// session starts logged in.
package browser
