package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestClusterDiagnose: `diagnose --bootstrap` with no path scans the whole
// kfake cluster: JSON with one entry per partition (clear ones at lag 0),
// the open transactions named with their transactional ids, first offsets
// and coordinator state, offsets equal to the broker's own ListOffsets;
// the text ranks the hanging partition first, then the open one; exit 3.
func TestClusterDiagnose(t *testing.T) {
	f := testfixture.NewCluster(t)
	bootstrap := strings.Join(f.Addrs, ",")
	later := time.Now().Add(time.Hour).Format(time.RFC3339)
	code, out, errOut := runArgs(t, "diagnose", "--bootstrap", bootstrap, "--format", "json", "--now", later)
	if code != exitHanging {
		t.Fatalf("json: exit %d, stderr %s", code, errOut)
	}
	var v struct {
		Partitions []struct {
			Topic            string `json:"topic"`
			Partition        int32  `json:"partition"`
			HighWatermark    int64  `json:"high_watermark"`
			LastStableOffset int64  `json:"last_stable_offset"`
			LSOLagOffsets    int64  `json:"lso_lag_offsets"`
			Hanging          bool   `json:"hanging"`
			Open             []struct {
				TransactionalID  string `json:"transactional_id"`
				CoordinatorState string `json:"coordinator_state"`
				FirstOffset      int64  `json:"first_offset"`
				State            string `json:"state"`
			} `json:"open_transactions"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	hwm, lso := f.Offsets(t)
	if len(v.Partitions) != len(hwm) {
		t.Fatalf("%d partitions, the broker has %d", len(v.Partitions), len(hwm))
	}
	for i, p := range v.Partitions {
		key := fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		if p.HighWatermark != hwm[key] || p.LastStableOffset != lso[key] || p.LSOLagOffsets != hwm[key]-lso[key] {
			t.Errorf("%s: hwm %d lso %d lag %d, the broker says %d %d", key, p.HighWatermark, p.LastStableOffset, p.LSOLagOffsets, hwm[key], lso[key])
		}
		if i < len(f.Open) {
			o := f.Open[i] // ranked: the hanging one first, then the other
			if p.Topic != o.Topic || p.Partition != o.Partition || len(p.Open) != 1 || p.Open[0].FirstOffset != o.First || p.Open[0].TransactionalID != o.TxnID {
				t.Errorf("rank %d: %+v, want %s-%d held by %s from %d", i, p, o.Topic, o.Partition, o.TxnID, o.First)
			}
			if p.Hanging != (i == 0) {
				t.Errorf("%s: hanging %v", key, p.Hanging)
			}
		} else if p.LSOLagOffsets != 0 || len(p.Open) != 0 {
			t.Errorf("%s ranked %d: lag %d, %d open", key, i, p.LSOLagOffsets, len(p.Open))
		}
	}
	if len(v.Partitions) > 1 && (v.Partitions[1].Open[0].CoordinatorState != "Ongoing" || v.Partitions[0].Open[0].State != "hanging") {
		t.Errorf("states: %+v / %+v", v.Partitions[0].Open, v.Partitions[1].Open)
	}

	code, text, errOut := runArgs(t, "diagnose", "--bootstrap", bootstrap, "--now", later)
	if code != exitHanging {
		t.Fatalf("text: exit %d, stderr %s", code, errOut)
	}
	iHang, iOpen, iClear := strings.Index(text, "stuck-orders"), strings.Index(text, "slow-billing"), strings.Index(text, "audit-0")
	if iHang < 0 || iOpen < iHang || (iClear >= 0 && iClear < iOpen) || !strings.Contains(text, "hanging") {
		t.Errorf("text not ranked (hanging %d, open %d, clear %d):\n%s", iHang, iOpen, iClear, text)
	}

	// Only billing: the open transaction is not hanging, exit 0.
	code, out, errOut = runArgs(t, "diagnose", "--bootstrap", bootstrap, "--topics", "^billing$", "--format", "json")
	if code != 0 || strings.Contains(out, `"orders"`) || !strings.Contains(out, "slow-billing") {
		t.Errorf("--topics: exit %d, stderr %s, out %s", code, errOut, out)
	}
	if code, _, errOut := runArgs(t, "diagnose", "--bootstrap", bootstrap, "--topics", "("); code != 2 {
		t.Errorf("bad --topics: exit %d %s", code, errOut)
	}
}

// TestClusterDiagnoseUnreachable: a bootstrap nobody listens on fails the
// scan within the dial timeout with an error that says so (exit 1), and
// --topics or --internal without cluster mode is a usage error.
func TestClusterDiagnoseUnreachable(t *testing.T) {
	start := time.Now()
	code, _, errOut := runArgs(t, "diagnose", "--bootstrap", "127.0.0.1:1", "--dial-timeout", "500ms")
	if code != 1 || !strings.Contains(errOut, "unreachable") || time.Since(start) > 20*time.Second {
		t.Errorf("exit %d after %v: %s", code, time.Since(start), errOut)
	}
	if code, _, errOut := runArgs(t, "diagnose", "--demo", "stuck-lso", "--topics", "x"); code != 2 || !strings.Contains(errOut, "--topics") {
		t.Errorf("--topics with --demo: exit %d %s", code, errOut)
	}
}

// TestClusterDiagnoseFlags: diagnose --bootstrap takes watch's SASL flags
// (a SCRAM cluster scanned with the password from a file; a wrong password
// fails with exit 1 and is not printed), and --internal adds the internal
// topics a scan otherwise leaves out.
func TestClusterDiagnoseFlags(t *testing.T) {
	const pass = "s3cret-scram-pass"
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(3, "orders"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", pass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// kfake flags a topic internal by this config, as Kafka flags
	// __consumer_offsets and __transaction_state.
	if err := c.CreateTopic("__consumer_offsets", 2, map[string]string{"kfake.is_internal": "true"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	passFile := func(name, p string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(p+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := []string{"diagnose", "--bootstrap", strings.Join(c.ListenAddrs(), ","), "--dial-timeout", "2s",
		"--sasl-mechanism", "scram-sha-256", "--sasl-user", "ops", "--format", "json"}
	topics := func(args ...string) map[string]int {
		t.Helper()
		code, out, errOut := runArgs(t, append(base, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %s", args, code, errOut)
		}
		var v struct {
			Partitions []struct {
				Topic string `json:"topic"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		n := map[string]int{}
		for _, p := range v.Partitions {
			n[p.Topic]++
		}
		return n
	}
	good := passFile("pass", pass)
	if got := topics("--sasl-password-file", good); len(got) != 1 || got["orders"] != 3 {
		t.Errorf("without --internal: %v, want orders' 3 partitions only", got)
	}
	if got := topics("--sasl-password-file", good, "--internal"); len(got) != 2 || got["orders"] != 3 || got["__consumer_offsets"] != 2 {
		t.Errorf("--internal: %v, want orders' 3 and __consumer_offsets' 2", got)
	}
	code, out, errOut := runArgs(t, append(base, "--sasl-password-file", passFile("wrong", "not-the-password"))...)
	if code != 1 || !strings.Contains(errOut, "authentication failed") || strings.Contains(out+errOut, "not-the-password") {
		t.Errorf("wrong password: exit %d, stderr %q", code, errOut)
	}
}
