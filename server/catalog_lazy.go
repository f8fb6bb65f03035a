package server

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
	"github.com/txnscope/txnscope/web"
)

// tailWait is how long the first request for a partition of a lazy log
// directory waits for its full load before it is answered with the tail.
const tailWait = 2 * time.Second

// lazyPart is a partition of a log directory loaded lazily (logindex): the
// index lists it from its name and ranks it from a tail scan; its files
// are read in full only when someone asks for it. Until that load is done
// (a partition of tens of GiB takes a while), requests get the tail: the
// last segments, as the tail scan reads them. What it holds is kept
// within --max-memory with the other partitions opened (memBudget): when
// evicted it is as if never asked for, and the next request opens it again.
type lazyPart struct {
	x     *logindex.Index
	e     *logindex.Entry
	d     *load.LogDir    // x, its partitions opened whole within the limits (load.LogDir.Open)
	open  openFunc        // Options.OpenFull; nil: d.Open
	mem   *memBudget      // nil: nothing is evicted
	diags *view.Diagnoser // the catalog's: where the internal topics' evidence is recorded

	tailScan sync.Mutex // one tail scan at a time

	mu       sync.Mutex
	done     chan struct{} // closed when the full load ended, either way; nil: not started (or evicted)
	began    time.Time
	full     *txnindex.Log
	files    *loader.Partition
	problems []string
	err      error // the full load's, or why it was not made (refuse)

	tailDone bool // the tail was scanned (tail, tailInfo and tailErr are set)
	tail     *txnindex.Log
	tailInfo logindex.TailInfo
	tailErr  error

	// Guarded by mem.mu: the bytes accounted to this partition, its
	// place in the LRU, whether its full load is in flight and the room
	// that load reserved.
	held    int64
	elem    *list.Element
	loading bool
	room    int64
}

// get returns the full log if it is loaded, else the tail. Every call in
// the first tailWait of the full load waits for it up to then, so a small
// partition opens whole at once, however many ask together: the page, the
// stream its prewarm starts (api.Prewarm) and the stream of the page.
func (lz *lazyPart) get() *txnindex.Log {
	lz.mu.Lock()
	if lz.done == nil {
		lz.done, lz.began = make(chan struct{}), time.Now()
		go lz.x.Join(context.Background()) // beside the load: both wait for it
		go lz.load(lz.done)
	}
	done, wait := lz.done, time.Until(lz.began.Add(tailWait))
	lz.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	if l := lz.built(); l != nil {
		lz.mem.touch(lz)
		return l
	}
	if l := lz.scanTail(); l != nil {
		return l // over its share of the budget: this request's alone
	}
	lz.mem.touch(lz)
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.full != nil {
		return lz.full // finished while the tail was scanned
	}
	return lz.tail
}

// scanTail scans the tail once (again after an eviction), unless the
// full log is there by then. A tail that would take more than one
// partition opened whole may (every segment replayed, for want of a
// producer snapshot) is not kept: it is returned, for the caller alone,
// and the next request scans it again.
func (lz *lazyPart) scanTail() *txnindex.Log {
	lz.tailScan.Lock()
	defer lz.tailScan.Unlock()
	lz.mu.Lock()
	skip := lz.tailDone || lz.full != nil
	lz.mu.Unlock()
	if skip {
		return nil
	}
	// The full load reports every file's damage: the tail's is not kept.
	l, info, err := lz.d.Tail(context.Background(), lz.e)
	if l != nil {
		from := info.From
		if info.Full {
			from = -1 // every batch was read
		}
		lz.setEvidence(l, from)
	}
	lz.mu.Lock()
	if lz.full != nil {
		lz.mu.Unlock()
		return nil // the whole log came while the tail was scanned: get returns it
	}
	lz.tailInfo, lz.tailErr = info, err
	if lz.mem != nil && openedCost(l) > lz.mem.oneWhole {
		lz.mu.Unlock()
		return l
	}
	lz.tail, lz.tailDone = l, true
	lz.mu.Unlock()
	lz.mem.kept(lz)
	return nil
}

// subscribe is api.Feed's Subscribe for a partition whose full load is
// under way: the channel receives once, when the load ends, so that a
// stream opened on the tail starts a new generation with the whole log
// (api's liveChanged); ok is false once there is nothing left to wait for.
func (lz *lazyPart) subscribe() (<-chan struct{}, func(), bool) {
	lz.mu.Lock()
	done, full := lz.done, lz.full
	lz.mu.Unlock()
	if done == nil || full != nil {
		return nil, nil, false
	}
	ch, stop := make(chan struct{}, 1), make(chan struct{})
	go func() {
		select {
		case <-done:
			ch <- struct{}{} // cap 1, sent once: never blocks
		case <-stop:
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(stop) }) }, true
}

