package cli

import (
	"context"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// The serve command run as main runs it, for the tests that hold its
// answers against the other commands' (one_answer_test.go) or drive its
// flags (hostile_live_test.go); the server's own tests are package
// server's.

// served is a real server started by run, as main does, on a loopback port.
type served struct {
	addr      string
	out, errb *syncBuffer
}

// startServe runs "server serve ARGS" and waits until it listens. The demos
// are loaded; the 1M-batch one is left out unless ARGS ask for it.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	s := &served{out: &syncBuffer{}, errb: &syncBuffer{}}
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--big=false"}, args...)
	s.addr = testfixture.StartServing(t, s.errb, func(ctx context.Context, ready func(string)) int {
		return run(ctx, all, &env{stdout: s.out, stderr: s.errb, ready: ready})
	}).Addr
	return s
}

func (s *served) url(p string) string { return "http://" + s.addr + p }

// The HTTP helpers the tests here share with server's and e2e's.
var (
	do          = testfixture.Do
	getPage     = testfixture.GetPage
	getJSONInto = testfixture.GetJSONInto
)
