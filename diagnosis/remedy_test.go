package diagnosis_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// TestRemedyInKafkaTerms: the diagnosis writes no command and names no flag
// of txnscope. A late transaction's remedy names the partition, the
// producer with its epochs, where the transaction starts and the records
// that survive; its reason says what would settle whether it hangs in
// Kafka's terms, or in the caller's words when it gives them.
func TestRemedyInKafkaTerms(t *testing.T) {
	// p2's transaction: 2-4, then p1's plain record, then 6-7; 20 minutes
	// later it is late (transaction.max.timeout.ms 15m plus 5m).
	l := testfixture.NewLog().Txn(p1, 1).Commit(p1).Txn(p2, 3).Plain(p1, 1).Txn(p2, 2).Build()
	now := time.UnixMilli(1_700_000_000_000 + 21*60_000)
	for _, tc := range []struct {
		name  string
		hints diagnosis.Hints
		says  string
	}{
		{"Kafka's terms", diagnosis.Hints{}, "(__transaction_state in the same log dir, or DescribeTransactions)"},
		{"the caller's words", diagnosis.Hints{Coordinators: "the coordinators' flag"}, "(__transaction_state in the same log dir, or the coordinators' flag)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diagnosis.Diagnose(l, diagnosis.Options{Now: now, Position: -1, Bootstrap: "k:9092", MaxTxnTimeout: 10 * time.Minute, Hints: tc.hints})
			if len(d.OpenTransactions) != 1 {
				t.Fatalf("open %+v", d.OpenTransactions)
			}
			r := d.OpenTransactions[0]
			if r.State != diagnosis.StateLate || !strings.Contains(r.Reason, tc.says) || strings.Contains(r.Reason, "--") {
				t.Errorf("%s: %q; want it to say %q and name no flag", r.State, r.Reason, tc.says)
			}
			if r.AbortCommand != "" || r.AbortByProducerCommand != "" || r.ConfirmCommand != "" || r.Discards.PrintCommand != "" {
				t.Errorf("the diagnosis wrote commands: %+v", r)
			}
			want := diagnosis.Remedy{Topic: "t", Partition: 0, Bootstrap: "k:9092",
				Abort: true, StartOffset: 2, ByProducer: true, ProducerID: p2, ProducerEpoch: 0, CoordinatorEpoch: 0,
				Print: []diagnosis.PrintRange{
					{OffsetRange: txnindex.OffsetRange{From: 2, To: 4}, Records: 3},
					{OffsetRange: txnindex.OffsetRange{From: 6, To: 7}, Records: 2}},
				ConfirmHanging: true, MaxTxnTimeout: 10 * time.Minute}
			if !reflect.DeepEqual(r.Remedy, want) {
				t.Errorf("remedy\n%+v\nwant\n%+v", r.Remedy, want)
			}
		})
	}
}
