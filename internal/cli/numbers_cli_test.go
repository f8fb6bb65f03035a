package cli

import (
	"github.com/txnscope/txnscope/internal/testfixture"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLINumbers: numbers formatted one way everywhere, CLI
// included. The text of decide --counts, diagnose, inspect and decide's
// header, over partitions holding one record, one batch, one open
// transaction and a batch of 2^31 offsets, says "1 record", "1 batch", "1
// offset" (never "1 records"), and writes counts past 999 with thousands
// separators (txnindex.Count).
func TestCLINumbers(t *testing.T) {
	now := time.Now().UnixMilli()
	dir := testfixture.WriteShapeDir(t, "one", 0, 1, []testfixture.Batch{{Base: 0, PID: 7, Epoch: 0, Txn: true, Ctrl: -1, N: 1, TS: now - 60_000}}, 0, nil)
	hdir := filepath.Join(dir, "holes-0")
	if err := os.Mkdir(hdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hdir, "00000000000000000000.log"), testfixture.HoledBatch(0, math.MaxInt32, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, args := range [][]string{
		{"decide", "--counts", "--topic", "one", dir},
		{"decide", "--counts", "--topic", "holes", dir},
		{"decide", "--topic", "one", dir},
		{"diagnose", "--topic", "one", "--partition", "0", dir},
		{"inspect", dir},
	} {
		code, out, errOut := runArgs(t, args...)
		if code != 0 && code != 3 {
			t.Fatalf("%v: code %d: %s", args, code, errOut)
		}
		t.Logf("%v:\n%s", args, out)
		all.WriteString(out)
	}
	out := all.String()
	for _, want := range []string{"1 record in 1 batch", "offsets without a record         2,147,483,647", ", 1 offset behind the high watermark",
		"1 batch, 1 record,", "1 transaction (1 open), 1 producer", "1 batch,"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	nouns := `(records|batches|offsets|transactions|producers|entries|fetches|bytes|partitions|markers)\b`
	if m := regexp.MustCompile(`(^|[^0-9,.])1 `+nouns).FindAllString(out, -1); m != nil {
		t.Errorf("singular counts with a plural noun: %q", m)
	}
	if m := regexp.MustCompile(`\b[0-9]{4,} `+nouns).FindAllString(out, -1); m != nil {
		t.Errorf("counts without thousands separators: %q", m)
	}
}
