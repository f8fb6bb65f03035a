package loader

import (
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestBrokerMarkerAgrees checks brokerMarker, the shortcut for a marker laid
// out as the broker writes it, against the general decode (firstRecord,
// controlType, parseControl) on the broker's bytes and on every one-byte
// change of them, at several lengths: where the shortcut answers, the
// general decode gives the same type and epoch and no complaint.
func TestBrokerMarkerAgrees(t *testing.T) {
	broker := func(ct byte, epoch int32) []byte {
		return []byte{0x20, 0, 0, 0, 0x08, 0, 0, 0, ct, 0x0c, 0, 0,
			byte(epoch >> 24), byte(epoch >> 16), byte(epoch >> 8), byte(epoch), 0}
	}
	var bodies [][]byte
	for _, ct := range []byte{0, 1, 2, 3, 5} {
		for _, epoch := range []int32{0, 7, -1, 1 << 30, -1 << 31} {
			bodies = append(bodies, broker(ct, epoch))
		}
	}
	base := broker(1, 42)
	for i := range base {
		for _, v := range []byte{0, 1, 2, 0x0c, 0x20, 0x7f, 0x80, 0xff} {
			m := append([]byte(nil), base...)
			m[i] = v
			bodies = append(bodies, m)
		}
	}
	var all [][]byte
	for _, b := range bodies {
		all = append(all, b, b[:16], append(append([]byte(nil), b...), 0x99, 0x01))
		long := make([]byte, maxMarkerBytes+1)
		copy(long, b)
		all = append(all, long, long[:maxMarkerBytes])
	}
	fast := 0
	for _, body := range all {
		ct, epoch, ok := brokerMarker(body)
		if !ok {
			continue
		}
		fast++
		larger := len(body) > maxMarkerBytes
		rec, msg := firstRecord(body, larger)
		if msg != "" || larger {
			t.Fatalf("% x: shortcut gave %v %d, the general decode: %q (larger %v)", body, ct, epoch, msg, larger)
		}
		if want := controlType(rec.key, rec.keyNull); want != ct {
			t.Fatalf("% x: shortcut type %v, general %v", body, ct, want)
		}
		wct, wepoch, wmsg := parseControl(rec.key, rec.keyNull, rec.value, rec.valueNull)
		if wct != ct || wepoch != epoch || wmsg != "" {
			t.Fatalf("% x: shortcut %v %d, general %v %d %q", body, ct, epoch, wct, wepoch, wmsg)
		}
		if ct != txnindex.ControlAbort && ct != txnindex.ControlCommit {
			t.Fatalf("% x: shortcut answered a %v", body, ct)
		}
	}
	// The broker's own bytes (two types, five epochs) at three lengths
	// each, and the changes of the epoch's bytes and type that keep them
	// a marker, must take the shortcut.
	if fast < 30 {
		t.Fatalf("the shortcut answered %d bodies, want the broker's layouts (>= 30)", fast)
	}
}
