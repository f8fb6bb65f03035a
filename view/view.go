// Package view holds what txnscope's two presentations of a partition must
// agree on: package api (JSON, NDJSON and the websocket stream) and package
// web (the HTML pages). Both import it; web does not import api, so that a
// page never depends on the wire protocol's types, and a test in web keeps
// it that way.
//
// It holds the diagnosis options a query carries (ParseDiagnoseQuery) and
// the Diagnoser, the single-flight diagnosis cache joined with the
// internal topics' evidence, of which a server holds one that the index
// page, the timeline's panel and the diagnosis API share. The package
// itself keeps no state. The lane rule and the words for
// verdicts and causes live in package present, where every page and CLI
// text takes them from. Its API is internal to txnscope.
package view
