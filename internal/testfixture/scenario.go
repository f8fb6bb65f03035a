package testfixture

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario"
)

// WriteScenario builds the scenario text (docs/scenarios.md; name is for
// its errors) into a new log directory under t.TempDir() and returns that
// directory and what was built: the partition directory is b.Dir in it.
func WriteScenario(t testing.TB, text, name string) (string, *scenario.Built) {
	t.Helper()
	sc, err := scenario.Parse(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return writeBuilt(t, sc)
}

// WriteScenarioFile is WriteScenario of the scenario file name.
func WriteScenarioFile(t testing.TB, name string) (string, *scenario.Built) {
	t.Helper()
	sc, err := scenario.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return writeBuilt(t, sc)
}

func writeBuilt(t testing.TB, sc *scenario.Scenario) (string, *scenario.Built) {
	t.Helper()
	b, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir, b
}
