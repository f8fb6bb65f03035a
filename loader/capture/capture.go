// Package capture reads Kafka traffic captured with tcpdump, Wireshark or
// tshark (pcap and pcapng), reassembles each TCP connection, pairs requests
// with responses by correlation id, and decodes the Fetch exchanges: for
// every partition of every Fetch, the offset the consumer asked for, the
// batches the broker returned, the aborted-transaction list, the last stable
// offset and the high watermark. From those, txnindex can replay exactly
// what the consumer that received them delivered.
//
// Packets are read with gopacket's pcapgo and reassembled with tcpassembly.
// pcapgo trusts the lengths and options it reads, so it is handed only
// blocks that guard.go has read whole and checked as libpcap does; damage
// stops the read at the block's byte position and keeps what came before.
// TCP segments that were not captured leave gaps in a connection's bytes:
// the Kafka framing is followed across them, or resumed after them
// (stream.go), and a Fetch response cut by one keeps its batches before
// the gap (fetchprefix.go), as Wireshark keeps what arrived.
//
// The capture is decoded as it is read: each connection's bytes are framed
// as they arrive, and a response is decoded as soon as its last byte is
// captured, against its request, then its bytes are dropped; of a Fetch
// only the batch headers, the aborted list and the partition's fields
// stay. Memory follows what is decided and the messages in flight (at
// most maxFrame per direction, the frame in progress), not the capture's
// size.
//
// Linux "cooked" captures v2 (SLL2, link type 276), which gopacket 1.1.19
// does not know, are unwrapped here: the 20-byte header is skipped and the
// payload decoded by its protocol type. Kafka messages are decoded with
// franz-go's kmsg; only the request and response headers are framed by hand
// because kmsg decodes bodies, not frames.
//
// Which side is the client is found from the TCP handshake when it was
// captured, otherwise from the correlation ids (a client frame carries its
// id at bytes 4-8 after the size, a response at bytes 0-4), so captures
// started mid-connection and on any port work.
//
// The API is internal to txnscope.
package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/google/gopacket/tcpassembly"

	"github.com/txnscope/txnscope/txnindex"
)

// linkTypeLinuxSLL2 is DLT_LINUX_SLL2 (276). gopacket 1.1.19 keeps link
// types in a uint8, so pcapgo hands 276 over truncated to 20, a value no
// other link type uses.
const linkTypeLinuxSLL2 = layers.LinkType(276 & 0xff)

// maxFrame bounds one Kafka frame; a size field above it is damage (the
// broker's own socket.request.max.bytes default is 100 MiB).
const maxFrame = 256 << 20

// Capture is everything decoded from one capture file.
type Capture struct {
	Name      string
	Packets   int
	Conns     []*Conn
	Exchanges int      // request/response pairs matched
	Fetches   []*Fetch // in response time order, across connections
	Problems  []error  // damage that did not stop the read: the first maxProblems, then one counting the rest

	reported   int                 // problems reported, those not listed too
	firstLeft  *FormatError        // the first problem not listed
	ids        map[[16]byte]string // topic ids seen in Metadata responses
	apis       map[string]int      // exchanges matched, by API name
	unanswered int                 // Fetch requests whose response was not captured
}

// NoFetch returns nil if the capture holds a Fetch exchange, else an error
// that says plainly there is nothing to decide and what the capture holds
// instead: packets, connections, the Kafka exchanges by API, and Fetch
// requests whose responses were not captured.
func (c *Capture) NoFetch() error {
	if len(c.Fetches) > 0 {
		return nil
	}
	var held string
	switch {
	case c.Packets == 0:
		held = "it holds no packet"
	case len(c.Conns) == 0:
		held = fmt.Sprintf("its %s hold no TCP connection with data both ways", txnindex.Plural(c.Packets, "packet", "packets"))
	case c.Exchanges == 0:
		held = fmt.Sprintf("its %s hold %s but no Kafka request answered by a response", txnindex.Plural(c.Packets, "packet", "packets"), txnindex.Plural(len(c.Conns), "TCP connection", "TCP connections"))
	default:
		names := make([]string, 0, len(c.apis))
		for n := range c.apis {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			names[i] = fmt.Sprintf("%s %d", n, c.apis[n])
		}
		held = fmt.Sprintf("its %s hold %s and %s (%s), none a Fetch", txnindex.Plural(c.Packets, "packet", "packets"), txnindex.Plural(len(c.Conns), "TCP connection", "TCP connections"),
			txnindex.Plural(c.Exchanges, "Kafka exchange", "Kafka exchanges"), strings.Join(names, ", "))
	}
	if c.unanswered > 0 {
		verb := "have"
		if c.unanswered == 1 {
			verb = "has"
		}
		held += fmt.Sprintf("; %s %s no response in the capture (not captured, or sent after it ended)", txnindex.Plural(c.unanswered, "Fetch request", "Fetch requests"), verb)
	}
	if len(c.Problems) > 0 {
		held += fmt.Sprintf("; %s reported, the first: %v", txnindex.Plural(max(c.reported, len(c.Problems)), "problem", "problems"), c.Problems[0])
	}
	return fmt.Errorf("capture: %s: no Fetch exchange to decide: %s", c.Name, held)
}

