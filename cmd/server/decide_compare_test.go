package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
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

// TestDecideClientVariantsRefusals: the client variants decide a whole
// load: --by-segment, and --compare-variants with --counts, are usage
// errors that say so.
func TestDecideClientVariantsRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"decide", "--variant", "kafkajs", "--by-segment", "x-0"},
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
