package view

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// maxBootstrap bounds the bootstrap address echoed into the printed
// commands of every open transaction.
const maxBootstrap = 1024

// ParseDiagnoseQuery reads the diagnosis options from a query:
//
//	now                      the clock transactions are aged against: RFC 3339,
//	                         Unix milliseconds, or "log" for the newest timestamp
//	                         in the log; default wallNow (as the CLI)
//	position                 a consumer position whose lag to the HWM is split; default none
//	bootstrap                the address put in the printed commands; default <bootstrap>
//	transaction_timeout      transaction.timeout.ms as a Go duration or milliseconds
//	max_transaction_timeout  transaction.max.timeout.ms, likewise
//	limit                    how many entries each list holds in detail, 1 to
//	                         txnindex.MaxListLimit; default txnindex.ListCap
//
// The diagnosis API and the web pages both read it, so that a page and its
// API agree. An error names the parameter and what it wants; the callers
// answer it with 400.
func ParseDiagnoseQuery(q url.Values, wallNow time.Time) (diagnosis.Options, error) {
	o := diagnosis.Options{Now: wallNow, Bootstrap: q.Get("bootstrap"), Position: -1}
	switch s := q.Get("now"); s {
	case "":
	case "log":
		o.Now = time.Time{}
	default:
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			o.Now = t
		} else if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			o.Now = time.UnixMilli(ms)
		} else {
			return o, fmt.Errorf("now %q: want RFC 3339, Unix milliseconds or \"log\"", s)
		}
	}
	if s := q.Get("position"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return o, fmt.Errorf("position %q is not a number", s)
		}
		o.Position = max(n, -1)
	}
	var err error
	if o.TxnTimeout, err = queryDuration(q, "transaction_timeout"); err != nil {
		return o, err
	}
	if o.MaxTxnTimeout, err = queryDuration(q, "max_transaction_timeout"); err != nil {
		return o, err
	}
	if len(o.Bootstrap) > maxBootstrap {
		return o, fmt.Errorf("bootstrap is too long")
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > txnindex.MaxListLimit {
			return o, fmt.Errorf("limit %q: want 1 to %d", s, txnindex.MaxListLimit)
		}
		o.Limit = n
	}
	return o, nil
}

// Whose clock a diagnosis' ages are measured with, as DiagnoseClock
// chooses it (the pages print it beside the ages; the API returns it).
const (
	ClockServer = "the server's clock"
	ClockDemo   = "the demo's own time: its newest write"
	ClockLog    = "the newest write in the log"
	ClockGiven  = "the time asked for (now=)"
)

// DiagnoseClock is ParseDiagnoseQuery with the one clock rule the pages and
// the diagnosis API share: without now=, the server's clock (wallNow),
// except for a demo, which is aged by its own time (its newest write: the
// story it tells, "20 minutes stuck"), not by how long ago its fixed
// timestamps were. It returns the options and whose clock they use.
func DiagnoseClock(q url.Values, wallNow time.Time, demo bool) (diagnosis.Options, string, error) {
	o, err := ParseDiagnoseQuery(q, wallNow)
	if err != nil {
		return o, "", err
	}
	switch now := q.Get("now"); {
	case now == "log":
		return o, ClockLog, nil
	case now != "":
		return o, ClockGiven, nil
	case demo:
		o.Now = time.Time{}
		return o, ClockDemo, nil
	}
	return o, ClockServer, nil
}

// queryDuration reads a Go duration ("15m") or milliseconds; 0 when absent.
func queryDuration(q url.Values, name string) (time.Duration, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return 0, fmt.Errorf("%s %q: want a positive duration (15m) or milliseconds", name, s)
}
