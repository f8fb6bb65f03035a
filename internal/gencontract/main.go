// Command gencontract writes static/js/contract.js: the browser's copy of
// the contract between the Go server and the timeline's scripts (verdict and
// cause codes, names and the words pages show for them, transaction states, decision flags, the gap lane and
// the binary frame layout of docs/protocol.md), taken from packages txnindex
// and api, so that each is written once, in Go. static/static.go runs it:
//
//	go generate ./static
//
// The output is committed (the static export inlines it and no build step
// runs in the browser); make test regenerates it and fails on a diff, and
// this package's tests fail when the committed file is stale. With -check
// the command writes nothing and exits 1 when the file differs from what it
// would write.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

func main() {
	out := flag.String("out", "js/contract.js", "the file to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the file is stale")
	flag.Parse()
	c, err := current()
	if err == nil {
		if *check {
			var have []byte
			if have, err = os.ReadFile(*out); err == nil {
				err = stale(*out, have, c)
			}
		} else {
			err = os.WriteFile(*out, render(c), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencontract:", err)
		os.Exit(1)
	}
}

// A contract is what render writes: lists of names by code, single
// constants and groups of constants (written as frozen objects). Tests feed
// render changed contracts to show that a change in Go makes the committed
// file stale.
type contract struct {
	Lists  []list
	Consts []constant
	Groups []group
}

// list is the names of codes 0, 1, 2, …
type list struct {
	Name, Doc string
	Names     []string
}

type constant struct {
	Name  string
	Value int
	Doc   string
}

type group struct {
	Name, Doc string
	Fields    []constant
}

// current reads the contract from txnindex and api.
func current() (contract, error) {
	verdicts := enum(func(i int) string { return txnindex.Verdict(i).String() })
	causes := enum(func(i int) string { return txnindex.Cause(i).String() })
	// TxnState's String has no "unknown" (anything else reads "open"), so
	// its states are listed here; a new state must be added.
	states := []txnindex.TxnState{txnindex.TxnOpen, txnindex.TxnCommitted, txnindex.TxnAborted}
	stateNames := make([]string, len(states))
	for i, s := range states {
		if int(s) != i {
			return contract{}, fmt.Errorf("txnindex.TxnState %s has code %d, want %d: the codes must be 0, 1, 2, …", s, s, i)
		}
		stateNames[i] = s.String()
	}
	verdictWords := make([]string, len(verdicts))
	for i := range verdicts {
		verdictWords[i] = present.VerdictWords(txnindex.Verdict(i))
	}
	causeWords := make([]string, len(causes))
	for i := range causes {
		causeWords[i] = present.CauseWords(txnindex.Cause(i))
	}
	var kinds, kindWords []string
	for _, k := range txnindex.GroupKinds {
		kinds, kindWords = append(kinds, string(k)), append(kindWords, present.GroupKindWords(k))
	}
	if len(verdicts) == 0 || len(causes) == 0 {
		return contract{}, errors.New("txnindex has no verdict or cause names")
	}
	return contract{
		Lists: []list{
			{"VERDICTS", "txnindex.Verdict names by code (decision record bytes DEC.VERDICT and DEC.UNCOMMITTED), as the NDJSON writes them.", verdicts},
			{"CAUSES", "txnindex.Cause names by code (byte DEC.CAUSE), as the NDJSON writes them.", causes},
			{"VERDICT_WORDS", "present.VerdictWords by code: what a page shows for each verdict (never the snake_case name).", verdictWords},
			{"CAUSE_WORDS", "present.CauseWords by code: what a page shows for each cause.", causeWords},
			{"TXN_STATES", "txnindex.TxnState names by code (transaction record byte TXR.STATE).", stateNames},
			{"GROUP_KINDS", "txnindex.GroupKinds: the group_kind a consumer group's JSON carries.", kinds},
			{"GROUP_KIND_WORDS", "present.GroupKindWords, parallel to GROUP_KINDS: what a page shows for each kind.", kindWords},
		},
		Consts: []constant{
			{"PROTOCOL_VERSION", api.Version, "api.Version, header byte HDR.VERSION"},
			{"FRAME_HEADER", api.FrameHeaderSize, "bytes before the records of a frame"},
			{"FRAME_DECISIONS", api.FrameDecisions, "frame kind (header byte HDR.KIND): decision records"},
			{"FRAME_TXNS", api.FrameTxns, "frame kind: transaction records"},
			{"DECISION_LAYOUT", api.DecisionLayout, "record layout of decision frames (header byte HDR.LAYOUT)"},
			{"DECISION_SIZE", api.DecisionSize, "decision record size in DECISION_LAYOUT"},
			{"DECISION_SIZE_LAYOUT1", api.DecisionSizeLayout1, "decision record size of layout 1 (no timestamp)"},
			{"TXN_SIZE", api.TxnSize, "transaction record size"},
			{"LANE_GAP", api.LaneGap, "lane of a gap decision, drawn across every lane; lane 0 holds batches without a producer id"},
			{"LANE_CAP", present.LaneCap, "producers with a row of their own by default (present.LaneCap); the rest share an \"N more producers\" row"},
			{"F_TXN", api.FlagTransactional, "decision flag (byte DEC.FLAGS): transactional batch"},
			{"F_CONTROL", api.FlagControl, "decision flag: control batch"},
			{"F_COMMIT", api.FlagCommit, "decision flag: COMMIT marker"},
			{"F_ABORT", api.FlagAbort, "decision flag: ABORT marker"},
			{"F_OPEN", api.FlagTxnOpen, "decision flag: its transaction is open"},
		},
		Groups: []group{
			{"VERDICT", "the code of each verdict, by upper-case name", codes(verdicts)},
			{"TXN_STATE", "the code of each transaction state", codes(stateNames)},
			{"HDR", "frame header fields: byte offsets", []constant{
				{"VERSION", api.HeaderVersion, ""}, {"KIND", api.HeaderKind, ""}, {"LAYOUT", api.HeaderLayout, ""},
				{"GENERATION", api.HeaderGeneration, ""}, {"START", api.HeaderStart, ""}, {"COUNT", api.HeaderCount, ""},
			}},
			{"DEC", "decision record fields: byte offsets", []constant{
				{"FROM", api.DecFrom, ""}, {"TO", api.DecTo, ""}, {"BATCH", api.DecBatch, ""}, {"TXN", api.DecTxn, ""},
				{"LANE", api.DecLane, ""}, {"VERDICT", api.DecVerdict, ""}, {"CAUSE", api.DecCause, ""},
				{"UNCOMMITTED", api.DecUncommitted, ""}, {"FLAGS", api.DecFlags, ""}, {"MAX_TIMESTAMP", api.DecMaxTimestamp, ""},
			}},
			{"TXR", "transaction record fields: byte offsets", []constant{
				{"FIRST", api.TxnFirst, ""}, {"LAST_DATA", api.TxnLastData, ""}, {"MARKER", api.TxnMarker, ""},
				{"LANE", api.TxnLane, ""}, {"STATE", api.TxnState, ""}, {"EPOCH", api.TxnEpoch, ""}, {"MARKER_EPOCH", api.TxnMarkerEpoch, ""},
			}},
		},
	}, nil
}

// enum lists the names of codes 0, 1, … up to the first "unknown" (the
// String methods of txnindex's enums answer that past the last code).
func enum(name func(int) string) []string {
	var out []string
	for i := 0; i < 256; i++ {
		s := name(i)
		if s == "unknown" {
			break
		}
		out = append(out, s)
	}
	return out
}

// codes maps each name, upper-cased, to its code.
func codes(names []string) []constant {
	out := make([]constant, len(names))
	for i, n := range names {
		out[i] = constant{Name: strings.ToUpper(n), Value: i}
	}
	return out
}

const header = `// Code generated by internal/gencontract from packages txnindex and api; DO NOT EDIT.
// Regenerate with ` + "`go generate ./static`" + `; make test fails when this file is stale.
//
// The contract between the Go server and the timeline's scripts
// (docs/protocol.md, "Binary frames"): verdict and cause codes, transaction
// states, decision flags, the gap lane and the frame layout. It is the first
// of static.TimelineScripts; the others read it as window.txnscopeContract.
"use strict";
`

// render writes c as the JavaScript file.
func render(c contract) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("window.txnscopeContract = Object.freeze({\n")
	for _, l := range c.Lists {
		fmt.Fprintf(&b, "  // %s\n  %s: Object.freeze([\n", l.Doc, l.Name)
		for i, n := range l.Names {
			fmt.Fprintf(&b, "    %q, // %d\n", n, i)
		}
		b.WriteString("  ]),\n")
	}
	for _, k := range c.Consts {
		fmt.Fprintf(&b, "  %s: %d, // %s\n", k.Name, k.Value, k.Doc)
	}
	for _, g := range c.Groups {
		fmt.Fprintf(&b, "  // %s\n  %s: Object.freeze({", g.Doc, g.Name)
		for i, f := range g.Fields {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s: %d", f.Name, f.Value)
		}
		b.WriteString(" }),\n")
	}
	b.WriteString("});\n")
	return b.Bytes()
}

// stale reports how have (the file name holds) differs from the rendering
// of c, naming the first line that differs, or nil when it does not.
func stale(name string, have []byte, c contract) error {
	want := render(c)
	if bytes.Equal(have, want) {
		return nil
	}
	hl, wl := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	for i := 0; ; i++ {
		var h, w string
		if i < len(hl) {
			h = hl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if h != w || i >= len(hl) || i >= len(wl) {
			return fmt.Errorf("%s is stale (run go generate ./static): line %d is `%s`, Go says `%s`", name, i+1, strings.TrimSpace(h), strings.TrimSpace(w))
		}
	}
}