// maxProblems bounds the problems a capture lists: each stream's are
// bounded (maxStreamProblems), but a capture of 300,000 connections of
// three packets each (68 MB) gave 600,000 of them, an 81 MB refusal of
// its upload.
const maxProblems = 1000

// report adds problems, listing the first maxProblems and counting the
// rest (closeReport says how many).
func (c *Capture) report(errs ...error) {
	for _, err := range errs {
		c.reported++
		if len(c.Problems) < maxProblems {
			c.Problems = append(c.Problems, err)
			continue
		}
		if fe, ok := err.(*FormatError); ok && c.firstLeft == nil {
			c.firstLeft = fe
		}
	}
}

// closeReport ends the list with a problem counting those not listed, at
// the first of them.
func (c *Capture) closeReport() {
	left := c.reported - len(c.Problems)
	if left <= 0 {
		return
	}
	fe := &FormatError{File: c.Name}
	if c.firstLeft != nil {
		fe.Where, fe.Offset = c.firstLeft.Where, c.firstLeft.Offset
	}
	fe.Msg = txnindex.Plural(left, "more problem", "more problems") + " not listed, the first of them here"
	c.Problems = append(c.Problems, fe)
}

// Conn is one reassembled TCP connection.
type Conn struct {
	Client, Server string // "ip:port"
	c2s, s2c       *direction
	dec            *connDecoder // nil until the client side is known
}

// FormatError is a problem at a byte position of a stream or file.
type FormatError struct {
	File   string
	Where  string // e.g. "127.0.0.1:40112->127.0.0.1:9092"
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Where != "" {
		return fmt.Sprintf("capture: %s: %s: byte %#x: %s", e.File, e.Where, e.Offset, e.Msg)
	}
	return fmt.Sprintf("capture: %s: byte %#x: %s", e.File, e.Offset, e.Msg)
}

// Open reads a pcap or pcapng file, opened read-only. Only a regular file
// is read: its size bounds every length the capture claims.
func Open(path string) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("capture: %s: not a regular file (%s)", path, st.Mode().Type())
	}
	return Read(io.NewSectionReader(f, 0, st.Size()), path)
}

// IsCapture reports whether the first bytes are a pcap or pcapng magic.
func IsCapture(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch binary.LittleEndian.Uint32(head) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1, 0x0a0d0d0a:
		return true
	}
	return false
}

// packetSource is pcapgo's Reader or NgReader.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// reader is how packets are read from src: into one reused buffer
// (ZeroCopyReadPacketData), as tcpassembly hands in-order bytes to the
// stream during the call, where they are copied into the direction's
// buffer, and copies out-of-order ones into its own pages. pcapgo sizes
// that buffer by the snap length, so a pcap file claiming one above
// libpcap's is read a packet at a time into buffers of the packets' sizes
// (a pcapng's are lowered by the guard).
func (g *guard) reader(src packetSource) func() ([]byte, gopacket.CaptureInfo, error) {
	if !g.ng && g.pcapSnap > maxSnapLen {
		return src.ReadPacketData
	}
	return src.ZeroCopyReadPacketData
}

