package main

import (
	"fmt"
	"iter"

	"github.com/txnscope/txnscope/txnindex"
)

// part is one partition a command works on: the broker's view (log) and,
// for a capture, the fetches a real consumer received.
type part struct {
	log     *txnindex.Log
	fetches []txnindex.CapturedFetch // nil unless from a capture
	iso     txnindex.Isolation       // the captured consumer's isolation level
}

// decisions are the engine's consumer from o.From for files, and the
// consumer that received exactly the captured responses for a capture
// (o.From and o.MaxBytes are then the real consumer's own).
func (p *part) decisions(o txnindex.ConsumeOptions) iter.Seq[txnindex.Decision] {
	if p.fetches != nil {
		return txnindex.Replay(p.fetches, p.iso, o.Variant, p.log)
	}
	return p.log.Decisions(o)
}

func (p *part) describe(o txnindex.ConsumeOptions) string {
	if p.fetches != nil {
		return fmt.Sprintf("replay of %d captured %s fetches, %s rules", len(p.fetches), p.iso, o.Variant)
	}
	from := "log start"
	if o.From >= 0 {
		from = fmt.Sprint(o.From)
	}
	return fmt.Sprintf("%s from %s, max bytes %d, %s rules", o.Isolation, from, o.MaxBytes, o.Variant)
}
