package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
)

// The real files the upload tests send: a segment of 14 batches from 13
// idempotent producers (BiggerBrain/kafka) and a pcapng of kafka-go
// consuming (segmentio/kafka-go). Both are in testdata/realdata.
var (
	uploadSegment = filepath.Join(realdata, "BiggerBrain_kafka/data/lsx1-0/00000000000000000000.log")
	uploadCapture = filepath.Join(realdata, "segmentio_kafka-go/fixtures/v2-v2.pcapng")
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	testtool.NeedDir(t, realdata)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// uploadAnswer is the 201 answer, or an error answer's fields.
type uploadAnswer struct {
	api.UploadResponse
	Error string `json:"error"`
	Code  int    `json:"code"`
}

// upload POSTs body as file name to the server at base; hdr adds headers.
func upload(t testing.TB, base, name string, body io.Reader, hdr http.Header) (int, uploadAnswer) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/api/v1/uploads?name="+url.QueryEscape(name), body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var a uploadAnswer
	if ct := resp.Header.Get("Content-Type"); ct == "application/json" {
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	} else {
		a.Error = string(raw)
	}
	return resp.StatusCode, a
}

// decisionsOf is the NDJSON decisions of a partition under both isolation
// levels.
func decisionsOf(t *testing.T, s *served, id, topic string, partition int32) string {
	t.Helper()
	var out strings.Builder
	for _, iso := range []string{"read_committed", "read_uncommitted"} {
		resp, body := get(t, s.url(fmt.Sprintf("/api/v1/sources/%s/partitions/%s/%d/decisions?isolation=%s", id, topic, partition, iso)))
		if resp.StatusCode != 200 || body == "" {
			t.Fatalf("%s decisions %s: %d %s", id, iso, resp.StatusCode, body)
		}
		out.WriteString(body)
	}
	return out.String()
}

// TestUploadDecidesAsLoad uploads a real segment, a real pcapng capture,
// kafka-dump-log.sh text and a raw capture, and checks that each is served with the decisions
// serve --load gives for the same file, and that its page is titled with
// the file name.
func TestUploadDecidesAsLoad(t *testing.T) {
	dir := t.TempDir()
	// A directory whose name is not <topic>-<partition>, so that --load
	// names the segment's topic from the file, as an upload (which comes
	// without a directory) does.
	seg := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(seg, readFile(t, uploadSegment), 0o644); err != nil {
		t.Fatal(err)
	}
	// `txnscope inspect --records`' text of the segment's directory.
	ld, err := input.Open(filepath.Dir(uploadSegment))
	if err != nil {
		t.Fatal(err)
	}
	var dumpText strings.Builder
	inspect.WriteText(&dumpText, inspect.New(ld, inspect.Options{Batches: true, Records: true}))
	dump := dumpText.String()
	txt := filepath.Join(dir, "lsx1-0.txt")
	if err := os.WriteFile(txt, []byte(dump[strings.Index(dump, "Dumping "):]), 0o644); err != nil {
		t.Fatal(err)
	}
	// A raw capture: one poll's recording (watch --once --record) of a
	// kfake broker with a committed and an open transaction.
	addr, _ := testfixture.WatchCluster(t)
	raw := filepath.Join(dir, "live.raw")
	recordPoll(t, addr, "w", raw)
	cases := []struct{ path, kind string }{{seg, "segment"}, {uploadCapture, "capture"}, {txt, "dump text"}, {raw, "raw capture"}}
	s := startServe(t, func(o *Options) {
		o.MaxUploads = 8
		for _, c := range cases {
			o.Loads = append(o.Loads, c.path)
		}
	})
	for i, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			name := filepath.Base(c.path)
			code, a := upload(t, "http://"+s.addr, name, bytes.NewReader(readFile(t, c.path)), nil)
			if code != http.StatusCreated || a.Kind != c.kind || len(a.Partitions) == 0 || len(a.Problems) != 0 {
				t.Fatalf("upload %s: %d %+v", name, code, a)
			}
			if want := fmt.Sprintf("upload-%d", i+1); a.ID != want {
				t.Errorf("id %q, want %q", a.ID, want)
			}
			ld, err := input.Open(c.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Partitions) != len(ld.Partitions) {
				t.Fatalf("%d partitions uploaded, %d loaded", len(a.Partitions), len(ld.Partitions))
			}
			for _, p := range a.Partitions {
				got := decisionsOf(t, s, a.ID, p.Topic, p.Partition)
				want := decisionsOf(t, s, fmt.Sprintf("load%d", i+1), p.Topic, p.Partition)
				if got != want {
					t.Errorf("%s-%d: the upload decides\n%.600s\n--load decides\n%.600s", p.Topic, p.Partition, got, want)
				}
				if p.URL != fmt.Sprintf("/sources/%s/partitions/%s/%d", a.ID, p.Topic, p.Partition) {
					t.Errorf("url %q", p.URL)
				}
				resp, page := get(t, s.url(p.URL))
				if resp.StatusCode != 200 || !strings.Contains(page, name+" ("+c.kind+")") {
					t.Errorf("%s: %d, page without the title %q", p.URL, resp.StatusCode, name)
				}
			}
		})
	}
}

