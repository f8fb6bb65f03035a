package capture

import (
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

func decodeConn(c *Capture, conn *Conn) {
	where := conn.Client + "->" + conn.Server
	reqs, reqOffs, err := frames(conn.c2s)
	if err != nil {
		c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Msg: err.Error()})
	}
	byCorr := make(map[int32]pending, len(reqs))
	// Offsets named by earlier requests of a fetch session (KIP-227): an
	// incremental request lists only partitions that changed.
	session := map[sessionKey]int64{}
	for i, fr := range reqs {
		p, body, herr := requestHeader(fr)
		if herr != nil {
			c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: reqOffs[i], Msg: herr.Error()})
			continue
		}
		if p.req != nil {
			if err := p.req.ReadFrom(body); err != nil {
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: reqOffs[i],
					Msg: fmt.Sprintf("%s v%d request body: %v", kmsg.NameForKey(p.key), p.version, err)})
				p.req = nil
			}
		}
		byCorr[corrOf(fr)] = p
	}
	where = conn.Server + "->" + conn.Client
	resps, respOffs, err := frames(conn.s2c)
	if err != nil {
		c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Msg: err.Error()})
	}
	for i, fr := range resps {
		if len(fr) < 4 {
			continue
		}
		corr := int32(binary.BigEndian.Uint32(fr))
		p, ok := byCorr[corr]
		if !ok || p.req == nil {
			continue
		}
		c.Exchanges++
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
				c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: respOffs[i], Msg: herr.Error()})
				continue
			}
		}
		if err := resp.ReadFrom(body); err != nil {
			c.Problems = append(c.Problems, &FormatError{File: c.Name, Where: where, Offset: respOffs[i],
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
		c.addFetches(conn, conn.s2c.timeAt(respOffs[i]), corr, p.version, p.req.(*kmsg.FetchRequest), fresp, session, where)
	}
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
