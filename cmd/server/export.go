package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// exportDetailLimit is the number of batches below which an export embeds
// every batch's detail and every decision's reason (for hover and the
// detail panel); above it the page says they are left out.
const exportDetailLimit = 5000

// exportRecordLimit caps the records embedded per batch (the detail panel
// shows the first 50).
const exportRecordLimit = 50

// exportWarnBytes is the page size above which export warns (the 1M-batch
// demo makes about 100 MB).
const exportWarnBytes = 32 << 20

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "[--scenario NAME | --scenario FILE.txn | --demo NAME | PATH] [--topic T --partition P] --out FILE",
		"Write one self-contained HTML file: the timeline of a partition and its step-through lesson, with scripts, styles and data inlined, "+
			"for read_committed and read_uncommitted. It opens from file:// with no server and no network.")
	scen := fs.String("scenario", "", "an embedded demo scenario by name (e.g. interleaved), or a scenario file (docs/scenarios.md)")
	demo := fs.String("demo", "", "an embedded demo scenario (the same as --scenario NAME)")
	topic := fs.String("topic", "", "the topic to export, when PATH holds several partitions")
	partition := fs.Int("partition", -1, "the partition to export, when PATH holds several")
	out := fs.String("out", "", "the HTML file to write (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if *scen != "" && *demo != "" {
		return usagef("give --scenario or --demo, not both")
	}
	var path string
	if *scen != "" {
		if _, err := findDemo(*scen); err == nil {
			*demo = *scen
		} else if _, err := os.Stat(*scen); err != nil {
			return usagef("--scenario %q is neither an embedded demo nor a file: %v", *scen, err)
		} else {
			dir, err := buildScenarioFile(*scen)
			if err != nil {
				return err
			}
			defer os.RemoveAll(filepath.Dir(dir))
			path = dir
		}
	}
	switch {
	case (*demo != "" || path != "") && fs.NArg() > 0:
		return usagef("give --scenario, --demo or a PATH, not two")
	case *demo == "" && path == "" && fs.NArg() == 0:
		return usagef("give --scenario NAME|FILE, --demo NAME or a PATH")
	case fs.NArg() > 1:
		return usagef("unexpected argument %q", fs.Arg(1))
	case fs.NArg() == 1:
		path = fs.Arg(0)
	}
	var cat *catalog
	if *demo != "" {
		if *demo == "big" {
			cat = &catalog{}
			cat.put(bigDemo())
		} else {
			if _, err := findDemo(*demo); err != nil {
				return err
			}
			cat = demoCatalog(false)
		}
	} else {
		ld, err := input.Open(path)
		if err != nil {
			return err
		}
		for _, p := range ld.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
		cat = &catalog{}
		cat.add("export", path, ld)
	}
	s, err := exportPick(cat, *demo, *topic, *partition)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := exportPage(ctx, &buf, cat, s); err != nil {
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s-%d of %s, %d bytes\n", *out, s.topic, s.partition, s.id, buf.Len())
	if buf.Len() > exportWarnBytes {
		fmt.Fprintf(e.stderr, "warning: %s is %d MiB; a browser may be slow to open it, or fail\n", *out, buf.Len()>>20)
	}
	return nil
}

// exportPick chooses the one partition to export.
func exportPick(cat *catalog, demo, topic string, partition int) (*source, error) {
	var hits []*source
	for _, s := range cat.list() {
		if demo != "" && s.id != demo {
			continue
		}
		if topic != "" && s.topic != topic {
			continue
		}
		if partition >= 0 && int(s.partition) != partition {
			continue
		}
		hits = append(hits, s)
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return nil, usagef("no partition matches --topic %q --partition %d", topic, partition)
	}
	var names []string
	for _, s := range hits {
		names = append(names, fmt.Sprintf("%s-%d", s.topic, s.partition))
	}
	return nil, usagef("several partitions (%s): choose one with --topic and --partition", strings.Join(names, ", "))
}

// exportData is the JSON timeline.js reads from the page (see the comment
// at the top of static/js/timeline.js).
type exportData struct {
	Version int                          `json:"version"`
	Streams map[string][]any             `json:"streams"`
	Reasons map[string][][4]any          `json:"reasons"`
	Batches map[string][]json.RawMessage `json:"batches"`
	Note    string                       `json:"note,omitempty"`
}

var exportIsolations = []string{"read_committed", "read_uncommitted"}

