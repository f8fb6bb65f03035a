package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
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
