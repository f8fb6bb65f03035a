package cli

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testtool"
)

// answer is what every view of one partition must agree on: the offsets,
// who pins the LSO and how long it has been held.
type answer struct {
	Unknown            bool // no .log segment: the offsets are not known
	LogStart, LSO, HWM int64
	Pinner             string // "producer 6 epoch 0 from 3 (open)", "" when clear
	HeldMs             int64  // -1 when nothing pins the LSO or it is unknown
}

func (a answer) String() string {
	return fmt.Sprintf("log start %d, LSO %d, HWM %d, pinned by %q, held %d ms", a.LogStart, a.LSO, a.HWM, a.Pinner, a.HeldMs)
}

// diagAnswer is the JSON of a diagnosis (diagnose --format json's
// partitions, the API's body) as an answer.
type diagAnswer struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	LogStartOffset int64  `json:"log_start_offset"`
	LSO            int64  `json:"last_stable_offset"`
	HWM            int64  `json:"high_watermark"`
	HeldMs         int64  `json:"lso_held_ms"`
	Note           string `json:"note"`
	OffsetsUnknown any    `json:"offsets_unknown"`
	PinnedBy       *struct {
		ProducerID    int64  `json:"producer_id"`
		ProducerEpoch int16  `json:"producer_epoch"`
		FirstOffset   int64  `json:"first_offset"`
		State         string `json:"state"`
	} `json:"pinned_by"`
}

func (d diagAnswer) answer() answer {
	if d.OffsetsUnknown != nil {
		return answer{Unknown: true, HeldMs: -1}
	}
	a := answer{LogStart: d.LogStartOffset, LSO: d.LSO, HWM: d.HWM, HeldMs: -1}
	if p := d.PinnedBy; p != nil {
		a.Pinner = fmt.Sprintf("producer %d epoch %d from %d (%s)", p.ProducerID, p.ProducerEpoch, p.FirstOffset, p.State)
		a.HeldMs = d.HeldMs
	}
	return a
}

var (
	pageLogStart = regexp.MustCompile(`data-testid="summary-log-start">(-?\d+)<`)
	pageLSO      = regexp.MustCompile(`(?s)data-testid="diag-lso"[^>]*>\s*(-?\d+)`)
	pageHWM      = regexp.MustCompile(`data-testid="diag-hwm">(-?\d+)<`)
	pageHeld     = regexp.MustCompile(`data-testid="diag-lag-time" data-ms="(-?\d+)"`)
	pagePinned   = regexp.MustCompile(`data-testid="pinned-by" data-producer="(-?\d+)" data-epoch="(-?\d+)" data-first-offset="(-?\d+)" data-state="([a-z_]+)"`)
	pageStuck    = regexp.MustCompile(`data-testid="diagnosis"[^>]*data-state="stuck"`)
)

