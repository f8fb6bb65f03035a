package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RawMagic starts a raw capture file (docs/capture-format.md).
const RawMagic = "TXNSCAP1"

// IsRaw reports whether head starts with RawMagic.
func IsRaw(head []byte) bool { return len(head) >= 8 && string(head[:8]) == RawMagic }

// RawExchange is one record of a raw capture.
type RawExchange struct {
	Time          time.Time
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	Connection    string
	Request       []byte // body after the request header
	Response      []byte // body after the response header
}

// RawWriter writes a raw capture.
type RawWriter struct {
	w       *bufio.Writer
	started bool
}

// NewRawWriter starts a raw capture on w.
func NewRawWriter(w io.Writer) *RawWriter { return &RawWriter{w: bufio.NewWriter(w)} }

// Write appends one exchange.
func (rw *RawWriter) Write(e RawExchange) error {
	if !rw.started {
		rw.started = true
		if _, err := rw.w.WriteString(RawMagic); err != nil {
			return err
		}
	}
	if len(e.Connection) > 1<<15-1 {
		e.Connection = e.Connection[:1<<15-1]
	}
	n := 8 + 2 + 2 + 4 + 2 + len(e.Connection) + 4 + len(e.Request) + 4 + len(e.Response)
	if n > maxFrame {
		return fmt.Errorf("capture: exchange of %d bytes exceeds the %d-byte record limit", n, maxFrame)
	}
	b := make([]byte, 0, 4+n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	b = binary.BigEndian.AppendUint16(b, uint16(e.APIKey))
	b = binary.BigEndian.AppendUint16(b, uint16(e.APIVersion))
	b = binary.BigEndian.AppendUint32(b, uint32(e.CorrelationID))
	b = binary.BigEndian.AppendUint16(b, uint16(len(e.Connection)))
	b = append(b, e.Connection...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Request)))
	b = append(b, e.Request...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Response)))
	b = append(b, e.Response...)
	_, err := rw.w.Write(b)
	return err
}

// Flush flushes buffered records.
func (rw *RawWriter) Flush() error { return rw.w.Flush() }

// ReadRaw decodes a raw capture; name is used in errors. Records before a
// damaged one are kept and the damage is reported in Problems.
func ReadRaw(r io.Reader, name string) (*Capture, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var magic [8]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || !IsRaw(magic[:]) {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("not a raw capture: want magic %q, found %q", RawMagic, magic[:])}
	}
	c := &Capture{Name: name, ids: map[[16]byte]string{}, apis: map[string]int{}}
	conns := map[string]*Conn{}
	sessions := map[string]map[sessionKey]int64{}
	off := int64(8)
	for {
		var lb [4]byte
		if _, err := io.ReadFull(br, lb[:]); err != nil {
			if !errors.Is(err, io.EOF) {
				c.report(&FormatError{File: name, Offset: off, Msg: "truncated record length"})
			}
			break
		}
		n := int64(int32(binary.BigEndian.Uint32(lb[:])))
		if n < 26 || n > maxFrame {
			c.report(&FormatError{File: name, Offset: off, Msg: fmt.Sprintf("record length %d, want 26..%d", n, maxFrame)})
			break
		}
		// Grow the buffer as bytes arrive rather than trusting the length:
		// a 12-byte file cannot make us allocate 256 MiB.
		var rec bytes.Buffer
		if k, err := io.CopyN(&rec, br, n); err != nil {
			c.report(&FormatError{File: name, Offset: off, Msg: fmt.Sprintf("record of %d bytes cut after %d", n, k)})
			break
		}
		e, err := parseRaw(rec.Bytes())
		if err != nil {
			c.report(&FormatError{File: name, Offset: off, Msg: err.Error()})
			off += 4 + n
			continue
		}
		c.Packets++
		c.decodeRaw(e, off, conns, sessions)
		off += 4 + n
	}
	for _, fe := range c.Fetches {
		if fe.Topic == "" {
			fe.Topic = c.ids[fe.TopicID]
		}
	}
	c.closeReport()
	return c, nil
}

func parseRaw(b []byte) (RawExchange, error) {
	var e RawExchange
	e.Time = time.Unix(0, int64(binary.BigEndian.Uint64(b)))
	e.APIKey = int16(binary.BigEndian.Uint16(b[8:]))
	e.APIVersion = int16(binary.BigEndian.Uint16(b[10:]))
	e.CorrelationID = int32(binary.BigEndian.Uint32(b[12:]))
	cl := int(binary.BigEndian.Uint16(b[16:]))
	rest := b[18:]
	if cl > len(rest) {
		return e, fmt.Errorf("connection name of %d bytes, %d left", cl, len(rest))
	}
	e.Connection, rest = string(rest[:cl]), rest[cl:]
	for _, dst := range []*[]byte{&e.Request, &e.Response} {
		if len(rest) < 4 {
			return e, fmt.Errorf("missing body length")
		}
		n := int64(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if n > int64(len(rest)) {
			return e, fmt.Errorf("body of %d bytes, %d left in the record", n, len(rest))
		}
		*dst, rest = rest[:n], rest[n:]
	}
	return e, nil
}

func (c *Capture) decodeRaw(e RawExchange, off int64, conns map[string]*Conn, sessions map[string]map[sessionKey]int64) {
	req := kmsg.RequestForKey(e.APIKey)
	if req == nil || (e.APIKey != 1 && e.APIKey != 3) {
		return
	}
	req.SetVersion(e.APIVersion)
	resp := req.ResponseKind()
	resp.SetVersion(e.APIVersion)
	if err := req.ReadFrom(e.Request); err != nil {
		c.report(&FormatError{File: c.Name, Where: e.Connection, Offset: off, Msg: fmt.Sprintf("%s v%d request: %v", kmsg.NameForKey(e.APIKey), e.APIVersion, err)})
		return
	}
	if err := resp.ReadFrom(e.Response); err != nil {
		c.report(&FormatError{File: c.Name, Where: e.Connection, Offset: off, Msg: fmt.Sprintf("%s v%d response: %v", kmsg.NameForKey(e.APIKey), e.APIVersion, err)})
		return
	}
	c.Exchanges++
	c.apis[kmsg.NameForKey(e.APIKey)]++
	if m, ok := resp.(*kmsg.MetadataResponse); ok {
		for _, t := range m.Topics {
			if t.Topic != nil {
				c.ids[t.TopicID] = *t.Topic
			}
		}
		return
	}
	conn := conns[e.Connection]
	if conn == nil {
		conn = &Conn{Client: e.Connection}
		conns[e.Connection] = conn
		c.Conns = append(c.Conns, conn)
		sessions[e.Connection] = map[sessionKey]int64{}
	}
	c.Fetches = append(c.Fetches, fetchesOf(conn, e.Time, e.CorrelationID, e.APIVersion, req.(*kmsg.FetchRequest), resp.(*kmsg.FetchResponse), sessions[e.Connection], e.Connection)...)
}
