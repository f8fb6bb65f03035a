package capture

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestProblemsCapped: each stream's problems were bounded, but not the
// capture's: 300,000 connections of three packets each (68 MB) gave
// 600,000 problems, an 81 MB refusal of the upload and 90 MB of inspect
// text; a raw capture gave one per damaged record. The capture keeps the
// first maxProblems and a last one that counts the rest from where the
// first of them was; the count of what a capture holds says them all.
func TestProblemsCapped(t *testing.T) {
	conns := func(n int) []byte {
		var all []byte
		for i := range n {
			c := newConv(t)
			c.cport = uint16(1024 + i)
			c.pkts, c.times, c.fromClient, c.streamOff = nil, nil, nil, nil
			c.segment(true, nil, true, false, false)
			c.segment(false, nil, true, true, false)
			c.segment(true, binary.BigEndian.AppendUint32(nil, 1<<31-1), false, true, false)
			p := c.pcap()
			if i > 0 {
				p = p[24:] // one file header
			}
			all = append(all, p...)
		}
		return all
	}
	raw := func(n int) []byte {
		b := []byte(RawMagic)
		for range n {
			rec := make([]byte, 26)
			binary.BigEndian.PutUint16(rec[16:], 100) // a connection name longer than the record
			b = binary.BigEndian.AppendUint32(b, 26)
			b = append(b, rec...)
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		data     []byte
		read     func([]byte) (*Capture, error)
		problems int // all of them
	}{
		{"pcap of 400 connections: every problem listed", conns(400), func(b []byte) (*Capture, error) { return Read(bytes.NewReader(b), "c.pcap") }, 800},
		{"pcap of 1,500 connections: the first listed, the rest counted", conns(1500), func(b []byte) (*Capture, error) { return Read(bytes.NewReader(b), "c.pcap") }, 3000},
		{"raw capture of 2,500 damaged records", raw(2500), func(b []byte) (*Capture, error) { return ReadRaw(bytes.NewReader(b), "c.txnscap") }, 2500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.read(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			listed := min(tc.problems, maxProblems)
			want := listed
			if tc.problems > maxProblems {
				want++
				last := c.Problems[len(c.Problems)-1].Error()
				if !strings.Contains(last, txnindex.Count(int64(tc.problems-maxProblems))+" more problems not listed") || !strings.Contains(last, "byte 0x") {
					t.Errorf("last problem %q: want the rest counted, at the byte of the first of them", last)
				}
			}
			if len(c.Problems) != want {
				t.Errorf("%d problems listed, want %d", len(c.Problems), want)
			}
			if err := c.NoFetch(); err == nil || !strings.Contains(err.Error(), txnindex.Count(int64(tc.problems))+" problems reported") {
				t.Errorf("NoFetch: %v, want %d problems counted", err, tc.problems)
			}
		})
	}
}
