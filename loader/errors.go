package loader

import (
	"errors"
	"fmt"
)

// ErrFormat is matched by errors.Is for every *FormatError: the input is not
// what Kafka would have written.
var ErrFormat = errors.New("loader: bad format")

// FormatError is a problem at a position of an input file. Binary inputs
// give a byte position, text inputs a line number. Msg says what was expected
// and what was found.
type FormatError struct {
	File   string // base name of the file, e.g. "00000000000000000000.log"
	Offset int64  // byte position where the damaged item starts (binary files)
	Line   int    // 1-based line number (text files); 0 for binary files
	Item   string // what sits at Offset: "batch", "entry", "record", "header"...; "data" if empty
	Msg    string

	// numberFormat: a checkpoint line Kafka's reader fails on with a
	// NumberFormatException rather than an IOException (errNotInteger).
	numberFormat bool
	// recoveryKeeps: a batch a segment's scan stops at that the broker's
	// recovery keeps (scanner.damagedKept).
	recoveryKeeps bool
	// left: a note counting this many notes of a segment's scan not
	// listed (capNotes).
	left int
}

// Error renders the problem as
//
//	loader: 00000000000000000000.log: batch at byte 0x1f40: bad CRC: stored 0x..., computed 0x...
//	loader: replication-offset-checkpoint: line 3: ...
func (e *FormatError) Error() string {
	file := ""
	if e.File != "" {
		file = e.File + ": "
	}
	if e.Line > 0 {
		return fmt.Sprintf("loader: %sline %d: %s", file, e.Line, e.Msg)
	}
	item := e.Item
	if item == "" {
		item = "data"
	}
	return fmt.Sprintf("loader: %s%s at byte %#x: %s", file, item, e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrFormat) true.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

func formatErr(file string, off int64, item, format string, args ...any) *FormatError {
	return &FormatError{File: file, Offset: off, Item: item, Msg: fmt.Sprintf(format, args...)}
}

func lineErr(file string, line int, format string, args ...any) *FormatError {
	return &FormatError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
