package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/scenario"
)

// TestDiagnoseTieredTopicConfig: with the KRaft metadata log in the log
// dir, the topic's remote.storage.enable is listed among a tiered
// partition's evidence (KIP-405): set to true, or set to false after the
// segments were copied (KIP-950); no line when the topic has no such
// config.
func TestDiagnoseTieredTopicConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value *string
		want  string
	}{
		{"enabled", strPtr("true"), "__cluster_metadata sets remote.storage.enable=true for the topic (its ConfigRecord)"},
		{"disabled since", strPtr("false"), "__cluster_metadata sets remote.storage.enable=false for the topic now"},
		{"not set", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testfixture.TieredDir(t, true, [][2]int64{{7, 8000}})
			recs := []scenario.InternalRecord{scenario.TopicRecord("orders", scenario.TopicID("orders"))}
			if tc.value != nil {
				recs = append(recs, scenario.ConfigRecord(2, "orders", internaltopic.RemoteStorageEnableConfig, tc.value))
			}
			b, err := scenario.BuildInternal(scenario.ClusterMetadataTopic, 0, []scenario.InternalBatch{scenario.CoordinatorBatch(recs...)})
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			if err := scenario.WriteLogDir(tmp, b); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(tmp, b.Dir), filepath.Join(dir, b.Dir)); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runArgs(t, "diagnose", "--format", "json", "--now", testfixture.BrokerNow.Format(time.RFC3339), "--partition", "0", "--topic", "orders", dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var v struct {
				Partitions []struct {
					Tiered *struct {
						Evidence []string `json:"evidence"`
					} `json:"tiered_storage"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].Tiered == nil {
				t.Fatalf("%v: %s", err, out)
			}
			ev := strings.Join(v.Partitions[0].Tiered.Evidence, "\n")
			if tc.want != "" && !strings.Contains(ev, tc.want) || tc.want == "" && strings.Contains(ev, "remote.storage.enable") {
				t.Errorf("evidence:\n%s\nwant %q", ev, tc.want)
			}
		})
	}
}

func strPtr(s string) *string { return &s }
