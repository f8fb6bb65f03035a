package api

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestContractOffsets reads records the encoder wrote at the exported
// offsets (contract.go, which the browser's static/js/contract.js is
// generated from) and checks every field: an encoder that moves a field
// without its constant fails here.
func TestContractOffsets(t *testing.T) {
	b := newBuilder("t")
	b.data(-1, 2, false)
	b.data(7, 3, true)
	b.marker(7, txnindex.ControlAbort)
	b.next += 4 // offsets the cleaner removed: a gap decision
	b.data(8, 2, true)
	b.marker(8, txnindex.ControlCommit)
	b.data(9, 2, true) // open
	l := txnindex.Build(&b.p)
	li := newLaneInfo(l)
	f64 := func(r []byte, at int) int64 { return int64(math.Float64frombits(binary.LittleEndian.Uint64(r[at:]))) }
	seen := map[byte]bool{}
	for _, iso := range []txnindex.Isolation{txnindex.ReadCommitted, txnindex.ReadUncommitted} {
		for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: iso}) {
			r := appendDecision(nil, &laneCursor{li: li}, &d)
			if len(r) != DecisionSize {
				t.Fatalf("record of %d bytes, contract says %d", len(r), DecisionSize)
			}
			wantLane, wantTS, wantFlags := uint16(LaneGap), int64(-1), byte(0)
			if bt := d.Batch; bt != nil {
				wantLane, wantTS = li.laneOf(bt), bt.MaxTimestamp
				for _, fl := range []struct {
					on  bool
					bit byte
				}{{bt.IsTransactional(), FlagTransactional}, {bt.IsControl(), FlagControl}, {bt.IsCommitMarker(), FlagCommit}, {bt.IsAbortMarker(), FlagAbort}} {
					if fl.on {
						wantFlags |= fl.bit
					}
				}
			}
			if d.Txn != nil && d.Txn.State == txnindex.TxnOpen {
				wantFlags |= FlagTxnOpen
			}
			got := []int64{f64(r, DecFrom), f64(r, DecTo), int64(int32(binary.LittleEndian.Uint32(r[DecBatch:]))), int64(int32(binary.LittleEndian.Uint32(r[DecTxn:]))),
				int64(binary.LittleEndian.Uint16(r[DecLane:])), int64(r[DecVerdict]), int64(r[DecCause]), int64(r[DecUncommitted]), int64(r[DecFlags]), f64(r, DecMaxTimestamp)}
			want := []int64{d.From, d.To, int64(d.BatchIndex), int64(li.txnIndex(d.Txn)), int64(wantLane), int64(d.Verdict), int64(d.Cause), int64(d.Uncommitted), int64(wantFlags), wantTS}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s decision [%d,%d]: field %d reads %d at its contract offset, want %d", iso, d.From, d.To, i, got[i], want[i])
				}
			}
			seen[r[DecFlags]] = true
			if d.Batch == nil {
				seen[0xff] = true
			}
		}
	}
	// The log must exercise what is checked: a gap, both markers, an open
	// transaction.
	if !seen[0xff] || !seen[FlagTransactional|FlagControl|FlagCommit] || !seen[FlagTransactional|FlagControl|FlagAbort] || !seen[FlagTransactional|FlagTxnOpen] {
		t.Fatalf("the test log lacks a kind of decision: flags seen %v", seen)
	}

	recs := encodeTxns(l, newLaneInfo(l), 0, len(l.Txns))
	if len(recs) != len(l.Txns)*TxnSize || len(l.Txns) != 3 {
		t.Fatalf("%d bytes for %d transactions", len(recs), len(l.Txns))
	}
	for i, tx := range l.Txns {
		r := recs[i*TxnSize:]
		got := []int64{f64(r, TxnFirst), f64(r, TxnLastData), f64(r, TxnMarker), int64(binary.LittleEndian.Uint16(r[TxnLane:])), int64(r[TxnState]),
			int64(int16(binary.LittleEndian.Uint16(r[TxnEpoch:]))), int64(int16(binary.LittleEndian.Uint16(r[TxnMarkerEpoch:])))}
		want := []int64{tx.FirstOffset, tx.LastDataOffset, tx.MarkerOffset, int64(li.lane[tx.ProducerID]), int64(tx.State), int64(tx.ProducerEpoch), int64(tx.MarkerEpoch)}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("transaction %d: field %d reads %d at its contract offset, want %d", i, k, got[k], want[k])
			}
		}
	}

	for _, c := range []struct {
		kind   byte
		layout byte
	}{{FrameDecisions, DecisionLayout}, {FrameTxns, 0}} {
		h := frameHeader(c.kind, 7, 4096, 12)
		if len(h) != FrameHeaderSize || h[HeaderVersion] != Version || h[HeaderKind] != c.kind || h[HeaderLayout] != c.layout ||
			binary.LittleEndian.Uint32(h[HeaderGeneration:]) != 7 || binary.LittleEndian.Uint32(h[HeaderStart:]) != 4096 || binary.LittleEndian.Uint32(h[HeaderCount:]) != 12 {
			t.Fatalf("kind %d: header %v does not read back at the contract offsets", c.kind, h)
		}
	}
}
