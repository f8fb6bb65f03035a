package txnindex

import "testing"

// TestBatchClasses checks the table Consumer.batch reads a batch's class
// from against classify of the batch itself, for every flags value (every
// attribute byte, magic, control type and the epoch bits) and record
// counts none, one, several and negative: no header bit outside
// classIndex changes a decision.
func TestBatchClasses(t *testing.T) {
	for f := range 1 << 16 {
		for _, records := range []int32{-1, 0, 1, 7} {
			b := Batch{flags: uint16(f), Records: records, ProducerID: 1}
			for iso, want := range []Isolation{ReadUncommitted, ReadCommitted} {
				if got, want := batchClasses[iso][b.classIndex()], classify(&b, want); got != want {
					t.Fatalf("flags %#04x, %d records, %s: class %+v, want %+v", f, records, Isolation(iso), got, want)
				}
			}
		}
	}
}
