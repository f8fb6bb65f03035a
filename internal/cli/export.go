package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
	"github.com/txnscope/txnscope/web"
)

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
	title := fs.String("title", "", "the page's subtitle; default: the demo's or scenario's title, or the input's name (never its full path)")
	nowFlag := fs.String("now", "", "the clock the diagnosis ages transactions against (RFC 3339 or Unix ms); default: now (for a demo or scenario, its own time), as the served page")
	if err := parse(fs, args); err != nil {
		return err
	}
	clock, at := url.Values{}, time.Now()
	if *nowFlag != "" {
		t, err := parseTime(*nowFlag)
		if err != nil {
			return usagef("--now: %v", err)
		}
		clock.Set("now", *nowFlag)
		at = t
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if *scen != "" && *demo != "" {
		return usagef("give --scenario or --demo, not both")
	}
	var path, scenTitle string
	if *scen != "" {
		if _, err := findDemo(*scen); err == nil {
			*demo = *scen
		} else if _, err := os.Stat(*scen); err != nil {
			return usagef("--scenario %q is neither an embedded demo nor a file: %v", *scen, err)
		} else {
			dir, t, err := buildScenarioFile(*scen)
			if err != nil {
				return err
			}
			// The scenario is built in a temporary directory: its name
			// is no one's business, the scenario's title is.
			scenTitle = cmp.Or(t, strings.TrimSuffix(filepath.Base(*scen), filepath.Ext(*scen)))
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
	var srcs []*exportSource
	var kind string
	diags := view.NewDiagnoser()
	if *demo != "" {
		s, err := exportDemo(*demo)
		if err != nil {
			return err
		}
		srcs = []*exportSource{s}
	} else {
		in, err := load.Open(ctx, path, load.Question{Kind: load.Whole, Position: -1}, load.Budget{})
		if err != nil {
			return err
		}
		ld := in.Contents
		for _, p := range ld.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
		diags.SetEvidenceOf(ld) // the internal topics' evidence, as the server joins it
		for _, p := range ld.Partitions {
			srcs = append(srcs, &exportSource{id: "export", title: fmt.Sprintf("%s (%s)", filepath.Base(filepath.Clean(path)), ld.Kind),
				topic: p.Log.Topic, partition: p.Log.Partition, log: p.Log, files: ld.Files(p.Log.Topic, p.Log.Partition)})
		}
		kind = ld.Kind
	}
	s, err := exportPick(srcs, *topic, *partition)
	if err != nil {
		return err
	}
	// A scenario file tells a story in its own time, as a demo does: its
	// page ages it by its newest write, not by the day it is exported.
	s.demo = s.demo || *scen != ""
	if kind != "" && *scen == "" {
		s.title = exportTitle(s, path, kind, at)
	}
	if t := cmp.Or(*title, scenTitle); t != "" {
		s.title = t
	}
	var buf bytes.Buffer
	note, err := exportPage(ctx, &buf, s, clock, diags)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	what := s.title
	if name := txnindex.PartitionName(s.topic, s.partition); !strings.HasPrefix(what, name) {
		what = name + ", " + what
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s; %s (%s)\n", *out, what, txnindex.Bytes(int64(buf.Len())), txnindex.Plural(buf.Len(), "byte", "bytes"))
	if note != "" {
		fmt.Fprintf(e.stdout, "note: %s\n", note)
	}
	if buf.Len() > exportWarnBytes {
		fmt.Fprintf(e.stderr, "warning: %s is %d MiB; a browser may be slow to open it, or fail\n", *out, buf.Len()>>20)
	}
	return nil
}

// exportTitle is the subtitle of an export of a partition read from disk:
// what it is, from where and when, as "orders-3 from kafka-logs (log
// directory), exported 2026-12-06". The load is named by its base name,
// never by its full path (the file travels; the path is no reader's
// business).
func exportTitle(s *exportSource, path, kind string, at time.Time) string {
	name := txnindex.PartitionName(s.topic, s.partition)
	from := " from " + filepath.Base(filepath.Clean(path))
	if filepath.Base(filepath.Clean(path)) == name {
		from = ""
	}
	return fmt.Sprintf("%s%s (%s), exported %s", name, from, kind, at.UTC().Format(time.DateOnly))
}

// exportSource is the partition an export writes: its log, the files
// its records are decoded from (nil: none), and how the page names it.
type exportSource struct {
	id, title, topic string
	partition        int32
	log              *txnindex.Log
	files            *loader.Partition
	demo             bool // aged by its own time (view.DiagnoseClock)
}

// exportDemo is the demo named name: an embedded scenario, read back from
// its files as the server serves it (gen.Demo.Log), or the generated
// 1M-batch one.
func exportDemo(name string) (*exportSource, error) {
	if name == "big" {
		return &exportSource{id: name, title: gen.BigTitle, topic: gen.BigTopic, demo: true, log: txnindex.Build(gen.Big(gen.BigBatches))}, nil
	}
	d, err := findDemo(name)
	if err != nil {
		return nil, err
	}
	lp, l, err := d.Log()
	if err != nil {
		return nil, err
	}
	return &exportSource{id: d.Name, title: d.Title, topic: l.Topic, partition: l.Partition, log: l, files: lp, demo: true}, nil
}

// exportPick chooses the one partition to export.
func exportPick(srcs []*exportSource, topic string, partition int) (*exportSource, error) {
	var hits []*exportSource
	for _, s := range srcs {
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
	// The first ListCap, as terminal text names them: a log directory
	// holds thousands, and a directory name may hold a newline.
	var names []string
	for _, s := range hits[:min(len(hits), txnindex.ListCap)] {
		names = append(names, txnindex.PartitionName(s.topic, s.partition))
	}
	if n := len(hits) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("… and %s more", txnindex.Count(int64(n))))
	}
	return nil, usagef("several partitions (%s): choose one with --topic and --partition", strings.Join(names, ", "))
}

// exportPage writes the static page of s: the data the stream and the API
// would have sent (api.Export), inlined into the timeline and lesson page
// with the diagnosis the served page shows (diags: joined with the
// internal topics' evidence recorded there), and the export's note of
// what it leaves out.
func exportPage(ctx context.Context, w *bytes.Buffer, s *exportSource, clock url.Values, diags *view.Diagnoser) (string, error) {
	l := s.log
	d, err := api.Export(ctx, s.id, l, filesRecords{s.files})
	if err != nil {
		return "", err
	}
	data, err := d.Script()
	if err != nil {
		return "", err
	}
	// The served page's one clock rule (view.DiagnoseClock): a demo or
	// scenario aged by its own time, a partition read from disk by now,
	// unless --now (clock's now=) says otherwise.
	o, _, err := view.DiagnoseClock(clock, time.Now(), s.demo)
	if err != nil {
		return "", err
	}
	return d.Note, web.StaticLessonPage(ctx, w, s.id, s.title, l, diags.Diagnose(l, o), data, d.Note, web.NewLessonOf(s.id, l, -1, web.ExportLessonMaxBatches))
}

// filesRecords decodes a batch's records from the files the exported
// partition was read from, a page at a time (api.RecordPager), as the
// server's batch route does; api.ErrNoRecords when there are none.
type filesRecords struct{ files *loader.Partition }

func (r filesRecords) Records(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	p, err := r.RecordPage(ctx, id, l, b, api.RecordPageRequest{})
	return p.Records, err
}

func (r filesRecords) RecordPage(ctx context.Context, _ string, _ *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	if r.files == nil {
		return api.RecordPage{}, api.ErrNoRecords
	}
	return api.PartitionRecordsPage(ctx, r.files, b, p)
}

// buildScenarioFile builds a scenario file into a fresh temporary log
// directory and returns the partition directory: the export then reads it
// back through the loader, as serve does the demos. The caller removes
// the parent directory.
func buildScenarioFile(name string) (dir, title string, err error) {
	sc, err := scenario.ParseFile(name)
	if err != nil {
		return "", "", err
	}
	b, err := sc.Build()
	if err != nil {
		return "", "", err
	}
	tmp, err := b.WriteTemp("txnscope-export-")
	if err != nil {
		return "", "", err
	}
	return filepath.Join(tmp, b.Dir), sc.Title, nil
}
