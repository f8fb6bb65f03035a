// Package scenario reads txnscope's scenario files, small scripts of what
// producers did to one partition, and writes the partition directory a
// broker would have left: .log segments of real RecordBatch v2 bytes (CRC-32C
// and all), sparse .index and .timeindex files, the .txnindex of every
// segment that holds an abort, a producer-state .snapshot and the
// checkpoint files. txnscope's demos are such files, read back through the
// same loader as any user's data. docs/scenarios.md has the grammar.
//
// Batches are encoded with franz-go's kmsg (RecordBatch.AppendTo); the
// control-record, index and snapshot layouts follow the Kafka internals
// reference. The API is internal to txnscope.
package scenario

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Error is a problem at a line and column of a scenario file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	return fmt.Sprintf("scenario: %s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// OpKind is what a statement does.
type OpKind uint8

// Statements.
const (
	OpProducer OpKind = iota
	OpBegin
	OpSend
	OpCommit
	OpAbort
	OpPlain
	OpRoll
	OpGap
	OpBump
	OpWait
	OpSeek
	// OpLoseTxnIndex: the current segment's .txnindex is not written,
	// its .index is: the copy or the disk lost the file, and the broker
	// lists none of the segment's aborted transactions.
	OpLoseTxnIndex
)

// Op is one statement.
type Op struct {
	Kind     OpKind
	Line     int
	Producer string
	N        int64 // records (send, plain), offsets (gap), milliseconds (wait), offset (seek)
	Mode     string
}

// Producer is a declared producer.
type Producer struct {
	Name          string
	Transactional bool
	ID            int64
	Epoch         int16
	// TV2: the producer runs transactions v2 (KIP-890): the coordinator
	// bumps the epoch before writing each marker, so a transaction's data
	// is at epoch E, its marker at E+1, and the next transaction at E+1;
	// the marker that reaches epoch 32767 moves the producer to a new
	// producer id at epoch 0 (TransactionMetadata.prepareAbortOrCommit
	// and prepareComplete).
	TV2 bool
}

// Scenario is a parsed scenario file.
type Scenario struct {
	Name, Title   string
	Topic         string
	Partition     int32
	Producers     []*Producer
	Ops           []Op
	LogStart      int64 // from "retain"; -1 if none
	HighWatermark int64 // from "hwm"; -1 for the log end offset
	Seeks         []int64
}

func (s *Scenario) producer(name string) *Producer {
	for _, p := range s.Producers {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Parse reads a scenario; name is used in errors.
func Parse(r io.Reader, name string) (*Scenario, error) {
	s := &Scenario{Name: name, Topic: "scenario", LogStart: -1, HighWatermark: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<16)
	line := 0
	nextID := int64(1000)
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields, cols := split(text)
		if len(fields) == 0 {
			continue
		}
		errAt := func(k int, format string, a ...any) error {
			col := 1
			if k < len(cols) {
				col = cols[k]
			} else if len(cols) > 0 {
				col = cols[len(cols)-1] + len(fields[len(fields)-1])
			}
			return &Error{name, line, col, fmt.Sprintf(format, a...)}
		}
		want := func(n int, usage string) error {
			if len(fields) != n {
				return errAt(min(n, len(fields)), "want %q", usage)
			}
			return nil
		}
		num := func(k int, what string) (int64, error) {
			if k >= len(fields) {
				return 0, errAt(k, "want %s", what)
			}
			v, err := strconv.ParseInt(fields[k], 10, 64)
			if err != nil || v < 0 {
				return 0, errAt(k, "want %s (a non-negative integer), found %q", what, fields[k])
			}
			return v, nil
		}
		known := func(k int) (*Producer, error) {
			if k >= len(fields) {
				return nil, errAt(k, "want a producer name")
			}
			p := s.producer(fields[k])
			if p == nil {
				return nil, errAt(k, "unknown producer %q (declare it with \"producer %s transactional\")", fields[k], fields[k])
			}
			return p, nil
		}
		op := Op{Line: line}
		switch kw := fields[0]; kw {
		case "title":
			s.Title = strings.TrimSpace(text[cols[0]-1+len("title"):])
			continue
		case "topic":
			if len(fields) != 2 && len(fields) != 4 {
				return nil, errAt(1, "want \"topic NAME [partition N]\"")
			}
			s.Topic = fields[1]
			if len(fields) == 4 {
				if fields[2] != "partition" {
					return nil, errAt(2, "want \"partition\", found %q", fields[2])
				}
				n, err := num(3, "a partition number")
				if err != nil {
					return nil, err
				}
				s.Partition = int32(n)
			}
			continue
		case "producer":
			if len(fields) < 3 {
				return nil, errAt(len(fields), "want \"producer NAME transactional|idempotent [tv2] [id N] [epoch N]\"")
			}
			if s.producer(fields[1]) != nil {
				return nil, errAt(1, "producer %q declared twice", fields[1])
			}
			p := &Producer{Name: fields[1], ID: nextID}
			switch fields[2] {
			case "transactional":
				p.Transactional = true
			case "idempotent":
			default:
				return nil, errAt(2, "want \"transactional\" or \"idempotent\", found %q", fields[2])
			}
			for k := 3; k < len(fields); k += 2 {
				if fields[k] == "tv2" {
					if !p.Transactional {
						return nil, errAt(k, "producer %q is idempotent: tv2 (transactions v2) is for transactional producers", p.Name)
					}
					p.TV2 = true
					k-- // a flag, no value
					continue
				}
				v, err := num(k+1, "a number after "+fields[k])
				if err != nil {
					return nil, err
				}
				switch fields[k] {
				case "id":
					p.ID = v
				case "epoch":
					// The coordinator never hands out epoch 32767
					// (Short.MaxValue): it is kept to fence with.
					if v > math.MaxInt16-1 {
						return nil, errAt(k+1, "want an epoch from 0 to 32766, found %d", v)
					}
					p.Epoch = int16(v)
				default:
					return nil, errAt(k, "want \"tv2\", \"id\" or \"epoch\", found %q", fields[k])
				}
			}
			nextID++
			s.Producers = append(s.Producers, p)
			op.Kind, op.Producer = OpProducer, p.Name
		case "begin", "commit", "abort", "bump":
			if err := want(2, kw+" PRODUCER"); err != nil {
				return nil, err
			}
			p, err := known(1)
			if err != nil {
				return nil, err
			}
			if kw != "bump" && !p.Transactional {
				return nil, errAt(1, "producer %q is idempotent: only transactional producers %s", p.Name, kw)
			}
			op.Producer = p.Name
			op.Kind = map[string]OpKind{"begin": OpBegin, "commit": OpCommit, "abort": OpAbort, "bump": OpBump}[kw]
		case "send":
			if len(fields) != 2 && len(fields) != 3 {
				return nil, errAt(len(fields), "want \"send PRODUCER [RECORDS]\"")
			}
			p, err := known(1)
			if err != nil {
				return nil, err
			}
			op.Kind, op.Producer, op.N = OpSend, p.Name, 1
			if len(fields) == 3 {
				if op.N, err = num(2, "a record count"); err != nil {
					return nil, err
				}
				if op.N == 0 || op.N > 10000 {
					return nil, errAt(2, "want 1 to 10000 records, found %d", op.N)
				}
			}
		case "plain":
			op.Kind, op.N = OpPlain, 1
			if len(fields) > 2 {
				return nil, errAt(2, "want \"plain [RECORDS]\"")
			}
			if len(fields) == 2 {
				var err error
				if op.N, err = num(1, "a record count"); err != nil {
					return nil, err
				}
			}
		case "roll":
			if len(fields) == 2 && fields[1] == "snapshot" {
				op.Mode = "snapshot"
			} else if err := want(1, "roll [snapshot]"); err != nil {
				return nil, err
			}
			op.Kind = OpRoll
		case "lose":
			if err := want(2, "lose txnindex"); err != nil {
				return nil, err
			}
			if fields[1] != "txnindex" {
				return nil, errAt(1, "want \"txnindex\" (the one file a lost copy of a segment leaves out that changes what consumers receive), found %q", fields[1])
			}
			op.Kind = OpLoseTxnIndex
		case "gap", "wait", "seek", "retain", "hwm":
			if err := want(2, kw+" N"); err != nil {
				return nil, err
			}
			v, err := num(1, "a number")
			if err != nil {
				return nil, err
			}
			switch kw {
			case "gap":
				op.Kind, op.N = OpGap, v
			case "wait":
				op.Kind, op.N = OpWait, v
			case "seek":
				s.Seeks = append(s.Seeks, v)
				op.Kind, op.N = OpSeek, v
			case "retain":
				s.LogStart = v
				continue
			case "hwm":
				s.HighWatermark = v
				continue
			}
		default:
			return nil, errAt(0, "unknown statement %q (want title, topic, producer, begin, send, commit, abort, plain, roll, gap, bump, wait, seek, retain, hwm or lose)", kw)
		}
		s.Ops = append(s.Ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{name, line + 1, 1, err.Error()}
	}
	return s, nil
}

// split splits a line on spaces and tabs, with each field's 1-based column.
func split(s string) ([]string, []int) {
	var fields []string
	var cols []int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				fields = append(fields, s[start:i])
				cols = append(cols, start+1)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return fields, cols
}
