package api

// The websocket stream (/stream): frame order, options, origin checks, many
// clients and the viewport; the fixtures are in api_test.go.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/txnindex"
)

// wsMsg is one message of a stream as a test sees it.
type wsMsg struct {
	text  map[string]any
	kind  byte // binary frame kind
	gen   uint32
	start int
	recs  []wsRec
	n     int
}

type wsRec struct {
	From, To                 int64
	Verdict, Cause, Uncommit byte
	Lane                     uint16
	Batch, Txn               int32
}

func readMsg(t testing.TB, c *websocket.Conn) wsMsg {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	typ, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return parseMsg(t, typ, b)
}

func parseMsg(t testing.TB, typ int, b []byte) wsMsg {
	if typ == websocket.TextMessage {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return wsMsg{text: m}
	}
	m := wsMsg{kind: b[1], gen: binary.LittleEndian.Uint32(b[4:]), start: int(binary.LittleEndian.Uint32(b[8:])), n: int(binary.LittleEndian.Uint32(b[12:]))}
	size := decisionSize
	if m.kind == frameTxns {
		size = txnSize
	}
	if b[0] != 1 || len(b) != frameHeaderSize+m.n*size {
		t.Fatalf("frame: version %d, %d bytes for %d records", b[0], len(b), m.n)
	}
	if m.kind == frameDecisions && b[2] != decisionLayout {
		t.Fatalf("decision frame: layout byte %d, want %d (the client reads %d-byte records by it)", b[2], decisionLayout, decisionSize)
	}
	if m.kind == frameDecisions {
		for i := 0; i < m.n; i++ {
			r := b[frameHeaderSize+i*decisionSize:]
			m.recs = append(m.recs, wsRec{From: int64(math.Float64frombits(binary.LittleEndian.Uint64(r))), To: int64(math.Float64frombits(binary.LittleEndian.Uint64(r[8:]))),
				Lane: binary.LittleEndian.Uint16(r[24:]), Verdict: r[26], Cause: r[27], Uncommit: r[28],
				Batch: int32(binary.LittleEndian.Uint32(r[16:])), Txn: int32(binary.LittleEndian.Uint32(r[20:]))})
		}
	}
	return m
}

func dial(t testing.TB, srv *httptest.Server, path string) *websocket.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + path
	c, resp, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", u, err, resp)
	}
	return c
}