// TestUploadLimit: a body over --max-upload-bytes is refused with 413
// naming the limit, whether its length is declared or it comes chunked;
// one at the limit is taken. --max-upload-bytes 0 turns uploads off, and
// the index page drops its drop zone.
func TestUploadLimit(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, func(o *Options) { o.MaxUploadBytes = int64(len(b) - 1) })
	for _, body := range []io.Reader{bytes.NewReader(b), io.MultiReader(bytes.NewReader(b))} { // the second has no length
		code, a := upload(t, "http://"+s.addr, "big.log", body, nil)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(a.Error, fmt.Sprintf("upload limit of 1.4 KiB (%d bytes, serve --max-upload-bytes)", len(b)-1)) {
			t.Errorf("over the limit: %d %q", code, a.Error)
		}
	}
	if code, a := upload(t, "http://"+s.addr, "fits.log", bytes.NewReader(b[:len(b)-1]), nil); code != http.StatusCreated {
		t.Errorf("at the limit: %d %+v", code, a)
	}
	if _, page := get(t, s.url("/")); !strings.Contains(page, `data-testid="drop-zone"`) || !strings.Contains(page, "up to 1.4 KiB, kept in memory, never saved") {
		t.Errorf("index page without the drop zone and its limit")
	}

	off := startServe(t, func(o *Options) { o.MaxUploadBytes = 0 })
	if code, a := upload(t, "http://"+off.addr, "x.log", bytes.NewReader(b), nil); code != http.StatusForbidden || !strings.Contains(a.Error, "uploads are disabled") {
		t.Errorf("disabled: %d %q", code, a.Error)
	}
	if _, page := get(t, off.url("/")); strings.Contains(page, "drop-zone") {
		t.Error("drop zone shown with uploads disabled")
	}
}

// TestUploadDamaged: bytes that are no Kafka input are refused with 422;
// a segment cut inside its fifth batch keeps the four before and says
// where the damage is, prefixed with the file name, with 201, and the
// timeline page lists the problem.
func TestUploadDamaged(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t)
	base := "http://" + s.addr
	if code, a := upload(t, base, "notes.txt", strings.NewReader("these are not the bytes you are looking for"), nil); code != http.StatusUnprocessableEntity ||
		!strings.Contains(a.Error, "notes.txt: not a Kafka input") {
		t.Errorf("garbage: %d %+v", code, a)
	}
	// A .log whose first batch is cut: nothing to keep.
	if code, a := upload(t, base, "cut.log", bytes.NewReader(b[:50]), nil); code != http.StatusUnprocessableEntity || len(a.Problems) != 1 ||
		!strings.Contains(a.Problems[0], "cut.log") || !strings.Contains(a.Problems[0], "byte 0x0") {
		t.Errorf("nothing readable: %d %+v", code, a)
	}

	ld, err := input.Open(uploadSegment)
	if err != nil {
		t.Fatal(err)
	}
	fifth := ld.Partitions[0].Log.Batches[4]
	cut := fifth.Position() + int64(fifth.Size) - 10
	code, a := upload(t, base, "00000000000000000000.log", bytes.NewReader(b[:cut]), nil)
	if code != http.StatusCreated || len(a.Problems) != 1 {
		t.Fatalf("truncated: %d %+v", code, a)
	}
	if p := a.Problems[0]; !strings.Contains(p, "00000000000000000000.log") || !strings.Contains(p, fmt.Sprintf("byte %#x", fifth.Position())) || !strings.Contains(p, "truncated") {
		t.Errorf("problem %q does not name the file, the byte %#x and the truncation", p, fifth.Position())
	}
	// One decision range per batch: the four before the cut.
	if _, nd := get(t, s.url("/api/v1"+a.Partitions[0].URL+"/decisions")); strings.Count(nd, "\n") != 4 {
		t.Errorf("kept %d batches, want the 4 before the cut:\n%s", strings.Count(nd, "\n"), nd)
	}
	_, page := get(t, s.url(a.Partitions[0].URL))
	if !strings.Contains(page, `data-testid="load-problems"`) || !strings.Contains(page, fmt.Sprintf("byte %#x", fifth.Position())) {
		t.Error("the timeline page does not list the problem")
	}
}