// Read decodes a capture from r, positioned at the capture's first byte;
// name is used in errors. When r tells its size (an *io.SectionReader, a
// *bytes.Reader: a Size method), a record or block claiming more bytes
// than remain is reported before anything is read; otherwise memory still
// grows only with the bytes that arrive.
func Read(r io.Reader, name string) (*Capture, error) {
	size := int64(-1)
	if s, ok := r.(interface{ Size() int64 }); ok {
		size = s.Size()
		if sk, ok := r.(io.Seeker); ok {
			if cur, err := sk.Seek(0, io.SeekCurrent); err == nil {
				size -= cur
			}
		}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(4)
	if err != nil || !IsCapture(head) {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("not a capture: want a pcap or pcapng magic number, found % x", head)}
	}
	ng := binary.LittleEndian.Uint32(head) == ngSHB
	g := newGuard(br, name, ng, size)
	src, err := g.open()
	if err != nil {
		return nil, err
	}
	c := &Capture{Name: name, ids: map[[16]byte]string{}, apis: map[string]int{}}
	f := &factory{cap: c, conns: map[connKey]*Conn{}, opener: map[connKey]string{}, begun: map[[2]gopacket.Flow]struct{}{}}
	asm := tcpassembly.NewAssembler(tcpassembly.NewStreamPool(f))
	asm.MaxBufferedPagesPerConnection = maxWaitingPages
	asm.MaxBufferedPagesTotal = maxWaitingPagesTotal
	if c.readPackets(src, g, f, asm) {
		asm.FlushAll()
	}
	f.finish()
	f.reportSkipped()
	c.closeReport()
	return c, nil
}

// open reads the capture's header through pcapgo.
func (g *guard) open() (src packetSource, err error) {
	defer func() {
		if v := recover(); v != nil {
			src, err = nil, g.panicked(v)
		}
	}()
	if g.ng {
		src, err = pcapgo.NewNgReader(g, pcapgo.DefaultNgReaderOptions)
	} else {
		var r *pcapgo.Reader
		if r, err = pcapgo.NewReader(g); err == nil {
			if r.Snaplen() == 0 {
				// libpcap (sf-pcap.c) takes a snap length of 0 for the
				// link type's largest, as tcpdump and Wireshark read
				// such a file; pcapgo refused every packet of it.
				r.SetSnaplen(maxSnapLen)
			}
			src = r
		}
	}
	switch {
	case err == io.EOF:
		// pcapgo reads up to the first interface description block.
		return nil, &FormatError{File: g.name, Offset: g.pos, Msg: "capture header: the file ends before the first interface description block"}
	case err != nil:
		fe := g.problem(err)
		if !errors.As(err, new(*FormatError)) {
			fe.Msg = "bad capture header: " + fe.Msg
		}
		return nil, fe
	}
	return src, nil
}

// readPackets feeds the packets to the assembler until the end of the file
// or the first damage. It reports false if the assembler itself panicked,
// when its state can no longer be flushed.
func (c *Capture) readPackets(src packetSource, g *guard, f *factory, asm *tcpassembly.Assembler) (asmOK bool) {
	assembling := false
	defer func() {
		if v := recover(); v != nil {
			if assembling {
				c.report(&FormatError{File: c.Name, Offset: g.start,
					Msg: fmt.Sprintf("%s: TCP reassembly failed on this packet (%v); reading stopped here", g.what(), v)})
			} else {
				c.report(g.panicked(v))
			}
			asmOK = !assembling
		}
	}()
	lt, read := src.LinkType(), g.reader(src)
	for {
		data, ci, err := read()
		if err == io.EOF {
			return true
		}
		if err != nil {
			c.report(g.problem(err))
			return true
		}
		c.Packets++
		pkt := decodePacket(data, lt)
		if pkt == nil {
			continue
		}
		nl, tl := pkt.NetworkLayer(), pkt.TransportLayer()
		tcp, ok := tl.(*layers.TCP)
		if nl == nil || !ok || len(tcp.Contents) < 20 {
			// gopacket keeps a TCP layer whose header failed to decode
			// (cut short before its ports), with empty endpoints: no
			// segment to assemble, as for a packet that is not TCP.
			continue
		}
		k := [2]gopacket.Flow{nl.NetworkFlow(), tcp.TransportFlow()}
		seen, follow := f.lookup(k)
		if !follow {
			f.skip(g, k)
			continue
		}
		if tcp.SYN && !tcp.ACK {
			// The connection's opener: the client. (tcpassembly marks both
			// the SYN and the SYN-ACK direction as starting a stream.)
			src := nl.NetworkFlow().Src().String() + ":" + tcp.TransportFlow().Src().String()
			dst := nl.NetworkFlow().Dst().String() + ":" + tcp.TransportFlow().Dst().String()
			f.opener[orderedKey(src, dst)] = src
		}
		if !seen && !tcp.SYN {
			// A direction whose handshake was not captured (the capture
			// began mid-connection): tcpassembly would hold all its bytes
			// until its page limit or the end, waiting for a start that
			// never comes, and a consumer's small requests would arrive
			// long after their responses. Its first packet is handed over
			// as the SYN before it instead (one sequence number earlier),
			// so the direction streams from here; the stream is told the
			// start is not a frame boundary (midStream).
			tcp.SYN, tcp.Seq, f.midStream = true, tcp.Seq-1, true
		}
		f.begun[k] = struct{}{}
		assembling = true
		asm.AssembleWithTimestamp(nl.NetworkFlow(), tcp, ci.Timestamp)
		if !f.flushBefore.IsZero() {
			asm.FlushWithOptions(tcpassembly.FlushOptions{T: f.flushBefore.Add(1)})
			f.flushBefore = time.Time{}
		}
		assembling = false
		f.midStream = false
	}
}

