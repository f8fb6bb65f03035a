package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestDecideCompareVariantsNDJSON: decide --compare-variants --format
// ndjson writes one object per offset with every variant's decision, the
// departures from Kafka's rule (the Java consumer) named, and a last
// object with each variant's counts. On the interleaved demo kafka-go and
// kafka-python deliver the five aborted records and the three markers.
func TestDecideCompareVariantsNDJSON(t *testing.T) {
	var so, se bytes.Buffer
	if code := run(context.Background(), []string{"decide", "--demo", "interleaved", "--compare-variants", "--format", "ndjson"}, &env{stdout: &so, stderr: &se}); code != exitOK {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	lines := strings.Split(strings.TrimSpace(so.String()), "\n")
	var row struct {
		Offset     int64             `json:"offset"`
		Decisions  map[string]string `json:"decisions"`
		Departures map[string]string `json:"departures"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &row); err != nil {
		t.Fatal(err)
	}
	if row.Offset != 2 || len(row.Decisions) != 6 || row.Decisions["java"] != "aborted" || row.Departures["kafka-go"] != "aborted_delivered" || row.Departures["kafkajs"] != "" {
		t.Errorf("offset 2: %s", lines[2])
	}
	var last struct {
		Counts []struct {
			Variant    string           `json:"variant"`
			Counts     map[string]int64 `json:"counts"`
			Departures map[string]int64 `json:"departures"`
		} `json:"variant_counts"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || len(last.Counts) != 6 {
		t.Fatalf("counts %q: %v", lines[len(lines)-1], err)
	}
	for _, c := range last.Counts {
		want := map[string]int64{}
		if c.Variant == "kafka-go" || c.Variant == "kafka-python" {
			want = map[string]int64{"aborted_delivered": 5, "control_delivered": 3}
		}
		if len(c.Departures) != len(want) || c.Departures["aborted_delivered"] != want["aborted_delivered"] || c.Departures["control_delivered"] != want["control_delivered"] {
			t.Errorf("%s departures %v, want %v", c.Variant, c.Departures, want)
		}
	}
	if n := len(lines) - 1; n != 17 {
		t.Errorf("%d offset rows, want 17", n)
	}
}

// TestDecideClientVariantsRefusals: --compare-variants decides a whole
// load: with --by-segment or --counts it is a usage error that says so, as
// is an unknown client.
func TestDecideClientVariantsRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"decide", "--compare-variants", "--by-segment", "x-0"},
		{"decide", "--demo", "interleaved", "--compare-variants", "--counts"},
		{"decide", "--demo", "interleaved", "--variant", "kafka-java"},
	} {
		var so, se bytes.Buffer
		if code := run(context.Background(), args, &env{stdout: &so, stderr: &se}); code == exitOK {
			t.Errorf("%v: exit 0", args)
		} else if !strings.Contains(se.String(), "--") {
			t.Errorf("%v: %s", args, se.String())
		}
	}
}

// TestDecideClientVariantsFromSnapshot: decide --from N with a client
// variant reads a partition directory from a producer snapshot, as the
// Java rules do, and writes exactly what --full-replay writes: kafkajs's
// aborted lists, refetches and positions depend only on the segments from
// the fetch on, as the broker's lists do.
func TestDecideClientVariantsFromSnapshot(t *testing.T) {
	const seg = 64 << 10
	variants := [][]string{
		{"--variant", "kafkajs"},
		{"--variant", "kafkajs", "--max-bytes", "3000"},
		{"--variant", "kafkajs", "--kafkajs-each-batch"},
		{"--variant", "kafka-go"},
		{"--variant", "kafka-python"},
	}
	aborted := 0
	for _, o := range []gen.LogOptions{{Seed: 1, HangingFrom: seg / 2}, {Seed: 3, HangingFrom: 3 * seg}} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes, o.Keyed = seg, 1024, 7*seg, true
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		second, _ := strconv.ParseInt(st.Segments[1][:20], 10, 64)
		for _, pos := range []int64{second - 1, second + (st.NextOffset-second)/3, second + (st.NextOffset-second)*2/3 + 1} {
			for _, v := range variants {
				args := append([]string{"--from", fmt.Sprint(pos)}, v...)
				text := decideOK(t, append(args, st.Dir)...)
				if full := decideOK(t, append(args, "--full-replay", st.Dir)...); uncommented(text) != uncommented(full) {
					t.Fatalf("seed %d, %v: differs from --full-replay:\n%s\nfull replay:\n%s", o.Seed, args, text, full)
				}
				aborted += strings.Count(text, "aborted record")
			}
		}
	}
	if aborted == 0 {
		t.Fatal("no client delivered an aborted record: the logs prove nothing")
	}
}
