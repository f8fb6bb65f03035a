package capture

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Fetch is one partition of one captured Fetch exchange.
type Fetch struct {
	Time          time.Time // when the response's first byte was captured
	Conn          *Conn
	CorrelationID int32
	Version       int16
	Isolation     txnindex.Isolation
	Topic         string
	TopicID       [16]byte
	Partition     int32

	// FetchOffset is the offset the request asked for; -1 when the
	// partition was left out of an incremental fetch session's request
	// and no earlier request of the session named it.
	FetchOffset       int64
	PartitionMaxBytes int32

	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64 // -1 before Fetch v4
	LogStartOffset   int64 // -1 before Fetch v5

	// Aborted is the aborted-transactions list, nil when the broker sent
	// a null list (read_uncommitted, or before Fetch v4).
	Aborted []txnindex.AbortedTransaction

	Records []byte           // the record set as received
	Batches []txnindex.Batch // its complete batches (a truncated tail is dropped, as clients do)
	Damage  []*loader.FormatError

	// Incomplete: TCP segments of the response were not captured, so
	// Records holds only the bytes before the gap; the broker sent more.
	Incomplete bool
}

// Response returns the fetch as the engine's FetchResponse.
func (f *Fetch) Response() txnindex.FetchResponse {
	return txnindex.FetchResponse{
		Err: txnindex.FetchError(f.ErrorCode), HighWatermark: f.HighWatermark,
		LastStableOffset: f.LastStableOffset, LogStartOffset: f.LogStartOffset,
		AbortedTransactions: f.Aborted, Batches: f.Batches, FirstBatch: -1, Segment: -1,
		Bytes: int64(len(f.Records)),
	}
}

type pending struct {
	key, version int16
	req          kmsg.Request
}

type sessionKey struct {
	topic     string
	id        [16]byte
	partition int32
}

// Frame sizes: a request carries at least its header's API key, version,
// correlation id and client id length; a response its correlation id.
const (
	minRequest  = 10
	minResponse = 4
)

