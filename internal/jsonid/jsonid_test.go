package jsonid

import (
	"encoding/json"
	"testing"
)

// TestTwins: a producer id past 2^53 − 1, at any depth, in indented JSON
// and JSON lines, gains its string twin with the exact digits; safe ids,
// other members, strings that look like members and number-like strings do
// not; the result is valid JSON with the same members plus the twins.
func TestTwins(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"producer_id":7}`, `{"producer_id":7}`},
		{`{"producer_id":-1}`, `{"producer_id":-1}`},
		{`{"producer_id":9007199254740991}`, `{"producer_id":9007199254740991}`},
		{`{"producer_id":9007199254740992}`, `{"producer_id":9007199254740992,"producer_id_str":"9007199254740992"}`},
		{`{"producer_id":8070450532247928875,"producer_epoch":0}`,
			`{"producer_id":8070450532247928875,"producer_id_str":"8070450532247928875","producer_epoch":0}`},
		{"{\n  \"a\": [{\"next_producer_id\": 9223372036854775807}],\n  \"producer_id\" : 8070450532247928875\n}",
			"{\n  \"a\": [{\"next_producer_id\": 9223372036854775807,\"next_producer_id_str\":\"9223372036854775807\"}],\n  \"producer_id\" : 8070450532247928875,\"producer_id_str\":\"8070450532247928875\"\n}"},
		{`{"reason":"\"producer_id\":8070450532247928875","producer_id":"8070450532247928875"}`,
			`{"reason":"\"producer_id\":8070450532247928875","producer_id":"8070450532247928875"}`},
		{`{"producer_ids":8070450532247928875,"offset":8070450532247928875}`, `{"producer_ids":8070450532247928875,"offset":8070450532247928875}`},
		{"{\"producer_id\":8070450532247928875}\n{\"producer_id\":1}\n",
			"{\"producer_id\":8070450532247928875,\"producer_id_str\":\"8070450532247928875\"}\n{\"producer_id\":1}\n"},
	} {
		got := string(Twins([]byte(c.in)))
		if got != c.want {
			t.Errorf("Twins(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
		var v any
		if c.in[0] == '{' && c.in[len(c.in)-1] == '}' && json.Unmarshal([]byte(got), &v) != nil {
			t.Errorf("%s: not JSON", got)
		}
	}
}

func TestIsKey(t *testing.T) {
	for k, want := range map[string]bool{"producer_id": true, "next_producer_id": true, "previous_producer_id": true,
		"producer_ids": false, "producer_idx": false, "_producer_id": false, "producer": false, "id": false} {
		if IsKey(k) != want {
			t.Errorf("IsKey(%q) = %v", k, !want)
		}
	}
}
