package cli

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestDiagnoseLiveAsksTheBrokersTimeout: on a kfake broker whose
// transaction.max.timeout.ms is 1h, diagnose of one partition and of the
// whole cluster both judge the open transaction by the broker's 1h (read
// with DescribeConfigs), not Kafka's default 15m, unless
// --max-transaction-timeout says otherwise.
func TestDiagnoseLiveAsksTheBrokersTimeout(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1),
		kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "3600000"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	testtool.StuckPartition(t, addr, "stuck")
	later := "--now=" + "2099-01-01T00:00:00Z"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one partition", []string{"diagnose", "--bootstrap", addr, "--topic", "stuck", "--partition", "0", later}, "longer than transaction.max.timeout.ms (1h, broker 0)"},
		{"the cluster", []string{"diagnose", "--bootstrap", addr, later}, "longer than transaction.max.timeout.ms (1h, broker 0)"},
		{"one partition, the flag", []string{"diagnose", "--bootstrap", addr, "--topic", "stuck", "--partition", "0", "--max-transaction-timeout", "30m", later}, "longer than transaction.max.timeout.ms (30m, configured)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errOut := runArgs(t, tc.args...)
			if !strings.Contains(out, tc.want) {
				t.Errorf("no %q in:\n%s%s", tc.want, out, errOut)
			}
		})
	}
}