// plausibleRequest: a size in range, an API key and version kmsg knows, and
// a correlation id after the previous request's (clients count them up
// per request: librdkafka per broker connection, the Java client across
// its connections, so the step is small but need not be 1).
func plausibleRequest(b []byte, after int32) bool {
	if len(b) < 12 {
		return false
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < minRequest || n > maxFrame {
		return false
	}
	key, version := int16(binary.BigEndian.Uint16(b[4:])), int16(binary.BigEndian.Uint16(b[6:]))
	if key < 0 || key > 1000 || version < 0 || version > 100 {
		return false
	}
	corr := int32(binary.BigEndian.Uint32(b[8:]))
	if corr < 0 || after != noCorr && (corr <= after || corr-after > 1<<20) {
		return false
	}
	req := kmsg.RequestForKey(key)
	return req != nil && version <= req.MaxVersion()
}

func decodeConn(c *Capture, conn *Conn) {
	where := conn.Client + "->" + conn.Server
	defer func() {
		// The decoders work on bytes an attacker chose; a panic in them
		// is a bug, reported rather than taking the process down.
		if v := recover(); v != nil {
			c.Problems = append(c.Problems, fmt.Errorf("capture: %s: %s: decoding this connection failed (%v); its remaining exchanges are skipped", c.Name, where, v))
		}
	}()
	rq := &framer{file: c.Name, where: where, d: conn.c2s, min: minRequest, corrAt: 8, plausible: plausibleRequest}
	rq.walk()
	c.Problems = append(c.Problems, rq.problems...)
	byCorr := make(map[int32]pending, len(rq.frames))
	// Each request's place on the connection: a broker answers the
	// requests of one connection in the order they were sent (Kafka
	// protocol guide, "Network"), so after a gap the next response must
	// answer a request later than the last one answered.
	place := make(map[int32]int, len(rq.frames))
	// Offsets named by earlier requests of a fetch session (KIP-227): an
	// incremental request lists only partitions that changed.
	session := map[sessionKey]int64{}
	for i, f := range rq.frames {
		fr := f.data
		if f.cut() {
			if len(fr) >= 8 {
				key, version, corr := int16(binary.BigEndian.Uint16(fr)), int16(binary.BigEndian.Uint16(fr[2:])), corrOf(fr)
				byCorr[corr], place[corr] = pending{key: key, version: version}, i
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off,
					Msg: fmt.Sprintf("%s v%d request corr %d cut by bytes not captured after %d of its %d bytes: the exchange is not decoded", kmsg.NameForKey(key), version, corr, len(fr), f.size)})
			}
			continue
		}
		p, body, herr := requestHeader(fr)
		if herr != nil {
			c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off, Msg: herr.Error()})
			continue
		}
		if p.req != nil {
			if err := p.req.ReadFrom(body); err != nil {
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off,
					Msg: fmt.Sprintf("%s v%d request body: %v", kmsg.NameForKey(p.key), p.version, err)})
				p.req = nil
			}
		}
		byCorr[corrOf(fr)], place[corrOf(fr)] = p, i
	}
	where = conn.Server + "->" + conn.Client
	rs := &framer{file: c.Name, where: where, d: conn.s2c, min: minResponse, corrAt: 4}
	rs.plausible = func(b []byte, after int32) bool {
		if len(b) < 8 {
			return false
		}
		if n := int32(binary.BigEndian.Uint32(b)); n < minResponse || n > maxFrame {
			return false
		}
		i, ok := place[int32(binary.BigEndian.Uint32(b[4:]))]
		if !ok {
			return false
		}
		j, ok := place[after]
		return !ok || i > j
	}
	// A response that runs past the bytes captured after a gap is only
	// taken as such if it is a Fetch response whose first batch arrived
	// whole, CRC and all.
	rs.confirm = func(b []byte) bool {
		p := byCorr[int32(binary.BigEndian.Uint32(b[4:]))]
		if _, ok := p.req.(*kmsg.FetchRequest); !ok {
			return false
		}
		body := b[8:]
		if p.req.IsFlexible() {
			var err error
			if body, err = skipTags(body); err != nil {
				return false
			}
		}
		resp, want := fetchPrefix(body, p.version)
		if want < 0 {
			return false
		}
		t := resp.Topics[len(resp.Topics)-1]
		recs := t.Partitions[len(t.Partitions)-1].RecordBatches
		if len(recs) < 12 {
			return false
		}
		// The first batch only: its length is at bytes 8..12.
		n := 12 + int64(int32(binary.BigEndian.Uint32(recs[8:])))
		if n < 12 || n > int64(len(recs)) {
			return false
		}
		bs, _ := loader.ParseRecordSet(recs[:n], "")
		return len(bs) == 1
	}
	rs.walk()
	c.Problems = append(c.Problems, rs.problems...)
	answered := map[int32]bool{}
	for _, f := range rs.frames {
		fr := f.data
		if len(fr) < 4 {
			continue
		}
		corr := int32(binary.BigEndian.Uint32(fr))
		p, ok := byCorr[corr]
		if !ok || p.req == nil {
			continue
		}
		answered[corr] = true
		c.Exchanges++
		c.apis[kmsg.NameForKey(p.key)]++
		body := fr[4:]
		resp := p.req.ResponseKind()
		resp.SetVersion(p.version)
		// Response header v1 (flexible) adds tagged fields, except for
		// ApiVersions, whose response header stays v0 so any client can
		// read it.
		if resp.IsFlexible() && p.key != 18 {
			var herr error
			body, herr = skipTags(body)
			if herr != nil {
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off, Msg: herr.Error()})
				continue
			}
		}
		if f.cut() {
			if freq, ok := p.req.(*kmsg.FetchRequest); ok {
				c.cutFetch(conn, f, corr, p.version, freq, body, session, where)
			} else {
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off,
					Msg: fmt.Sprintf("%s v%d response corr %d cut by bytes not captured after %d of its %d bytes: not decoded", kmsg.NameForKey(p.key), p.version, corr, len(fr), f.size)})
			}
			continue
		}
		if err := resp.ReadFrom(body); err != nil {
			c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off,
				Msg: fmt.Sprintf("%s v%d response body: %v", kmsg.NameForKey(p.key), p.version, err)})
			continue
		}
		fresp, ok := resp.(*kmsg.FetchResponse)
		if !ok {
			if m, ok := resp.(*kmsg.MetadataResponse); ok {
				for _, t := range m.Topics {
					if t.Topic != nil && t.TopicID != ([16]byte{}) {
						c.ids[t.TopicID] = *t.Topic
					}
				}
			}
			continue
		}
		c.addFetches(conn, conn.s2c.timeAt(f.off), corr, p.version, p.req.(*kmsg.FetchRequest), fresp, session, where)
	}
	// A Fetch request left unanswered before one that was answered lost
	// its response in a gap (responses come in request order); one after
	// the last answered may have been pending when the capture stopped.
	lastAnswered := -1
	for corr := range answered {
		lastAnswered = max(lastAnswered, place[corr])
	}
	for i, f := range rq.frames {
		if len(f.data) < 8 || int16(binary.BigEndian.Uint16(f.data)) != 1 {
			continue
		}
		corr := corrOf(f.data)
		if answered[corr] || place[corr] != i {
			continue
		}
		c.unanswered++
		if i < lastAnswered {
			c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: conn.Client + "->" + conn.Server, Offset: f.off,
				Msg: fmt.Sprintf("Fetch v%d request corr %d has no response in the capture: it fell in bytes not captured", int16(binary.BigEndian.Uint16(f.data[2:])), corr)})
		}
	}
}