// pageAnswer reads the answer of a partition page or an export: the
// summary's log start and the diagnosis panel.
func pageAnswer(t *testing.T, what, page string) answer {
	t.Helper()
	if strings.Contains(page, `data-testid="summary-offsets-unknown"`) {
		return answer{Unknown: true, HeldMs: -1}
	}
	num := func(re *regexp.Regexp) int64 {
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("%s: no %s", what, re)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	a := answer{LogStart: num(pageLogStart), LSO: num(pageLSO), HWM: num(pageHWM), HeldMs: -1}
	if m := pagePinned.FindStringSubmatch(page); m != nil {
		a.Pinner = fmt.Sprintf("producer %s epoch %s from %s (%s)", m[1], m[2], m[3], m[4])
		if pageStuck.MatchString(page) {
			a.HeldMs = num(pageHeld)
		}
	}
	return a
}

// TestOneAnswerPerPartition: for the same input at the same now, the six
// views of a partition (diagnose --format json, GET …/diagnosis, the
// partition page's summary and diagnosis panel, the index row, the
// export) agree on the log start, the LSO, the high watermark, who pins
// the LSO, its state and how long the LSO has been held. The inputs are
// the real log directories of testdata and the production shapes.
func TestOneAnswerPerPartition(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := now.Format(time.RFC3339)
	type input struct{ name, path string }
	var inputs []input
	testtool.NeedDir(t, realdata)
	for _, pat := range []string{"*/kafka-data", "*/kafka-logs"} {
		dirs, _ := filepath.Glob(filepath.Join(realdata, pat))
		for _, d := range dirs {
			inputs = append(inputs, input{strings.TrimPrefix(d, realdata+"/"), d})
		}
	}
	for _, tc := range productionShapes(now) {
		if tc.check == nil || len(tc.args) > 0 {
			continue // a failure prints no answer; extra flags have no page
		}
		inputs = append(inputs, input{tc.name, tc.dir(t)})
	}
	compared := 0
	for _, in := range inputs {
		t.Run(strings.ReplaceAll(in.name, "/", "_"), func(t *testing.T) {
			code, out, errOut := runArgs(t, "diagnose", "--format", "json", "--now", at, in.path)
			if code != exitOK && code != exitHanging {
				t.Fatalf("diagnose: exit %d: %s", code, errOut)
			}
			var cli struct {
				Partitions []diagAnswer `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatalf("diagnose json: %v\n%s", err, out)
			}
			s := startServe(t, "--load", in.path)
			var srcs struct {
				Sources []struct {
					ID         string `json:"id"`
					Partitions []struct {
						Topic     string `json:"topic"`
						Partition int32  `json:"partition"`
					} `json:"partitions"`
				} `json:"sources"`
			}
			getJSONInto(t, s.url("/api/v1/sources"), &srcs)
			where := map[string]string{} // topic-partition -> source id
			for _, src := range srcs.Sources {
				if !strings.HasPrefix(src.ID, "load") {
					continue
				}
				for _, p := range src.Partitions {
					where[fmt.Sprintf("%s-%d", p.Topic, p.Partition)] = src.ID
				}
			}
			for _, d := range cli.Partitions {
				if d.Note != "" {
					continue // not a data partition: no LSO to agree on
				}
				tp := fmt.Sprintf("%s-%d", d.Topic, d.Partition)
				id, ok := where[tp]
				if !ok {
					t.Errorf("%s: diagnosed by the CLI, not served", tp)
					continue
				}
				want := d.answer()
				q := "?now=" + url.QueryEscape(at)
				part := "/sources/" + id + "/partitions/" + url.PathEscape(d.Topic) + "/" + strconv.Itoa(int(d.Partition))

				var api diagAnswer
				getJSONInto(t, s.url("/api/v1"+part+"/diagnosis"+q), &api)
				page := pageAnswer(t, tp+" page", getPage(t, s.url(part+q)))

				// The index row, once the page has loaded the partition.
				index := getPage(t, s.url("/"+q))
				row := regexp.MustCompile(`<tr data-testid="partition-row-` + regexp.QuoteMeta(id+"-"+d.Topic+"-"+strconv.Itoa(int(d.Partition))) +
					`" [^>]*data-lag-ms="(-?\d+)" data-lso="(-?\d+)" data-hwm="(-?\d+)" data-state="([a-z_-]+)"`).FindStringSubmatch(index)
				if row == nil {
					t.Errorf("%s: no index row", tp)
					continue
				}

				out := filepath.Join(t.TempDir(), "export.html")
				if code, _, errOut := runArgs(t, "export", "--now", at, "--topic", d.Topic, "--partition", strconv.Itoa(int(d.Partition)), "--out", out, in.path); code != 0 {
					t.Fatalf("export: exit %d: %s", code, errOut)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				export := pageAnswer(t, tp+" export", string(b))

				for _, v := range []struct {
					view string
					got  answer
				}{{"GET …/diagnosis", api.answer()}, {"partition page", page}, {"export", export}} {
					if v.got != want {
						t.Errorf("%s: %s says\n  %v\nwhere diagnose --format json says\n  %v", tp, v.view, v.got, want)
					}
				}
				if want.Unknown {
					compared++
					continue // the row says unknown in words; no numbers to compare
				}
				lso, _ := strconv.ParseInt(row[2], 10, 64)
				hwm, _ := strconv.ParseInt(row[3], 10, 64)
				held, _ := strconv.ParseInt(row[1], 10, 64)
				state := "clear"
				if d.PinnedBy != nil {
					state = d.PinnedBy.State
				}
				if lso != want.LSO || hwm != want.HWM || held != want.HeldMs || html.UnescapeString(row[4]) != state {
					t.Errorf("%s: the index row says LSO %d, HWM %d, held %d ms, %s; diagnose --format json says %v", tp, lso, hwm, held, row[4], want)
				}
				compared++
			}
		})
	}
	if compared < 10 {
		t.Errorf("only %d partitions compared", compared)
	}
}
