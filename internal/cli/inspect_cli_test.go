package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestInspectDemo: inspect --demo works as decide's and diagnose's do, and
// prints the demo's producer snapshot as kafka-dump-log.sh does
// (DumpLogSegments.dumpProducerIdSnapshot), never in Go struct syntax, and
// without the temporary directory it was built in.
func TestInspectDemo(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var so, se bytes.Buffer
		if code := run(context.Background(), []string{"inspect", "--format", format, "--demo", "stuck-lso"}, &env{stdout: &so, stderr: &se}); code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, se.String())
		}
		out := so.String()
		// Producer 6 holds the open transaction from offset 3; producer
		// 5's last batch is offsets 6-7 with sequences 2-3.
		for _, want := range []string{
			"producerId: 6 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[3] lastTimestamp: 1767225600020 firstSequence: 0 lastSequence: 2 lastOffset: 5 offsetDelta: 2 timestamp: 1767225600020",
			"producerId: 5 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1767225600040 firstSequence: 2 lastSequence: 3 lastOffset: 7 offsetDelta: 1 timestamp: 1767225600040",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", format, want, out)
			}
		}
		if m := regexp.MustCompile(`\{[A-Z][A-Za-z]*:`).FindString(out); m != "" {
			t.Errorf("%s: Go struct syntax %q in\n%s", format, m, out)
		}
		if strings.Contains(out, os.TempDir()+"/txnscope-inspect-") {
			t.Errorf("%s: the temporary directory is printed:\n%s", format, out)
		}
	}
	for _, args := range [][]string{
		{"inspect", "--demo", "stuck-lso", "some/path"},
		{"inspect", "--demo", "nope"},
		{"inspect"},
	} {
		var so, se bytes.Buffer
		if code := run(context.Background(), args, &env{stdout: &so, stderr: &se}); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, se.String())
		}
	}
}

// TestInspectEntriesBounded: inspect of a broker-shaped partition lists at
// most --entries (20) .txnindex entries a segment in text and counts the
// rest, so that a production log's tens of thousands of aborted
// transactions do not bury the summary; --entries -1 lists them all, as
// the JSON always does.
func TestInspectEntriesBounded(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 1 << 20, BatchBytes: 512, TotalBytes: 3 << 20, HangingFrom: -1})
	if err != nil {
		t.Fatal(err)
	}
	inspectOut := func(args ...string) string {
		t.Helper()
		var so, se bytes.Buffer
		if code := run(context.Background(), append([]string{"inspect"}, append(args, st.Dir)...), &env{stdout: &so, stderr: &se}); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, se.String())
		}
		return so.String()
	}
	entry := regexp.MustCompile(`(?m)^    version: \d+ producerId: `)
	all := len(entry.FindAllString(inspectOut("--entries", "-1"), -1))
	segs := len(st.Segments)
	if all <= 20*segs {
		t.Fatalf("%d .txnindex entries in %d segments: the fixture does not need bounding", all, segs)
	}
	out := inspectOut()
	listed := len(entry.FindAllString(out, -1))
	more := regexp.MustCompile(`(?m)^    … and ([0-9,]+) more entr(?:y|ies) \(--entries -1 lists them\)$`).FindAllStringSubmatch(out, -1)
	counted := 0
	for _, m := range more {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		counted += n
	}
	if listed > 20*segs || len(more) == 0 || listed+counted != all {
		t.Fatalf("default: %d entries listed, %d counted in %d lines, of %d", listed, counted, len(more), all)
	}
}