func decodePacket(data []byte, lt layers.LinkType) gopacket.Packet {
	opts := gopacket.DecodeOptions{Lazy: true, NoCopy: true}
	if lt == linkTypeLinuxSLL2 {
		if len(data) < 20 {
			return nil
		}
		switch binary.BigEndian.Uint16(data[0:2]) {
		case 0x0800:
			return gopacket.NewPacket(data[20:], layers.LayerTypeIPv4, opts)
		case 0x86dd:
			return gopacket.NewPacket(data[20:], layers.LayerTypeIPv6, opts)
		}
		return nil
	}
	return gopacket.NewPacket(data, lt, opts)
}

type connKey struct{ a, b string } // endpoints, ordered

type factory struct {
	cap    *Capture
	conns  map[connKey]*Conn
	order  []*Conn
	opener map[connKey]string // endpoint that sent the SYN, per connection
	// begun: the directions (network and transport flows) seen so far.
	begun map[[2]gopacket.Flow]struct{}
	// midStream: the packet being assembled starts a direction whose
	// handshake was not captured.
	midStream         bool
	followed, skipped int          // connections followed (maxConns); packets of later ones
	skippedAt         *FormatError // where the first skipped packet is
	// flushBefore, when set, asks readPackets to have tcpassembly stop
	// waiting for the segments missing since before it (connDecoder's
	// flush: tcpassembly cannot be flushed from inside its callback). It
	// flushes every connection waiting since then: one whose missing
	// segment is still to be retransmitted would lose it, which needs a
	// request stream with a segment not captured and a retransmission
	// in flight elsewhere at once.
	flushBefore time.Time
}

func orderedKey(a, b string) connKey {
	if b < a {
		return connKey{b, a}
	}
	return connKey{a, b}
}

func (f *factory) New(net, tr gopacket.Flow) tcpassembly.Stream {
	src := net.Src().String() + ":" + tr.Src().String()
	dst := net.Dst().String() + ":" + tr.Dst().String()
	k := orderedKey(src, dst)
	c := f.conns[k]
	if c == nil {
		c = &Conn{}
		f.conns[k] = c
		f.order = append(f.order, c)
	}
	d := &direction{src: src, dst: dst, midStream: f.midStream}
	if c.c2s == nil {
		c.c2s = d
	} else {
		c.s2c = d
	}
	return &stream{d: d, f: f, c: c}
}

// maxUnoriented bounds the bytes a connection holds before its client
// side is known. The handshake tells at once; without it, the first frames
// of both directions do (orient). A connection seen one way only past the
// bound is not decoded (its requests or responses would go unanswered);
// one seen both ways is oriented by the connections seen so far.
const maxUnoriented = 16 << 20