// TestStreamOrder: meta, the viewport's decisions, transactions, the rest in
// chunks with progress, then done; the decisions equal the NDJSON API's.
func TestStreamOrder(t *testing.T) {
	l := large(2000)
	srv, _ := server(t, fakeCatalog{"large": l}, nil, func(a *API) { a.ChunkSize = 64 })
	c := dial(t, srv, "/ws/v1/sources/large/partitions/big/0?from=3000&to=3100")
	defer c.Close()

	meta := readMsg(t, c).text
	if meta["type"] != "meta" || meta["version"].(float64) != 1 || meta["last_stable_offset"].(float64) != float64(l.LastStableOffset) {
		t.Fatalf("first message: %v", meta)
	}
	totals := meta["totals"].(map[string]any)
	nChunks := int(totals["chunks"].(float64))
	txns := 0
	got := map[int][]wsRec{}
	phase := "window"
	var windowChunks, progress int
	var done map[string]any
	for done == nil {
		m := readMsg(t, c)
		switch {
		case m.text != nil && m.text["type"] == "progress":
			progress++
			p := m.text["phase"].(string)
			if phase == "rest" && p == "window" {
				t.Errorf("window chunk after the rest began")
			}
			phase = p
		case m.text != nil && m.text["type"] == "done":
			done = m.text
		case m.text != nil:
			t.Fatalf("unexpected %v", m.text)
		case m.kind == frameTxns:
			// After the window's chunks, before the rest.
			if windowChunks == 0 || len(got) > windowChunks {
				t.Errorf("transactions after %d chunks (%d in the window)", len(got), windowChunks)
			}
			txns += m.n
		case m.kind == frameDecisions:
			if len(got) == 0 {
				// The first chunk holds the viewport.
				if m.recs[0].From > 3100 || m.recs[len(m.recs)-1].To < 3000 {
					t.Errorf("first chunk %d-%d does not overlap the viewport 3000-3100", m.recs[0].From, m.recs[len(m.recs)-1].To)
				}
			}
			if phase == "window" {
				windowChunks++
			}
			got[m.start] = m.recs
		}
	}
	if txns != len(l.Txns) {
		t.Errorf("%d transactions sent, want %d", txns, len(l.Txns))
	}
	if progress != nChunks || len(got) != nChunks || windowChunks == 0 || windowChunks >= nChunks {
		t.Errorf("%d progress, %d chunks of %d, %d in the window", progress, len(got), nChunks, windowChunks)
	}
	var api []DecisionJSON = ndjson(t, srv.URL+"/api/v1/sources/large/partitions/big/0/decisions")
	if int(done["decisions"].(float64)) != len(api) {
		t.Errorf("done says %v decisions, the API has %d", done["decisions"], len(api))
	}
	// The engine's own decisions, with each one's transaction and lane
	// found the slow way, for the record fields the NDJSON does not carry.
	txnOf := map[*txnindex.Txn]int32{}
	for k := range l.Txns {
		txnOf[&l.Txns[k]] = int32(k)
	}
	laneOf := map[txnindex.ProducerID]uint16{}
	for k, p := range l.Producers {
		laneOf[p.ID] = uint16(k + 1)
	}
	var engine []txnindex.Decision
	for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		engine = append(engine, d)
	}
	i := 0
	for start := 0; start < len(api); start += 64 {
		for _, r := range got[start] {
			if a := api[i]; r.From != a.From || r.To != a.To || txnindex.Verdict(r.Verdict).String() != a.Decision || txnindex.Cause(r.Cause).String() != a.Cause {
				t.Fatalf("decision %d: stream %+v, API %+v", i, r, a)
			}
			d := engine[i]
			wantTxn, ok := txnOf[d.Txn]
			if !ok {
				wantTxn = -1
			}
			wantLane := uint16(laneGap)
			if d.Batch != nil {
				wantLane = laneOf[d.Batch.ProducerID] // 0 without a producer id
				if !d.Batch.HasProducerID() {
					wantLane = 0
				}
			}
			if r.Txn != wantTxn || r.Batch != d.BatchIndex || r.Lane != wantLane {
				t.Fatalf("decision %d: record txn %d batch %d lane %d, want txn %d batch %d lane %d", i, r.Txn, r.Batch, r.Lane, wantTxn, d.BatchIndex, wantLane)
			}
			i++
		}
	}
	if i != len(api) {
		t.Errorf("stream has %d decisions, API %d", i, len(api))
	}
}

// TestStreamOptions: an options message restarts the stream as a new
// generation; bad commands get an error message, not a close.
func TestStreamOptions(t *testing.T) {
	srv, _ := server(t, fakeCatalog{"small": small()}, nil, nil)
	c := dial(t, srv, "/ws/v1/sources/small/partitions/t/0")
	defer c.Close()
	untilDone := func(gen float64) []wsRec {
		var recs []wsRec
		for {
			m := readMsg(t, c)
			if m.text != nil && m.text["type"] == "done" && m.text["generation"].(float64) == gen {
				return recs
			}
			if m.kind == frameDecisions && float64(m.gen) == gen {
				recs = append(recs, m.recs...)
			}
		}
	}
	rc := untilDone(1)
	c.WriteJSON(map[string]any{"type": "bogus"})
	if m := readMsg(t, c); m.text["type"] != "error" {
		t.Errorf("bogus command: %v", m.text)
	}
	c.WriteJSON(map[string]any{"type": "options", "isolation": "read_sideways"})
	if m := readMsg(t, c); m.text["type"] != "error" {
		t.Errorf("bad isolation: %v", m.text)
	}
	c.WriteJSON(map[string]any{"type": "options", "isolation": "read_uncommitted", "position": 5})
	m := readMsg(t, c)
	if m.text["type"] != "meta" || m.text["generation"].(float64) != 2 || m.text["options"].(map[string]any)["isolation"] != "read_uncommitted" {
		t.Fatalf("after options: %v", m.text)
	}
	ru := untilDone(2)
	if rc[1].Verdict != byte(txnindex.Aborted) || ru[1].Verdict != byte(txnindex.BeforePosition) || ru[3].Verdict != byte(txnindex.Delivered) {
		t.Errorf("read_committed %+v, read_uncommitted from 5 %+v", rc[1], ru[1:4])
	}
	c.WriteJSON(map[string]any{"type": "viewport", "from": 3, "to": 4})
	c.WriteJSON(map[string]any{"type": "viewport", "from": 5})
	if m := readMsg(t, c); m.text["type"] != "error" {
		t.Errorf("viewport without to: %v", m.text)
	}
}