// load opens the partition whole, within the budget: a partition whose
// load would take more than its share is refused (memBudget.admit), and
// so is one whose log turns out over it. done is closed at the end.
func (lz *lazyPart) load(done chan struct{}) {
	defer close(done) // lz.done is set before load starts (get)
	var (
		p        *loader.Partition
		l        *txnindex.Log
		c        *input.Contents
		est, err = lz.mem.admit(lz)
	)
	if err == nil {
		open := lz.open
		if open == nil {
			open = lz.d.Open
		}
		if c, err = open(context.Background(), lz.e); err == nil {
			p, l = c.Dirs[0], c.Partitions[0].Log
		}
		if err == nil && lz.mem != nil {
			// The estimate was short: not kept, as if refused before.
			err = lz.mem.recheck(l, est)
		}
		if err != nil {
			p, l = nil, nil
		}
	}
	if l != nil {
		lz.setEvidence(l, -1)
	}
	lz.mu.Lock()
	lz.full, lz.files, lz.err = l, p, err
	if l != nil {
		// The files' damage, the log directory's checkpoints' with it.
		for _, d := range append(c.Problems, lz.d.Problems...) {
			lz.problems = append(lz.problems, d.Error())
		}
	}
	if l != nil {
		// The whole log replaces the tail: its memory goes back to the
		// budget (a request still holding it keeps it).
		lz.tail, lz.tailDone = nil, false
	}
	lz.mu.Unlock()
	lz.mem.loaded(lz)
}

// release drops the logs lz holds, as if it had never been asked for
// (memBudget.evict): the next request opens it again. A refusal stays.
func (lz *lazyPart) release() (full, tail *txnindex.Log) {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	full, tail = lz.full, lz.tail
	if lz.full != nil {
		lz.full, lz.files, lz.problems, lz.done = nil, nil, nil, nil
	}
	lz.tail, lz.tailInfo, lz.tailErr, lz.tailDone = nil, logindex.TailInfo{}, nil, false
	return full, tail
}

// setEvidence joins the log directory's internal topics into l's
// diagnoses (view.Diagnoser.SetEvidence), as an eager load of the whole
// directory does (view.Diagnoser.SetEvidenceOf, catalog.go): read once
// for the directory, within its bound (logindex.Index.Join), before l is
// handed to anyone, since a cached diagnosis is not recomputed. readFrom
// is where a tail's batches begin (view.Diagnoser.SetTailEvidence), -1
// for a log read whole.
func (lz *lazyPart) setEvidence(l *txnindex.Log, readFrom int64) {
	j := lz.x.Join(context.Background())
	if ev := j.Evidence; ev.Coordinators != nil || ev.HaveOffsets || ev.HaveShareStates || ev.RemoteStorage != nil || ev.Note != "" {
		lz.diags.SetTailEvidence(l, ev, readFrom)
	}
}

// built is the full log, nil until it is loaded.
func (lz *lazyPart) built() *txnindex.Log {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	return lz.full
}

// filesOf returns the files of l if l is the full log (the tail's segment
// files are closed after its scan: its records are not decoded).
func (lz *lazyPart) filesOf(l *txnindex.Log) *loader.Partition {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if l != nil && l == lz.full {
		return lz.files
	}
	return nil
}

// problemList is what the timeline lists above the partition: the files'
// damage once loaded, or why only the tail is shown.
func (lz *lazyPart) problemList() []string {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	switch {
	case lz.full != nil:
		return lz.problems
	case lz.err != nil:
		return []string{fmt.Sprintf("%v; the timeline shows the tail only: %s", lz.err, lz.tailInfo)}
	case lz.tailErr != nil:
		return []string{fmt.Sprintf("%s could not be read: %v", lz.e.Name, lz.tailErr)}
	case lz.tail != nil:
		return []string{fmt.Sprintf("loading the whole partition (%s so far): the timeline shows its tail, %s; offsets before %d were not read. "+
			"The timeline switches to the whole partition when its load is done, and the diagnosis, the numbers above and this list with it.",
			txnindex.Duration(time.Since(lz.began)), lz.tailInfo, lz.tailInfo.From)}
	}
	return nil
}

// tailRead is what the partition's tail view read, nil when the page shows
// the whole log (loaded, or every segment replayed for the tail).
func (lz *lazyPart) tailRead() *web.TailRead {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.full != nil || lz.tail == nil || lz.tailInfo.Full {
		return nil
	}
	return &web.TailRead{Read: lz.tailInfo.Segments, Total: lz.tailInfo.Total}
}

// scanView is the index's view of the partition's tail scan.
func (lz *lazyPart) scanView() *web.Scan {
	st, sum, err := lz.e.State()
	v := &web.Scan{State: st.String(), Internal: lz.e.Internal || lz.e.Metadata}
	switch {
	case sum != nil && lz.e.Metadata:
		v.Diagnosis, v.Note = sum.Diagnosis, sum.Diagnosis.Note // nothing scanned: it says what it is
	case sum != nil:
		v.Diagnosis, v.Note = sum.Diagnosis, sum.Info.String()
	}
	if err != nil {
		v.Note = err.Error()
	}
	return v
}