// cutFetch keeps what arrived of a Fetch response that runs into bytes not
// captured, as Wireshark keeps the fields before a gap: the partitions
// complete before it, and of the partition it falls in the complete
// batches before it (a consumer would have read those the same way: the
// batches of a record set are independent).
func (c *Capture) cutFetch(conn *Conn, f frame, corr int32, version int16, freq *kmsg.FetchRequest, body []byte, session map[sessionKey]int64, where string) {
	resp, want := fetchPrefix(body, version)
	n0 := len(c.Fetches)
	c.addFetches(conn, conn.s2c.timeAt(f.off), corr, version, freq, resp, session, where)
	kept := c.Fetches[n0:]
	msg := fmt.Sprintf("Fetch v%d response corr %d cut by bytes not captured after %d of its %d bytes", version, corr, len(f.data), f.size)
	whole := len(kept)
	if want >= 0 {
		last := kept[len(kept)-1]
		last.Incomplete = true
		whole--
		msg += fmt.Sprintf(": kept the %d complete batches of %s before the gap (%d of its %d record bytes captured)",
			len(last.Batches), partitionName(last), len(last.Records), want)
	}
	if whole > 0 || want < 0 {
		msg += fmt.Sprintf(", %d partitions before it whole", whole)
	}
	msg += "; the rest is lost"
	c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: f.off, Msg: msg})
}

