// Package testtool finds the external programs tests drive (kcat, tshark,
// chromium). Outside CI a missing program skips the test; with CI=true it
// fails it, so a green CI run means the real tool ran.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Need returns the path of program name, or skips (fails under CI=true).
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required (CI=true): %v; run `make deps`", name, err)
	}
	t.Skipf("%s not installed (%v); run `make deps`", name, err)
	return ""
}

// NeedDir is Need for a directory of test inputs.
func NeedDir(t testing.TB, dir string) {
	t.Helper()
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("test input directory %s is required (CI=true)", dir)
	}
	t.Skipf("test input directory %s not present", dir)
}
