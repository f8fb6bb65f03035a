// Package e2e holds the browser tests: each builds a server with
// server.New, serves its Handler (or runs it, as `txnscope serve` does),
// and drives headless Chromium over it with chromedp, checking the pages
// against the engine's answers. A test that exports a page or runs a
// command drives it through cli.Run. The package has no code besides its
// tests; `make test` runs them with the others (go test ./...), and
// `make screenshots` rewrites docs/screenshots from them.
package e2e