// addFetches records each partition of one Fetch exchange. session holds the
// offsets named by earlier requests of the connection's fetch session.
func (c *Capture) addFetches(conn *Conn, t time.Time, corr int32, version int16, freq *kmsg.FetchRequest, fresp *kmsg.FetchResponse, session map[sessionKey]int64, where string) {
	for _, t := range freq.Topics {
		for _, rp := range t.Partitions {
			session[sessionKey{t.Topic, t.TopicID, rp.Partition}] = rp.FetchOffset
		}
	}
	for _, rt := range fresp.Topics {
		for _, rp := range rt.Partitions {
			f := &Fetch{
				Time: t, Conn: conn, CorrelationID: corr, Version: version,
				Isolation: txnindex.Isolation(freq.IsolationLevel),
				Topic:     rt.Topic, TopicID: rt.TopicID, Partition: rp.Partition,
				FetchOffset: -1, ErrorCode: rp.ErrorCode, HighWatermark: rp.HighWatermark,
				LastStableOffset: rp.LastStableOffset, LogStartOffset: rp.LogStartOffset,
				Records: rp.RecordBatches,
			}
			if version < 4 {
				f.LastStableOffset = -1
			}
			if off, ok := session[sessionKey{rt.Topic, rt.TopicID, rp.Partition}]; ok {
				f.FetchOffset = off
			}
			for _, treq := range freq.Topics {
				if treq.Topic == rt.Topic && treq.TopicID == rt.TopicID {
					for _, preq := range treq.Partitions {
						if preq.Partition == rp.Partition {
							f.PartitionMaxBytes = preq.PartitionMaxBytes
						}
					}
				}
			}
			// kmsg decodes a null array as nil and an empty one as a
			// non-nil empty slice; keep that difference.
			if rp.AbortedTransactions != nil {
				f.Aborted = make([]txnindex.AbortedTransaction, 0, len(rp.AbortedTransactions))
				for _, a := range rp.AbortedTransactions {
					f.Aborted = append(f.Aborted, txnindex.AbortedTransaction{ProducerID: txnindex.ProducerID(a.ProducerID), FirstOffset: a.FirstOffset})
				}
			}
			name := fmt.Sprintf("%s fetch response corr %d %s-%d", where, corr, rt.Topic, rp.Partition)
			f.Batches, f.Damage = loader.ParseRecordSet(rp.RecordBatches, name)
			c.Fetches = append(c.Fetches, f)
		}
	}
}

// partitionName is topic-partition, the topic by its id (as Kafka prints a
// Uuid: URL-safe base64 without padding) when a Fetch v13+ names it so and
// the capture holds no Metadata naming it.
func partitionName(f *Fetch) string {
	if f.Topic == "" {
		return fmt.Sprintf("topic id %s partition %d", base64.RawURLEncoding.EncodeToString(f.TopicID[:]), f.Partition)
	}
	return fmt.Sprintf("%s-%d", f.Topic, f.Partition)
}

func corrOf(req []byte) int32 {
	if len(req) < 8 {
		return -1
	}
	return int32(binary.BigEndian.Uint32(req[4:]))
}

// requestHeader parses a request header (v1, or v2 for flexible versions)
// and returns the pending exchange with an empty request of the right kind,
// or a nil request for API keys kmsg does not know.
func requestHeader(fr []byte) (pending, []byte, error) {
	if len(fr) < 10 {
		return pending{}, nil, fmt.Errorf("request header: want at least 10 bytes, found %d", len(fr))
	}
	p := pending{key: int16(binary.BigEndian.Uint16(fr)), version: int16(binary.BigEndian.Uint16(fr[2:]))}
	clientLen := int(int16(binary.BigEndian.Uint16(fr[8:])))
	body := fr[10:]
	if clientLen > 0 {
		if clientLen > len(body) {
			return p, nil, fmt.Errorf("request header: client id of %d bytes, %d left", clientLen, len(body))
		}
		body = body[clientLen:]
	}
	req := kmsg.RequestForKey(p.key)
	if req == nil {
		return p, body, nil
	}
	req.SetVersion(p.version)
	if p.version < 0 || p.version > req.MaxVersion() {
		return p, body, nil // a version this kmsg does not know: skip the exchange
	}
	if req.IsFlexible() {
		var err error
		if body, err = skipTags(body); err != nil {
			return p, nil, err
		}
	}
	p.req = req
	return p, body, nil
}

// skipTags skips a tagged-field section (KIP-482): a uvarint count, then
// per field a uvarint tag, a uvarint size and the data.
func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("tagged fields: bad count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		_, k = binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("tagged field %d: bad tag", i)
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, fmt.Errorf("tagged field %d: size %d exceeds the %d bytes left", i, size, len(b)-k)
		}
		b = b[uint64(k)+size:]
	}
	return b, nil
}
