// Package view holds what txnscope's two presentations of a partition must
// agree on: package api (JSON, NDJSON and the websocket stream) and package
// web (the HTML pages). Both import it; web does not import api, so that a
// page never depends on the wire protocol's types, and a test in web keeps
// it that way.
//
// It holds the diagnosis options a query carries (ParseDiagnoseQuery) and
// the single-flight diagnosis cache the index page, the timeline's panel
// and the diagnosis API share (Diagnose). The lane rule lives in txnindex
// (Log.Lanes) and the decision labels too (Verdict, Cause), being the
// algorithm's own vocabulary. Its API is internal to txnscope.
package view
