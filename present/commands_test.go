package present

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestCommandsParseInBash: the commands of a diagnosis without a bootstrap
// carry BootstrapVar (never a <placeholder>, which bash reads as a
// redirection) and parse under bash -n after the guard line.
func TestCommandsParseInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	l := testfixture.NewLog().Txn(p1, 1).Commit(p1).Txn(p2, 3).Plain(-1, 1).Build()
	d := Diagnose(l, diagnosis.Options{Position: -1})
	if len(d.OpenTransactions) == 0 || !usesBootstrapVar(d) {
		t.Fatalf("%+v", d)
	}
	for _, tr := range d.OpenTransactions {
		for _, c := range []string{tr.AbortCommand, tr.AbortByProducerCommand, tr.Discards.PrintCommand} {
			if !UsesBootstrapVar(c) || strings.Contains(c, "<") {
				t.Errorf("%q: want %s and no placeholder", c, BootstrapVar)
			}
			cmd := exec.Command(bash, "-n")
			cmd.Stdin = strings.NewReader(BootstrapGuard + "\n" + c)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("bash -n %q: %v %s", c, err, out)
			}
		}
	}
	if !strings.Contains(Runbook(d), "set it to your brokers first") {
		t.Errorf("the runbook does not say to set BOOTSTRAP:\n%s", Runbook(d))
	}
}
