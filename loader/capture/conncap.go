package capture

import (
	"fmt"

	"github.com/google/gopacket"

	"github.com/txnscope/txnscope/txnindex"
)

// maxConns bounds the TCP connections a capture's read follows. Each
// costs about 1.4 KB until the end of the read (tcpassembly's state, the
// stream's and its decoder's), whatever it carries: a capture of nothing
// but SYNs from distinct ports, 80 bytes each, would take 18 times its
// size. A consumer's capture holds a few connections per broker, a broker's
// a few thousand; past the bound the packets of new connections are
// counted, not decoded, and the read says so (reportSkipped).
var maxConns = 20_000 // a variable for TestConnectionsBounded

// lookup reports whether direction k (its network and transport flows)
// was seen before, and whether its packets are decoded: those of a
// direction seen, of the other half of a connection followed, or of a new
// connection while fewer than maxConns are.
func (f *factory) lookup(k [2]gopacket.Flow) (seen, follow bool) {
	if _, seen = f.begun[k]; seen {
		return true, true
	}
	if _, ok := f.begun[[2]gopacket.Flow{k[0].Reverse(), k[1].Reverse()}]; ok {
		return false, true // the other half of a connection followed
	}
	if f.followed >= maxConns {
		return false, false
	}
	f.followed++
	return false, true
}

// skip counts a packet of a connection past maxConns, noting where the
// first was.
func (f *factory) skip(g *guard, k [2]gopacket.Flow) {
	if f.skipped++; f.skipped == 1 {
		f.skippedAt = &FormatError{File: f.cap.Name, Offset: g.start,
			Where: k[0].Src().String() + ":" + k[1].Src().String() + "->" + k[0].Dst().String() + ":" + k[1].Dst().String(),
			Msg:   g.what()}
	}
}

// reportSkipped says what maxConns left out, at its first packet.
func (f *factory) reportSkipped() {
	fe := f.skippedAt
	if fe == nil {
		return
	}
	fe.Msg = fmt.Sprintf("%s: a TCP connection past the %s a capture's read follows (a bound on its memory): not decoded, nor is any later new one (%s skipped); "+
		"filter the capture to the consumer's connections first (by host or port)",
		fe.Msg, txnindex.Count(int64(maxConns)), txnindex.Plural(f.skipped, "packet", "packets"))
	f.cap.report(fe)
}

// maxWaitingPages bounds the out-of-order data tcpassembly holds per
// connection while it waits for a missing segment (its pages are 1,900
// bytes): past about 7 MiB the segment is taken as lost, the gap skipped
// and reported, and the stream goes on, as Wireshark's "previous segment
// not captured".
//
// maxWaitingPagesTotal bounds them over all connections: a page is taken
// whatever the packet carries, so a connection's 4,096 cost 8 MB for
// 290 KB of one-byte packets, and the 20,000 connections a read follows
// could each hold as many (4 MB of such packets over 60,000 connections
// took 143 MB). Past it, each connection that gets a packet lets go of
// its oldest gap, as at its own bound.
const maxWaitingPages = 4096

var maxWaitingPagesTotal = 4 * maxWaitingPages // a variable for TestWaitingPagesBoundedOverConnections
