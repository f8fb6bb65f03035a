package loader

import (
	"fmt"
	"io"
)

// window serves byte ranges of an io.ReaderAt with read-ahead, so scanning
// many small batches costs one read per fill, not one per batch. A slice it
// returns is valid until the next call. When the input is already in memory
// (data != nil) it hands out subslices and never copies.
type window struct {
	r    io.ReaderAt
	data []byte
	size int64
	fill int // read-ahead per refill

	// spacing is the caller's estimate of the distance to the next read
	// (a moving mean of the batch sizes). When fewer than 8 reads would share a
	// fill, a read takes only the bytes asked for: a header-only scan of
	// large batches then touches a page per batch, not the whole file.
	spacing int64

	buf   []byte
	start int64
	n     int
	big   []byte // reused for ranges larger than fill
}

// scanWindow is a scan's window over the first size bytes of r, read in
// scanFill blocks.
func scanWindow(r io.ReaderAt, size int64) window {
	return window{r: r, size: size, fill: scanFill}
}

func (w *window) at(pos int64, n int) ([]byte, error) {
	if n < 0 || pos < 0 || pos+int64(n) > w.size {
		// Callers bound n by the remaining size first; this guards the
		// invariant rather than any input.
		return nil, fmt.Errorf("loader: internal: range [%d,+%d) outside %d bytes", pos, n, w.size)
	}
	if w.data != nil {
		return w.data[pos : pos+int64(n) : pos+int64(n)], nil
	}
	if pos >= w.start && pos+int64(n) <= w.start+int64(w.n) {
		off := int(pos - w.start)
		return w.buf[off : off+n : off+n], nil
	}
	if n > w.fill {
		if cap(w.big) < n {
			w.big = make([]byte, n)
		}
		b := w.big[:n]
		if err := readFullAt(w.r, b, pos); err != nil {
			return nil, err
		}
		return b, nil
	}
	if w.buf == nil {
		// No larger than the input: a partition of many small segments
		// (a segment a batch) would otherwise take a whole fill per
		// segment scanned.
		w.buf = make([]byte, min(int64(w.fill), w.size))
	}
	fill := int(min(int64(w.fill), w.size-pos))
	if w.spacing*8 > int64(w.fill) {
		fill = n
	}
	// A read-ahead that comes up short (the file shrank since its size
	// was taken) still serves the range asked for when it holds it: the
	// scan keeps every batch it can read and reports the first it cannot.
	k, err := w.r.ReadAt(w.buf[:fill], pos)
	if k < n {
		w.n = 0
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("loader: reading %d bytes at byte %#x: %w", n, pos, err)
	}
	w.start, w.n = pos, k
	return w.buf[:n:n], nil
}

// readFullAt is ReadAt that accepts the io.EOF a ReaderAt may return
// together with a full read, and reports a short read as
// io.ErrUnexpectedEOF (the size the caller was given was wrong).
func readFullAt(r io.ReaderAt, b []byte, pos int64) error {
	k, err := r.ReadAt(b, pos)
	if k == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("loader: reading %d bytes at byte %#x: %w", len(b), pos, err)
}
