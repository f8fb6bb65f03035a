package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
)

// TestDiagnoseBareSegmentTopicUnknown: a segment read alone is named by
// its base offset, not its topic: its commands name "$TOPIC" after the
// guard line, never --topic 00000000000000000000, and say why; the same
// file in its partition directory (orders-0) names orders. The upload
// path (input.OpenBytes) is the same.
func TestDiagnoseBareSegmentTopicUnknown(t *testing.T) {
	seg := testfixture.OpenTxnSegment(t)
	bare := filepath.Join(t.TempDir(), "00000000000000000000.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	testfixture.WriteFile(t, bare, b)
	at := testfixture.BrokerNow.Format(time.RFC3339)
	cases := []struct {
		name, path string
		unknown    bool
		topic      string // in the commands
	}{
		{"BareSegmentTopicUnknown", bare, true, present.TopicVar},
		{"SegmentInItsPartitionDirectory", seg, false, "orders"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, "diagnose", "--format", "json", "--now", at, tc.path)
			if code != exitHanging {
				t.Errorf("exit %d: %s", code, errOut)
			}
			var v struct {
				Partitions []struct {
					TopicUnknown bool `json:"topic_unknown"`
					PinnedBy     *struct {
						AbortCommand   string `json:"abort_command"`
						ByProducer     string `json:"abort_command_by_producer_id"`
						ConfirmCommand string `json:"confirm_command"`
						Discards       struct {
							PrintCommand string `json:"print_command"`
						} `json:"discards"`
					} `json:"pinned_by"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].PinnedBy == nil {
				t.Fatalf("json %v: %s", err, out)
			}
			p := v.Partitions[0]
			if p.TopicUnknown != tc.unknown {
				t.Errorf("topic_unknown %v", p.TopicUnknown)
			}
			for _, c := range []string{p.PinnedBy.AbortCommand, p.PinnedBy.ByProducer, p.PinnedBy.ConfirmCommand} {
				if !strings.Contains(c, "--topic "+tc.topic+" ") || strings.Contains(c, "00000000000000000000") {
					t.Errorf("command %q, want --topic %s", c, tc.topic)
				}
			}
			if pc := p.PinnedBy.Discards.PrintCommand; !strings.Contains(pc, "-t "+tc.topic+" ") {
				t.Errorf("print command %q", pc)
			}
			_, text, _ := runArgs(t, "diagnose", "--now", at, tc.path)
			if got := strings.Contains(text, `the topic is not known (a segment read alone is named by its base offset, not its topic): the commands below use "$TOPIC"`); got != tc.unknown {
				t.Errorf("topic note shown %v:\n%s", got, text)
			}
			if strings.Contains(text, "--topic 00000000000000000000") || strings.Contains(text, "-t 00000000000000000000") {
				t.Errorf("a file name as the topic:\n%s", text)
			}
		})
	}
	// An upload of the bare file: the same.
	c, err := input.OpenBytes("00000000000000000000.log", b)
	if err != nil {
		t.Fatal(err)
	}
	d := present.Diagnose(c.Partitions[0].Log, diagnosis.Options{Now: testfixture.BrokerNow, Position: -1})
	if !d.TopicUnknown || d.PinnedBy == nil || !strings.Contains(d.PinnedBy.AbortCommand, "--topic "+present.TopicVar+" ") {
		t.Errorf("upload: topic unknown %v, pinned by %+v", d.TopicUnknown, d.PinnedBy)
	}
}
