package txnindex

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShellWord: bash reads ShellWord(s) back as the one word s, whatever
// s holds, and running it runs nothing.
func TestShellWord(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{"kafka:9092", "k1:9092,k2:9092", "a b", "$(touch x)", "it's", `"$BOOTSTRAP"`, "`id`", "x;y", "", "\\", "a\nb"} {
		out, err := exec.Command(bash, "-c", `printf '<%s>' `+ShellWord(s)).Output()
		if err != nil || string(out) != "<"+s+">" {
			t.Errorf("ShellWord(%q) = %s: bash read %q (%v)", s, ShellWord(s), out, err)
		}
	}
	if w := ShellWord("kafka-1.example.com:9092"); w != "kafka-1.example.com:9092" {
		t.Errorf("a plain host:port quoted: %s", w)
	}
}

// TestCommandsParseInBash: the commands of a diagnosis without a bootstrap
// carry BootstrapVar (never a <placeholder>, which bash reads as a
// redirection) and parse under bash -n after the guard line.
func TestCommandsParseInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	l := newLog().txn(p1, 1).commit(p1).txn(p2, 3).plain(-1, 1).build()
	d := l.Diagnose(DiagnoseOptions{Position: -1})
	if len(d.OpenTransactions) == 0 || !d.usesBootstrapVar() {
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
	if !strings.Contains(d.Runbook(), "set it to your brokers first") {
		t.Errorf("the runbook does not say to set BOOTSTRAP:\n%s", d.Runbook())
	}
}