// advance decodes what c's bytes so far complete, once c's client side is
// known.
func (f *factory) advance(c *Conn) {
	if c.dec == nil && !f.orientEarly(c) {
		return
	}
	c.dec.advance(false)
}

// orientEarly orients c if its bytes so far allow, and starts its decoder.
func (f *factory) orientEarly(c *Conn) bool {
	if c.c2s == nil || c.s2c == nil {
		if c.c2s.held > maxUnoriented {
			c.c2s.discard()
		}
		return false
	}
	if c.c2s.dropped || c.s2c.dropped {
		// Its other half came after the first was dropped: neither is
		// decoded, so neither is kept.
		c.c2s.discard()
		c.s2c.discard()
		return false
	}
	opener := f.opener[orderedKey(c.c2s.src, c.c2s.dst)]
	switch {
	case opener == c.c2s.src || opener == c.s2c.src:
	case c.byCorrelation() != "":
		opener = c.byCorrelation()
	case c.c2s.held+c.s2c.held > maxUnoriented:
		opener = f.byEndpoints(c)
	default:
		return false
	}
	f.start(c, opener)
	return true
}

func (f *factory) start(c *Conn, opener string) {
	c.orient(opener)
	c.Client, c.Server = c.c2s.src, c.c2s.dst
	c.dec = newConnDecoder(f.cap, c)
	c.dec.flush = func(t time.Time) {
		if t.After(f.flushBefore) {
			f.flushBefore = t
		}
	}
}

// byEndpoints is the endpoint of c that opened it, judged from the other
// connections: a broker's address is shared by its connections, a
// client's port is not, so the endpoint seen in more connections is the
// server's. "" when they tie.
func (f *factory) byEndpoints(c *Conn) string {
	seen := map[string]int{}
	for _, o := range f.order {
		if o.c2s != nil && o.s2c != nil {
			seen[o.c2s.src]++
			seen[o.c2s.dst]++
		}
	}
	switch a, b := seen[c.c2s.src], seen[c.c2s.dst]; {
	case a < b:
		return c.c2s.src
	case b < a:
		return c.c2s.dst
	}
	return ""
}

// finish decodes what each connection holds still, in the order the
// connections were seen, and resolves topic ids.
func (f *factory) finish() {
	for _, c := range f.order {
		if c.c2s == nil || c.s2c == nil || c.c2s.dropped || c.s2c.dropped {
			continue // one direction only: requests without answers
		}
		if c.dec == nil {
			opener := f.opener[orderedKey(c.c2s.src, c.c2s.dst)]
			if opener == "" {
				opener = f.byEndpoints(c)
			}
			f.start(c, opener)
		}
		f.cap.Conns = append(f.cap.Conns, c)
		c.dec.finish()
	}
	// Fetch v13+ names topics by id; Metadata in the capture names them.
	for _, fe := range f.cap.Fetches {
		if fe.Topic == "" {
			if n, ok := f.cap.ids[fe.TopicID]; ok {
				fe.Topic = n
			}
		}
	}
	sort.SliceStable(f.cap.Fetches, func(i, j int) bool { return f.cap.Fetches[i].Time.Before(f.cap.Fetches[j].Time) })
}

// byCorrelation is the endpoint of c that is the client by the
// correlation ids of both directions' first frames: a request's (bytes
// 8-12, after size, API key and version) equals its response's (bytes
// 4-8). "" when they do not tell.
func (c *Conn) byCorrelation() string {
	ab, bb := c.c2s.first(), c.s2c.first()
	switch {
	case len(ab) >= 12 && len(bb) >= 8 && bytes.Equal(ab[8:12], bb[4:8]):
		return c.c2s.src
	case len(bb) >= 12 && len(ab) >= 8 && bytes.Equal(bb[8:12], ab[4:8]):
		return c.s2c.src
	}
	return ""
}

// orient makes c2s the client's direction: the opener (the side that sent
// the SYN without ACK, or the endpoint not shared with other connections)
// when one is known, else the side whose first frame's correlation id
// equals the other side's first frame's.
func (c *Conn) orient(opener string) {
	a, b := c.c2s, c.s2c
	switch opener {
	case a.src:
		return
	case b.src:
		c.c2s, c.s2c = b, a
		return
	}
	if c.byCorrelation() == b.src {
		c.c2s, c.s2c = b, a
	}
}
