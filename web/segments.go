package web

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// SegmentSummary is one segment of a partition directory as the segment
// strip draws it: package segsum's per-segment summary, passed as plain
// data (web does not import the server's packages). The records are
// counted by what became of their transaction over the whole log.
type SegmentSummary struct {
	Name                                 string
	BaseOffset, NextOffset               int64
	Delivered, Aborted, Pending, Control int64 // records: non-transactional and committed, aborted, open at the log end, control
}

// Segmenter is a Catalog that can draw a partition directory segment by
// segment (package segsum, wired by the server).
type Segmenter interface {
	// Segments lists the partition's segments; ok is false when it is not
	// a partition directory. refused, when set, says why the partition
	// was not loaded whole (over --max-source-bytes): its page then shows
	// one segment's window at a time.
	Segments(ctx context.Context, id, topic string, partition int32) (segs []SegmentSummary, refused string, ok bool, err error)
	// WindowLog is the log of the window of the segment at base: its
	// batches replayed from the producer state at its start and bounded
	// by the whole log, whose decisions are those of a full pass.
	WindowLog(ctx context.Context, id, topic string, partition int32, base int64) (*txnindex.Log, error)
	// Refused is why the partition was not loaded whole, "" when it was
	// (or is not a partition directory): what Segments says, without
	// reading the summaries. Ask after Log, which starts the load.
	Refused(id, topic string, partition int32) string
}

// refused is Segmenter.Refused of the catalog, "" when it has none.
func (u *UI) refused(id, topic string, p int32) string {
	if sg, ok := u.cat.(Segmenter); ok {
		return sg.Refused(id, topic, p)
	}
	return ""
}

// SegmentStrip is the row of segments above a partition directory's
// timeline: one cell per segment, its width proportional to its offsets.
type SegmentStrip struct {
	Cells []SegmentCell
	// Windowed: the timeline shows one segment's window (Shown), not the
	// whole partition; a cell's link opens another.
	Windowed bool
	Shown    SegmentCell
	Note     string
	// Position says, on a windowed page, which segment is shown, of how
	// many, and its offsets; Prev and Next are the neighbouring segments
	// (nil at either end of the log).
	Position   string
	Prev, Next *SegmentCell
}

// SegmentCell is one segment of the strip.
type SegmentCell struct {
	SegmentSummary
	Index   int
	Width   string // CSS percentage of the strip
	Parts   []SegmentPart
	Title   string
	Href    string
	Current bool
}

// SegmentPart is one outcome's share of a cell (its height).
type SegmentPart struct {
	Class, Height string
}

// segmentStrip draws segs; shown is the base offset of the window shown
// (-1: the whole partition is shown).
func segmentStrip(segs []SegmentSummary, refused string, shown int64) *SegmentStrip {
	windowed := refused != ""
	if len(segs) == 0 {
		return nil
	}
	span := segs[len(segs)-1].NextOffset - segs[0].BaseOffset
	s := &SegmentStrip{Windowed: windowed}
	for i, x := range segs {
		c := SegmentCell{SegmentSummary: x, Index: i, Current: windowed && x.BaseOffset == shown}
		n := max(x.NextOffset-x.BaseOffset, 0)
		c.Width = pct(n, max(span, 1))
		total := x.Delivered + x.Aborted + x.Pending + x.Control
		for _, p := range []struct {
			v     txnindex.Verdict
			class string
			n     int64
		}{{txnindex.Delivered, "delivered", x.Delivered}, {txnindex.Aborted, "aborted", x.Aborted},
			{txnindex.Pending, "pending", x.Pending}, {txnindex.Control, "control", x.Control}} {
			if p.n > 0 {
				c.Parts = append(c.Parts, SegmentPart{Class: p.class, Height: pct(p.n, total)})
			}
		}
		c.Title = x.Name + ": offsets " + txnindex.Count(x.BaseOffset) + "–" + txnindex.Count(max(x.NextOffset-1, x.BaseOffset)) +
			"; " + outcomeWords(x)
		from, to := strconv.FormatInt(x.BaseOffset, 10), strconv.FormatInt(max(x.NextOffset, x.BaseOffset+1), 10)
		if windowed {
			c.Href = "?segment=" + from + "&from=" + from + "&to=" + to
		} else {
			c.Href = "?from=" + from + "&to=" + to
		}
		if c.Current {
			s.Shown = c
		}
		s.Cells = append(s.Cells, c)
	}
	if windowed {
		k := s.Shown.Index
		if k > 0 {
			s.Prev = &s.Cells[k-1]
		}
		if k+1 < len(s.Cells) {
			s.Next = &s.Cells[k+1]
		}
		s.Position = "segment " + txnindex.Count(int64(k+1)) + " of " + txnindex.Count(int64(len(segs))) + ", offsets " +
			txnindex.Count(s.Shown.BaseOffset) + "–" + txnindex.Count(max(s.Shown.NextOffset-1, s.Shown.BaseOffset))
		s.Note = refused + ", so it is drawn one segment at a time: the timeline shows segment " + strconv.Itoa(s.Shown.Index+1) + " of " +
			strconv.Itoa(len(segs)) + " (" + s.Shown.Name + "), decided from the state the segments before it end in; pan past either end of it, or click a segment, to show another."
	} else {
		s.Note = plural(len(segs), "segment", "segments") + "; click one to zoom to it."
	}
	return s
}

// outcomeWords is a segment's records by outcome, in the timeline's words
// (present.VerdictWords).
func outcomeWords(x SegmentSummary) string {
	var b []string
	for _, p := range []struct {
		v txnindex.Verdict
		n int64
	}{{txnindex.Delivered, x.Delivered}, {txnindex.Aborted, x.Aborted}, {txnindex.Pending, x.Pending}, {txnindex.Control, x.Control}} {
		b = append(b, txnindex.Count(p.n)+" "+present.VerdictWords(p.v))
	}
	return "records: " + strings.Join(b, ", ")
}

