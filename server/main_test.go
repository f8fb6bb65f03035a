package server

import (
	"os"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestMain removes the directory the demos were written to once the tests
// end, as cli.Main does when the command ends: a test run leaves nothing in
// the temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	gen.RemoveDemoFiles()
	os.Exit(code)
}
