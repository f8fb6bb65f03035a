package loader

import "github.com/txnscope/txnscope/txnindex"

// maxNotes bounds the problems a segment's scan lists in the batches it
// keeps and goes on past (scanner.note: a bad CRC the broker serves, a
// malformed control record, an undecodable legacy wrapper), as a capture
// lists a stream's: the rest are counted in one last note, at the first
// of them. Each costs its message to keep, a few hundred bytes, and the
// smallest batch that makes one is 26 bytes: 4 MB of magic 0 entries
// whose CRCs fail under a clean shutdown marker took 79 MB.
const maxNotes = 20

// note records a problem inside a batch the scan keeps; the scan goes
// on. Past maxNotes it is counted, not formatted.
func (s *scanner) note(format string, args ...any) {
	if len(s.damage) >= maxNotes { // every entry before the scan stops is a note
		if s.notesLeft == 0 {
			s.notesFirst = s.pos
		}
		s.notesLeft++
		return
	}
	s.damage = append(s.damage, formatErr(s.name, s.pos, "batch", format, args...))
}

// flushNotes adds the note counting those not listed, before the damage
// that stops the scan and at its end.
func (s *scanner) flushNotes() {
	if s.notesLeft > 0 {
		s.damage = append(s.damage, notesLeft(s.name, s.notesFirst, s.notesLeft))
		s.notesLeft = 0
	}
}

// notesLeft is the note counting n notes not listed, the first at byte at.
func notesLeft(name string, at int64, n int) *FormatError {
	fe := formatErr(name, at, "batch", "%s in this segment's batches not listed, the first of them here",
		txnindex.Plural(n, "more problem", "more problems"))
	fe.left = n
	return fe
}

// capNotes lists the first maxNotes of notes, which the parts of a
// segment scanned apart found in byte order, and counts the rest, with
// those each part counted, in one note at the first of them.
func capNotes(name string, notes []*FormatError) []*FormatError {
	if len(notes) == 0 {
		return notes
	}
	out := make([]*FormatError, 0, min(len(notes), maxNotes+1))
	left := 0
	var first int64
	for _, e := range notes {
		switch {
		case e.left == 0 && left == 0 && len(out) < maxNotes:
			out = append(out, e)
			continue
		case left == 0:
			first = e.Offset
		}
		left += max(e.left, 1)
	}
	if left > 0 {
		out = append(out, notesLeft(name, first, left))
	}
	return out
}