func TestStreamNotFoundAndOrigin(t *testing.T) {
	srv, _ := server(t, fakeCatalog{"small": small()}, nil, nil)
	u := "ws" + strings.TrimPrefix(srv.URL, "http")
	if _, resp, err := websocket.DefaultDialer.Dial(u+"/ws/v1/sources/small/partitions/t/3", nil); err == nil || resp.StatusCode != 404 {
		t.Errorf("unknown partition: %v %v", err, resp)
	}
	h := http.Header{"Origin": {"http://evil.example"}}
	if _, resp, err := websocket.DefaultDialer.Dial(u+"/ws/v1/sources/small/partitions/t/0", h); err == nil || resp.StatusCode != 403 {
		t.Errorf("cross-origin handshake: %v %v", err, resp)
	}
	h = http.Header{"Origin": {srv.URL}}
	c, _, err := websocket.DefaultDialer.Dial(u+"/ws/v1/sources/small/partitions/t/0", h)
	if err != nil {
		t.Fatalf("same origin: %v", err)
	}
	c.Close()
}

// TestStreamManyClients: 100 clients on one partition each receive every
// decision, while one client that never reads delays none of them.
func TestStreamManyClients(t *testing.T) {
	l := large(20_000)
	srv, a := server(t, fakeCatalog{"large": l}, nil, nil)
	path := "/ws/v1/sources/large/partitions/big/0"
	stuck := dial(t, srv, path) // never reads
	defer stuck.Close()

	want := 0
	for range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		want++
	}
	const clients = 100
	start := time.Now()
	streamAll(t, srv.URL+path, clients, want)
	t.Logf("%d clients × %d decisions in %v with a stuck client connected (%d streams open)", clients, want, time.Since(start), a.Streams())
	if a.Streams() < 1 {
		t.Errorf("the stuck client's stream is gone: %d open", a.Streams())
	}
}

// TestStreamViewportAtStart: a viewport sent before the stream starts is
// its window.
func TestStreamViewportAtStart(t *testing.T) {
	l := large(100_000)
	srv, _ := server(t, fakeCatalog{"large": l}, nil, func(a *API) { a.ChunkSize = 64 })
	c := dial(t, srv, "/ws/v1/sources/large/partitions/big/0?from=0&to=10")
	defer c.Close()
	end := l.LogEndOffset
	c.WriteJSON(map[string]any{"type": "viewport", "from": end - 50, "to": end})
	meta := readMsg(t, c).text
	nChunks := int(meta["totals"].(map[string]any)["chunks"].(float64))
	for seen := 0; ; {
		m := readMsg(t, c)
		if m.kind != frameDecisions {
			continue
		}
		seen++
		if last := m.recs[len(m.recs)-1]; last.To >= end-50 {
			if seen > nChunks/2 {
				t.Errorf("the viewport's chunk came %d of %d", seen, nChunks)
			}
			return
		}
	}
}

// streamAll runs clients streams of url at once, each to its done message
// with want decisions, and reports every client that failed.
func streamAll(t *testing.T, url string, clients, want int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := streamToDone(url, want); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// streamToDone reads one decision stream from the websocket at url (http
// scheme) to its done message and checks that it counted want decisions.
func streamToDone(url string, want int) error {
	return readStream(url, want, func() time.Time { return time.Now().Add(30 * time.Second) })
}

// readStream is streamToDone with each read due by deadline().
func readStream(url string, want int, deadline func() time.Time) error {
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	n := 0
	for {
		c.SetReadDeadline(deadline())
		typ, b, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("after %d decisions: %w", n, err)
		}
		if typ == websocket.BinaryMessage && b[1] == frameDecisions {
			n += int(binary.LittleEndian.Uint32(b[12:]))
			continue
		}
		if typ == websocket.TextMessage && strings.Contains(string(b), `"type":"done"`) {
			if n != want {
				return fmt.Errorf("received %d decisions, want %d", n, want)
			}
			return nil
		}
	}
}