// exportPage writes the static page of s: the server's own handlers are run
// in-process (the websocket over an in-memory pipe), so the page holds
// exactly what the stream and the API would have sent.
func exportPage(ctx context.Context, w *bytes.Buffer, cat *catalog, s *source) error {
	l := s.get()
	a := api.New(apiCatalog{cat}, loaderRecords{cat})
	h := routes(cat, a)
	ln := newPipeListener()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() { a.Shutdown(); srv.Close() }()

	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	base := "/sources/" + url.PathEscape(s.id) + "/partitions/" + url.PathEscape(s.topic) + "/" + strconv.Itoa(int(s.partition))
	d := exportData{Version: 1, Streams: map[string][]any{}}
	for _, iso := range exportIsolations {
		msgs, err := recordStream(ctx, ln, "ws://export/ws/v1"+base+"?isolation="+iso)
		if err != nil {
			return fmt.Errorf("export %s: %w", iso, err)
		}
		d.Streams[iso] = msgs
	}
	if len(l.Batches) < exportDetailLimit {
		d.Reasons = map[string][][4]any{}
		d.Batches = map[string][]json.RawMessage{}
		for _, iso := range exportIsolations {
			rs, err := exportReasons(h, "/api/v1"+base+"/decisions?isolation="+iso)
			if err != nil {
				return err
			}
			d.Reasons[iso] = rs
			bs, err := exportBatches(h, "/api/v1"+base+"/batches/", iso, l)
			if err != nil {
				return err
			}
			d.Batches[iso] = bs
		}
	} else {
		d.Note = fmt.Sprintf("this export leaves out the reasons and batch details (%d batches, the limit is %d): run `server serve` for them",
			len(l.Batches), exportDetailLimit)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	// json.Marshal escapes <, > and &; this keeps "</" out even so.
	data = bytes.ReplaceAll(data, []byte("</"), []byte(`<\/`))
	o, err := api.ParseDiagnoseQuery(url.Values{}, time.Now())
	if err != nil {
		return err
	}
	return web.StaticLessonPage(ctx, w, s.id, s.title, l, l.Diagnose(o), data, web.NewLesson(s.id, l, -1))
}

// buildScenarioFile builds a scenario file into a fresh temporary log
// directory and returns the partition directory: the export then reads it
// back through the loader, as serve does the demos. The caller removes
// the parent directory.
func buildScenarioFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc, err := scenario.Parse(f, name)
	if err != nil {
		return "", err
	}
	b, err := sc.Build()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "txnscope-export-")
	if err != nil {
		return "", err
	}
	if err := b.WriteDir(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return filepath.Join(tmp, b.Dir), nil
}

// recordStream reads one stream generation, meta to done.
func recordStream(ctx context.Context, ln *pipeListener, u string) ([]any, error) {
	dialer := websocket.Dialer{NetDialContext: ln.dial, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.DialContext(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var out []any
	for {
		kind, b, err := conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		if kind == websocket.BinaryMessage {
			out = append(out, base64.StdEncoding.EncodeToString(b))
			continue
		}
		var m struct{ Type, Message string }
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		switch m.Type {
		case "error":
			return nil, errors.New("stream: " + m.Message)
		case "progress":
			continue // the page needs no progress from a file
		}
		out = append(out, json.RawMessage(b))
		if m.Type == "done" {
			return out, nil
		}
	}
}

func exportGet(h http.Handler, u string) ([]byte, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", u, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return rec.Body.Bytes(), nil
}

// exportReasons is every decision's reason: [from, to, is a batch, reason].
func exportReasons(h http.Handler, u string) ([][4]any, error) {
	b, err := exportGet(h, u)
	if err != nil {
		return nil, err
	}
	out := [][4]any{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			From, To   int64
			Reason     string
			BatchIndex int `json:"batch_index"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, err
		}
		out = append(out, [4]any{d.From, d.To, d.BatchIndex >= 0, d.Reason})
	}
	return out, sc.Err()
}

// exportBatches is the batch API's answer for every batch, its records
// capped at exportRecordLimit.
func exportBatches(h http.Handler, prefix, iso string, l *txnindex.Log) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(l.Batches))
	for i := range l.Batches {
		b, err := exportGet(h, prefix+strconv.FormatInt(l.Batches[i].BaseOffset, 10)+"?isolation="+iso)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		var recs []json.RawMessage
		if err := json.Unmarshal(m["record_list"], &recs); err == nil && len(recs) > exportRecordLimit {
			m["record_list"], _ = json.Marshal(recs[:exportRecordLimit])
			m["records_note"], _ = json.Marshal(fmt.Sprintf("the export holds the first %d of %d records", exportRecordLimit, len(recs)))
			if b, err = json.Marshal(m); err != nil {
				return nil, err
			}
		}
		out = append(out, json.RawMessage(b))
	}
	return out, nil
}

// pipeListener is an in-memory net.Listener: the export talks to the
// server's handlers without opening a port.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "export" }
