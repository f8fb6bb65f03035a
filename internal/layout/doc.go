// Package layout holds no code: its tests enforce the repository's layout rules
// over the whole repository, so that a file that grows past them fails
// `make test` instead of waiting for the next clean-up.
//
//   - No Go or JS file over 600 lines (generated files and testdata aside)
//     unless it stands in the test's allowlist, each entry with its reason.
//   - internal/cli, the command table, is flags and wiring: none of its
//     non-test files over 300 lines, nor any of server/'s; cmd/ holds
//     only the mains (no sync, no methods).
//   - Imports follow docs/architecture.md's table (imports_test.go).
//   - net/http/httptest is imported by _test.go files only (export uses the
//     api stream encoder, not a server over an in-memory pipe).
//   - The Layout table (docs/architecture.md, else README.md) names every
//     package directory, and every path it names exists.
//   - testdata/realdata/README.md lists every real file the tests read,
//     with its size, source repository, licence and what it is, and the
//     directory stays under 5 MB.
package layout