// TestUploadCrossOrigin: a browser POST from another site is refused (a
// page anywhere on the web could otherwise feed this loopback server), a
// same-origin one and one from an --allowed-origin are taken, and so is a
// program's POST, which carries neither header.
func TestUploadCrossOrigin(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, func(o *Options) { o.AllowedOrigins = append(o.AllowedOrigins, "https://docs.example.com") })
	base := "http://" + s.addr
	for _, c := range []struct {
		hdr  http.Header
		code int
	}{
		{http.Header{"Origin": {"http://evil.example"}}, http.StatusForbidden},
		{http.Header{"Origin": {"http://localhost:1"}}, http.StatusForbidden},
		{http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{http.Header{"Sec-Fetch-Site": {"same-site"}, "Origin": {"http://127.0.0.1:1"}}, http.StatusForbidden},
		{http.Header{"Origin": {base}}, http.StatusCreated},
		{http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {base}}, http.StatusCreated},
		{http.Header{"Origin": {"https://docs.example.com"}, "Sec-Fetch-Site": {"cross-site"}}, http.StatusCreated},
		{nil, http.StatusCreated},
	} {
		code, a := upload(t, base, "s.log", bytes.NewReader(b), c.hdr)
		if code != c.code || (code == http.StatusForbidden && !strings.Contains(a.Error, "cross-origin request refused")) {
			t.Errorf("%v: %d %q, want %d", c.hdr, code, a.Error, c.code)
		}
	}
}

// TestUploadToken: with --auth-token-file an upload needs the token like
// every other request.
func TestUploadToken(t *testing.T) {
	b := readFile(t, uploadSegment)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef-upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, func(o *Options) { o.AuthTokenFile = tok })
	base := "http://" + s.addr
	if code, a := upload(t, base, "s.log", bytes.NewReader(b), nil); code != http.StatusUnauthorized || !strings.Contains(a.Error, "needs its token") {
		t.Errorf("without the token: %d %q", code, a.Error)
	}
	if code, _ := upload(t, base, "s.log", bytes.NewReader(b), http.Header{"Authorization": {"Bearer wrong-token-wrong-token"}}); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	if code, a := upload(t, base, "s.log", bytes.NewReader(b), http.Header{"Authorization": {"Bearer 0123456789abcdef-upload"}}); code != http.StatusCreated {
		t.Errorf("with the token: %d %+v", code, a)
	}
}

// sourceIDs lists the ids of /api/v1/sources, in order.
func sourceIDs(t *testing.T, s *served) []string {
	t.Helper()
	var body struct{ Sources []struct{ ID string } }
	getJSONInto(t, s.url("/api/v1/sources"), &body)
	var ids []string
	for _, src := range body.Sources {
		ids = append(ids, src.ID)
	}
	return ids
}

// TestUploadEviction: past --max-uploads the oldest upload goes, and the
// answer says which; the demos and --load sources stay. An upload that
// does not fit beside them within --max-sources is refused with 507.
func TestUploadEviction(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, loads(uploadSegment), func(o *Options) { o.MaxUploads = 2 })
	base := "http://" + s.addr
	before := sourceIDs(t, s)
	for i := 1; i <= 4; i++ {
		code, a := upload(t, base, fmt.Sprintf("f%d.log", i), bytes.NewReader(b), nil)
		if code != http.StatusCreated {
			t.Fatalf("upload %d: %d %+v", i, code, a)
		}
		var want []api.EvictedUpload
		if i > 2 {
			want = []api.EvictedUpload{{ID: fmt.Sprintf("upload-%d", i-2), Title: fmt.Sprintf("f%d.log (segment)", i-2)}}
		}
		if !slices.Equal(a.Evicted, want) {
			t.Errorf("upload %d evicted %+v, want %+v", i, a.Evicted, want)
		}
	}
	if got, want := sourceIDs(t, s), append(slices.Clone(before), "upload-3", "upload-4"); !slices.Equal(got, want) {
		t.Errorf("sources %v, want %v", got, want)
	}
	if resp, _ := get(t, s.url("/api/v1/sources/upload-1/partitions")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("evicted upload-1: %d", resp.StatusCode)
	}

	// Room for one partition beside the demos: each upload replaces the last.
	n := len(demoCatalog(false).list())
	one := startServe(t, func(o *Options) { o.MaxSources = n + 1 })
	for i := 1; i <= 2; i++ {
		if code, a := upload(t, "http://"+one.addr, "f.log", bytes.NewReader(b), nil); code != http.StatusCreated || (i == 2 && len(a.Evicted) != 1) {
			t.Errorf("upload %d with room for one: %d %+v", i, code, a)
		}
	}
	full := startServe(t, func(o *Options) { o.MaxSources = n })
	if code, a := upload(t, "http://"+full.addr, "f.log", bytes.NewReader(b), nil); code != http.StatusInsufficientStorage || !strings.Contains(a.Error, "--max-sources") {
		t.Errorf("no room: %d %+v", code, a)
	}
}

