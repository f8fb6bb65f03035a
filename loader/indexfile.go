package loader

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// IndexFile is one of a segment's side files read alone, as
// kafka-dump-log.sh --files reads it: exactly one field is set, by the
// file's suffix.
type IndexFile struct {
	Path     string
	Offset   *OffsetIndex
	Time     *TimeIndex
	Txn      *TxnIndexFile
	Snapshot *ProducerSnapshot
}

// IsIndexFile reports whether name is a file OpenIndexFile reads: a
// .index, .timeindex, .txnindex or producer .snapshot file.
func IsIndexFile(name string) bool {
	switch filepath.Ext(name) {
	case ".index", ".timeindex", ".txnindex", ".snapshot":
		return true
	}
	return false
}

// OpenIndexFile reads the .index, .timeindex, .txnindex or producer
// .snapshot file at path, read-only, for `inspect FILE`. The segment's base
// offset comes from the file name as the broker names it; a name that does
// not carry one is refused, since every entry is relative to it. What was
// read before damage is returned with the error, as for a partition.
func OpenIndexFile(path string) (*IndexFile, error) {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	if !IsIndexFile(name) {
		return nil, fmt.Errorf("loader: %s: not an index or producer snapshot file (want .index, .timeindex, .txnindex or .snapshot)", path)
	}
	base, ok := parseBaseOffset(name, ext)
	if !ok {
		return nil, fmt.Errorf("loader: %s: the name is not the 20-digit base offset the broker names %s files by (%s)", path, ext, strings.Repeat("0", 20)+ext)
	}
	f := &IndexFile{Path: path}
	if ext == ".snapshot" {
		data, err := readInside(path, maxStateFile)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fmt.Errorf("loader: %s: %w", path, os.ErrNotExist)
		}
		f.Snapshot, err = ReadProducerSnapshot(data, name)
		return f, err
	}
	err := withFile(path, func(fh *os.File, size int64) (err error) {
		switch ext {
		case ".index":
			f.Offset, err = ReadOffsetIndex(fh, size, name, base)
		case ".timeindex":
			f.Time, err = ReadTimeIndex(fh, size, name, base)
		default:
			f.Txn, err = ReadTxnIndexFile(io.NewSectionReader(fh, 0, size), size, name, base)
		}
		return err
	})
	return f, err
}
