package dumplog

import (
	"fmt"

	"github.com/txnscope/txnscope/txnindex"
)

// maxProblems bounds the problems a dump lists, as a capture's are: a
// line of two bytes ("x\n") is a problem of its own, some 100 bytes to
// keep: 50 times the line. The rest are counted in one last problem, at
// the first of them.
const maxProblems = 1000

// maxPartitions bounds the partitions a dump's read follows. A
// "Dumping <dir>/<file>" line of a new directory is a partition, and a
// partition costs about 1 KB once built whatever it holds, from a line
// of 18 bytes: the files of later partitions are counted, not read, and
// said in one problem at the first of them. A broker's log.dirs entry
// holds a few thousand partitions.
const maxPartitions = 20_000

// problems is what a dump found wrong: the first maxProblems, then a
// count and where the first not listed is.
type problems struct {
	list  []error
	left  int
	first LineError
}

// add lists a problem at line and byte pos, or counts it once
// maxProblems are listed (its message is not even formatted then).
func (p *problems) add(name string, line int, pos int64, format string, a ...any) {
	if len(p.list) >= maxProblems {
		if p.left == 0 {
			p.first = LineError{File: name, Line: line, Byte: pos}
		}
		p.left++
		return
	}
	p.list = append(p.list, &LineError{name, line, pos, fmt.Sprintf(format, a...)})
}

// done is the problems listed, then the one counting the rest.
func (p *problems) done() []error {
	if p.left > 0 {
		fe := p.first
		fe.Msg = txnindex.Plural(p.left, "more problem", "more problems") + " not listed, the first of them here"
		p.list = append(p.list, &fe)
		p.left = 0
	}
	return p.list
}

// skippedFiles counts the files of partitions past maxPartitions, and
// where the first of them is dumped.
type skippedFiles struct {
	n     int
	first LineError
}

func (s *skippedFiles) add(name string, line int, pos int64) {
	if s.n == 0 {
		s.first = LineError{File: name, Line: line, Byte: pos}
	}
	s.n++
}

// problem says what maxPartitions left out, nil when nothing.
func (s *skippedFiles) problem() error {
	if s.n == 0 {
		return nil
	}
	fe := s.first
	fe.Msg = fmt.Sprintf("%s of partitions past the first %s not read, the first of them here",
		txnindex.Plural(s.n, "file", "files"), txnindex.Count(int64(maxPartitions)))
	return &fe
}