// TestUploadConcurrent uploads from several clients while others read the
// catalog through every reader (sources, the index page, a timeline, the
// decisions of the uploads being added); run with -race. At the end the
// catalog holds exactly the newest --max-uploads uploads.
func TestUploadConcurrent(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, func(o *Options) { o.MaxUploads = 3 })
	base := "http://" + s.addr
	const writers, each = 4, 3
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				code, a := upload(t, base, fmt.Sprintf("w%d-%d.log", w, i), bytes.NewReader(b), nil)
				if code != http.StatusCreated {
					errs <- fmt.Errorf("upload: %d %+v", code, a)
					return
				}
				// The upload may already be evicted by the others: 404 then.
				resp, err := http.Get(base + "/api/v1" + a.Partitions[0].URL + "/decisions")
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 404 {
					errs <- fmt.Errorf("decisions of %s: %d", a.ID, resp.StatusCode)
				}
			}
		})
	}
	var readers sync.WaitGroup
	for _, p := range []string{"/api/v1/sources", "/", interleaved} {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(base + p)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("%s: %d", p, resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var uploads []string
	for _, id := range sourceIDs(t, s) {
		if strings.HasPrefix(id, "upload-") {
			uploads = append(uploads, id)
		}
	}
	// Numbers are handed out as uploads enter the catalog, so the newest
	// are the highest, and in order.
	want := []string{fmt.Sprintf("upload-%d", writers*each-2), fmt.Sprintf("upload-%d", writers*each-1), fmt.Sprintf("upload-%d", writers*each)}
	if !slices.Equal(uploads, want) {
		t.Errorf("uploads kept %v, want the newest %v", uploads, want)
	}
}

// TestUploadHostileNames: the name is a label only. A path is cut to its
// last element and never opened or created; markup is escaped on every
// page and in JSON; a name that is no name is refused.
func TestUploadHostileNames(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t)
	base := "http://" + s.addr
	cwd, _ := os.ReadDir(".")
	code, a := upload(t, base, "../../etc/passwd", bytes.NewReader(b), nil)
	if code != http.StatusCreated || a.Title != "passwd (segment)" || a.Partitions[0].Topic != "passwd" {
		t.Errorf("../../etc/passwd: %d %+v", code, a)
	}
	code, a = upload(t, base, `C:\Users\x\..\evil.log`, bytes.NewReader(b), nil)
	if code != http.StatusCreated || a.Title != "evil.log (segment)" {
		t.Errorf("a Windows path: %d %+v", code, a)
	}
	const xss = `<script>alert(1)</script><img src=x onerror=alert(2)>.log`
	code, a = upload(t, base, xss, bytes.NewReader(b), nil)
	if code != http.StatusCreated {
		t.Fatalf("markup: %d %+v", code, a)
	}
	// The name lost everything up to its last "/" (the one in </script>).
	if a.Title != "script><img src=x onerror=alert(2)>.log (segment)" {
		t.Errorf("title %q", a.Title)
	}
	for _, u := range []string{"/", a.Partitions[0].URL, "/api/v1/sources"} {
		resp, body := get(t, s.url(u))
		if resp.StatusCode != 200 || strings.Contains(body, "<img src=x") || !strings.Contains(body, "img src=x onerror=alert(2)") {
			t.Errorf("%s: %d, the name is not there escaped", u, resp.StatusCode)
		}
	}
	for _, name := range []string{"", "..", "a/", "\x00\x01"} {
		if code, a := upload(t, base, name, bytes.NewReader(b), nil); code != http.StatusBadRequest || !strings.Contains(a.Error, "want ?name=FILE") {
			t.Errorf("name %q: %d %q", name, code, a.Error)
		}
	}
	if after, _ := os.ReadDir("."); len(after) != len(cwd) {
		t.Errorf("the working directory changed: %d entries, %d before", len(after), len(cwd))
	}
}

