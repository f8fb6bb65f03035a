// Package jsonid is the one rule for producer ids in txnscope's JSON: a
// producer id is a JSON number, as Kafka's tools print it
// (kafka-transactions.sh, kafka-dump-log.sh "producerId: …"), and a member
// whose value lies outside JavaScript's safe integers (|id| > 2^53 − 1) is
// followed by a string twin with the exact digits, named after it with
// "_str" ("producer_id_str"). JSON.parse in a browser and jq 1.6 read
// numbers as doubles, so 8070450532247928875 becomes 8070450532247929000
// there (kfake and brokers hand out such ids): readers that need the exact
// id use the twin where it is present and the number where it is not.
//
// Twins applies the rule to encoded JSON, so that every output (the API,
// the websocket, decide's NDJSON, diagnose, cluster, inspect and watch
// JSON) is written by its own encoder and made to follow the rule once,
// here.
package jsonid

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// MaxSafe is JavaScript's Number.MAX_SAFE_INTEGER, 2^53 − 1: the largest
// integer a double holds such that it and its neighbours are exact.
const MaxSafe = 1<<53 - 1

// Suffix names the string twin of a member: "producer_id" + Suffix.
const Suffix = "_str"

// IsKey reports whether a member named key holds a producer id: it is
// "producer_id" or ends in "_producer_id" (previous_producer_id,
// next_producer_id).
func IsKey(key string) bool {
	return key == "producer_id" || len(key) > len("_producer_id") && key[len(key)-len("_producer_id"):] == "_producer_id"
}

// NeedsTwin reports whether id needs a string twin.
func NeedsTwin(id int64) bool { return id > MaxSafe || id < -MaxSafe }

// AppendTwin appends `,"<key>_str":"<id>"` when id needs a twin: for an
// encoder that writes the member itself, right after its value.
func AppendTwin(dst []byte, key string, id int64) []byte {
	if !NeedsTwin(id) {
		return dst
	}
	dst = append(append(append(dst, `,"`...), key...), Suffix+`":"`...)
	return append(strconv.AppendInt(dst, id, 10), '"')
}

// Twins returns src, valid JSON (a value, or JSON lines), with the string
// twin after every producer id member that needs one. src itself is
// returned when none does; it is never modified.
func Twins(src []byte) []byte {
	if !bytes.Contains(src, []byte(`producer_id"`)) {
		return src
	}
	var out []byte
	done := 0 // src[:done] is in out
	for i := 0; i < len(src); {
		if src[i] != '"' {
			i++
			continue
		}
		end := stringEnd(src, i)
		k := skipSpace(src, end)
		if k >= len(src) || src[k] != ':' {
			i = end // a string value
			continue
		}
		key := src[i+1 : end-1]
		v := skipSpace(src, k+1)
		e := v
		for e < len(src) && (src[e] == '-' || src[e] >= '0' && src[e] <= '9') {
			e++
		}
		if IsKey(string(key)) && e > v {
			if id, err := strconv.ParseInt(string(src[v:e]), 10, 64); err == nil && NeedsTwin(id) {
				out = append(out, src[done:e]...)
				out = AppendTwin(out, string(key), id)
				done = e
			}
		}
		i = v
	}
	if out == nil {
		return src
	}
	return append(out, src[done:]...)
}

// stringEnd is the index after the string that starts with the quote at
// src[i] (len(src) if it does not end).
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

// WriteIndent writes v as indented JSON (two spaces, a final newline, as
// json.Encoder with SetIndent("", "  ") does), with the twins.
func WriteIndent(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(Twins(b), '\n'))
	return err
}

// Marshal is json.Marshal with the twins.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return Twins(b), err
}