func pct(n, of int64) string {
	return strconv.FormatFloat(100*float64(n)/float64(of), 'f', 3, 64) + "%"
}

// segmentWindow returns the strip of a partition directory and the log the
// timeline shows: l, or, when the partition is too large to load whole,
// the window of the segment ?segment=BASE names (the last by default).
// redirect, when set, is the URL of the page with the window's offsets as
// the view (?from=&to=), where a page without them is sent.
func (u *UI) segmentWindow(r *http.Request, id, topic string, p int32, l *txnindex.Log) (*txnindex.Log, *SegmentStrip, string, error) {
	sg, ok := u.cat.(Segmenter)
	if !ok {
		return l, nil, "", nil
	}
	segs, refused, ok, err := sg.Segments(r.Context(), id, topic, p)
	if err != nil {
		// The page as it was without the strip: the whole log, or the
		// tail of one whose load was refused.
		slog.Warn("web: segment summaries", "source", id, "topic", topic, "partition", p, "err", err)
		return l, nil, "", nil
	}
	if !ok || len(segs) == 0 {
		return l, nil, "", nil
	}
	if refused == "" {
		return l, segmentStrip(segs, "", -1), "", nil
	}
	q := r.URL.Query()
	shown := segs[len(segs)-1]
	view := false // the request's from and to are kept
	switch {
	case q.Get("segment") != "":
		s := q.Get("segment")
		base, err := strconv.ParseInt(s, 10, 64)
		i := slices.IndexFunc(segs, func(x SegmentSummary) bool { return x.BaseOffset == base })
		if err != nil || i < 0 {
			return nil, nil, "", fmt.Errorf("no segment at offset %q", s)
		}
		shown = segs[i]
	case q.Has("offset"):
		// An offset to go to (the form beside the strip): the segment
		// holding it, its batch selected.
		n, err := strconv.ParseInt(q.Get("offset"), 10, 64)
		if err != nil {
			return nil, nil, "", fmt.Errorf("offset %q is not a number", q.Get("offset"))
		}
		shown = holding(segs, n)
		q.Del("offset")
		q.Set("sel", strconv.FormatInt(n, 10))
	case q.Has("from") && q.Has("to"):
		// A view in offsets without a segment (a link, an edited URL):
		// the segment holding its middle, the view kept.
		from, err1 := strconv.ParseFloat(q.Get("from"), 64)
		to, err2 := strconv.ParseFloat(q.Get("to"), 64)
		if err1 == nil && err2 == nil {
			shown, view = holding(segs, int64((from+to)/2)), true
		}
	}
	if !q.Has("from") || !q.Has("to") || !q.Has("segment") {
		q.Set("segment", strconv.FormatInt(shown.BaseOffset, 10))
		if !view {
			q.Set("from", strconv.FormatInt(shown.BaseOffset, 10))
			q.Set("to", strconv.FormatInt(max(shown.NextOffset, shown.BaseOffset+1), 10))
		}
		// The path as it came, escaped: a topic's '?' or '#' stays in
		// the path.
		return nil, nil, r.URL.EscapedPath() + "?" + q.Encode(), nil
	}
	wl, err := sg.WindowLog(r.Context(), id, topic, p, shown.BaseOffset)
	if err != nil {
		return nil, nil, "", err
	}
	return wl, segmentStrip(segs, refused, shown.BaseOffset), "", nil
}

// holding is the segment of segs holding offset n: the last whose base is
// at or before n (the first for an offset before the log).
func holding(segs []SegmentSummary, n int64) SegmentSummary {
	i, _ := slices.BinarySearchFunc(segs, n, func(x SegmentSummary, n int64) int { return cmp.Compare(x.BaseOffset, n) })
	if i < len(segs) && segs[i].BaseOffset == n {
		return segs[i]
	}
	return segs[max(i-1, 0)]
}

// lsoWindow is the window of the segment holding the partition's last
// stable offset, where the transaction that holds it begins: the page's
// diagnosis and LSO sentence are drawn from it, whichever segment is
// shown (the shown window alone would not see that transaction). It is
// wl when the LSO is in the shown segment or at the log end.
func (u *UI) lsoWindow(r *http.Request, id, topic string, p int32, strip *SegmentStrip, wl *txnindex.Log) *txnindex.Log {
	sg, _ := u.cat.(Segmenter)
	lso := wl.LastStableOffset
	for _, c := range strip.Cells {
		if c.BaseOffset <= lso && lso < c.NextOffset && !c.Current {
			if l, err := sg.WindowLog(r.Context(), id, topic, p, c.BaseOffset); err == nil {
				return l
			}
		}
	}
	return wl
}

func (s *SegmentStrip) windowedText() string { return strconv.FormatBool(s.Windowed) }

// scope qualifies the summary's counts of a page that shows one
// segment's window: they are that segment's.
func (v TimelineView) scope() string {
	switch {
	case v.Strip != nil && v.Strip.Windowed:
		return " in segment " + strconv.Itoa(v.Strip.Shown.Index+1)
	case v.tail:
		return " in the tail"
	}
	return ""
}

// segmentsText is the summary's segment count: "1 of 8 read" in a tail
// view.
func (v TimelineView) segmentsText() string {
	if v.SegmentsOf > 0 {
		return thousands(v.Segments) + " of " + thousands(v.SegmentsOf) + " read"
	}
	return thousands(v.Segments)
}
