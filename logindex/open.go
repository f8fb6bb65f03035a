package logindex

import (
	"context"
	"fmt"
	"os"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Limits bound opening one partition in full. Memory follows the batches
// kept (64 B each in txnindex.Batch), and the byte limit is checked before
// a byte is read. The flag names go into the errors.
type Limits struct {
	MaxBytes    int64
	MaxBatches  int
	BytesFlag   string
	BatchesFlag string
}

// Open reads e's directory in full, every batch checked as broker recovery
// would (loader.DefaultScanOptions), with the log directory's checkpoints.
// A partition over a limit is refused with an error naming the flag.
func (x *Index) Open(ctx context.Context, e *Entry, lim Limits) (*loader.Partition, *txnindex.Log, error) {
	if err := lim.CheckBytes(e); err != nil {
		return nil, nil, err
	}
	p, err := loader.OpenPartitionContext(ctx, e.Dir, loader.DefaultScanOptions)
	if err != nil {
		return nil, nil, err
	}
	if n := len(p.Input.Batches); lim.MaxBatches > 0 && n > lim.MaxBatches {
		for _, s := range p.Segments {
			s.Log.Close()
		}
		return nil, nil, lim.BatchesError(e.Name, n)
	}
	return p, p.Build(), nil
}

// CheckBytes refuses e when its files add up to more than MaxBytes, before
// a byte of them is read (nil when MaxBytes is 0). The error says so in
// words, both sizes in txnindex.Bytes: the page of a partition over the
// limit shows it above the segment it draws.
func (lim Limits) CheckBytes(e *Entry) error {
	if lim.MaxBytes <= 0 {
		return nil
	}
	var total int64
	ents, err := os.ReadDir(e.Dir)
	if err != nil {
		return err
	}
	for _, de := range ents {
		if !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err == nil {
			total += fi.Size()
		}
	}
	if total > lim.MaxBytes {
		return fmt.Errorf("%s holds %s of files, more than %s (%s) allows: not opened in full", e.Name, txnindex.Bytes(total), lim.BytesFlag, txnindex.Bytes(lim.MaxBytes))
	}
	return nil
}

// BatchesError is the refusal of a partition of n batches, over MaxBatches.
func (lim Limits) BatchesError(name string, n int) error {
	return fmt.Errorf("%s holds %s, more than %s (%s) allows: not opened in full", name, txnindex.Plural(n, "batch", "batches"), lim.BatchesFlag, txnindex.Count(int64(lim.MaxBatches)))
}

// Tail scans e's tail now (ScanTail), for a page asked for before its
// full load is done.
func (x *Index) Tail(ctx context.Context, e *Entry) (*txnindex.Log, TailInfo, []*loader.FormatError, error) {
	return ScanTail(ctx, e.Dir, x.Checkpoints)
}