// slowReader sends the first half of its bytes, pauses, then the rest.
type slowReader struct {
	b     []byte
	pause time.Duration
	n     int // reads so far
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if r.n++; r.n == 2 {
		time.Sleep(r.pause)
	}
	want := len(r.b)
	if r.n == 1 {
		want /= 2
	}
	n := copy(p, r.b[:want])
	r.b = r.b[n:]
	return n, nil
}

// TestUploadSlowBody: --read-timeout bounds ordinary requests, but an
// upload's body may take up to --request-timeout to arrive (a large file
// over a slow link), and no longer.
func TestUploadSlowBody(t *testing.T) {
	b := readFile(t, uploadSegment)
	s := startServe(t, func(o *Options) { o.ReadTimeout = 500 * time.Millisecond; o.RequestTimeout = 3 * time.Second })
	if code, a := upload(t, "http://"+s.addr, "slow.log", &slowReader{b: b, pause: time.Second}, nil); code != http.StatusCreated {
		t.Errorf("a body slower than --read-timeout: %d %+v", code, a)
	}
	req, _ := http.NewRequest("POST", s.url("/api/v1/uploads?name=slower.log"), &slowReader{b: b, pause: 5 * time.Second})
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			t.Error("a body slower than --request-timeout was taken")
		}
	}
}

// TestLoadProblemsOnTimeline: damage in a --load PATH is listed on its
// timeline as an upload's is, not only on stderr.
func TestLoadProblemsOnTimeline(t *testing.T) {
	b := readFile(t, uploadSegment)
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(seg, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, loads(seg))
	if !strings.Contains(s.errb.String(), "warning: loader: 00000000000000000000.log: batch at byte") {
		t.Errorf("stderr %q", s.errb.String())
	}
	_, page := get(t, s.url("/sources/load1/partitions/00000000000000000000/0"))
	if !strings.Contains(page, `data-testid="load-problems"`) || !strings.Contains(page, "00000000000000000000.log: batch at byte") {
		t.Error("the timeline does not list the --load damage")
	}
	_, page = get(t, s.url(interleaved))
	if strings.Contains(page, `data-testid="load-problems"`) {
		t.Error("an intact demo lists problems")
	}
}

// TestUploadRecords: the detail panel's records of an uploaded segment and
// of a segment loaded by path are decoded from the same bytes, and equal.
func TestUploadRecords(t *testing.T) {
	dir := t.TempDir()
	seg := filepath.Join(dir, "00000000000000000000.log")
	data := readFile(t, uploadSegment)
	if err := os.WriteFile(seg, data, 0o444); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, loads(seg))
	code, a := upload(t, "http://"+s.addr, filepath.Base(seg), bytes.NewReader(data), nil)
	if code != http.StatusCreated || len(a.Partitions) != 1 {
		t.Fatalf("upload: %d %+v", code, a)
	}
	p := a.Partitions[0]
	ld, err := input.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	l := ld.Partitions[0].Log
	checked := 0
	for i := range l.Batches {
		b := &l.Batches[i]
		if i%max(len(l.Batches)/20, 1) != 0 {
			continue
		}
		var got [2]struct {
			RecordList []json.RawMessage `json:"record_list"`
			Note       string            `json:"records_note"`
		}
		for k, id := range []string{a.ID, "load1"} {
			resp, body := get(t, s.url(fmt.Sprintf("/api/v1/sources/%s/partitions/%s/%d/batches/%d", id, p.Topic, p.Partition, b.BaseOffset)))
			if resp.StatusCode != 200 {
				t.Fatalf("%s batch %d: %d %s", id, b.BaseOffset, resp.StatusCode, body)
			}
			if err := json.Unmarshal([]byte(body), &got[k]); err != nil {
				t.Fatal(err)
			}
		}
		if len(got[0].RecordList) == 0 || len(got[0].RecordList) != int(b.Records) {
			t.Fatalf("upload batch %d: %d records decoded (note %q), the header says %d", b.BaseOffset, len(got[0].RecordList), got[0].Note, b.Records)
		}
		if fmt.Sprint(got[0].RecordList) != fmt.Sprint(got[1].RecordList) {
			t.Errorf("batch %d: the upload's records differ from --load's", b.BaseOffset)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no batch checked")
	}
}
