package txnindex

import (
	"strings"
	"testing"
)

// TestTopicNameProblem: Kafka's Topic.validate, case by case.
func TestTopicNameProblem(t *testing.T) {
	for _, tc := range []struct {
		name, topic, want string // want: a piece of the problem, "" for a legal name
	}{
		{"letters digits and the three signs", "Orders.v2_eu-1", ""},
		{"internal topic", "__consumer_offsets", ""},
		{"249 characters", strings.Repeat("a", 249), ""},
		{"250 characters", strings.Repeat("a", 250), "250 bytes long, longer than 249"},
		{"empty", "", "empty"},
		{"dot", ".", `"." or ".."`},
		{"dot dot", "..", `"." or ".."`},
		{"three dots are legal", "...", ""},
		{"semicolon", "orders;touch X;#", `';' at byte 6`},
		{"space", "a b", `' ' at byte 1`},
		{"backtick", "a`id`b", "'`' at byte 1"},
		{"newline", "a\nb", `'\n' at byte 1`},
		{"escape", "\x1b[8m", `'\x1b' at byte 0`},
		{"not UTF-8", "a\xff", "byte 0xff at byte 1"},
		{"unicode", "zamówienia", `'\u00f3' at byte 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TopicNameProblem(tc.topic)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("TopicNameProblem(%q) = %q; want %q", tc.topic, got, tc.want)
			}
		})
	}
}

// TestTextWord: names print as they are when legible, else Go-quoted
// with no raw control byte left.
func TestTextWord(t *testing.T) {
	for _, tc := range []struct{ name, s, want string }{
		{"legal topic", "orders-v2", "orders-v2"},
		{"unicode letters", "zamówienia", "zamówienia"},
		{"empty", "", `""`},
		{"newline forges a line", "a\nSTUCK", `"a\nSTUCK"`},
		{"conceal", "\x1b[8mx", `"\x1b[8mx"`},
		{"retitle", "\x1b]0;title\x07", `"\x1b]0;title\a"`},
		{"C1 CSI", "a\u009b2J", `"a\u009b2J"`},
		{"DEL", "a\x7f", `"a\x7f"`},
		{"bidi override", "a\u202eb", `"a\u202eb"`},
		{"not UTF-8", "a\xffb", `"a\xffb"`},
		{"space", "a b", `"a b"`},
		{"quote", `a"b`, `"a\"b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TextWord(tc.s); got != tc.want {
				t.Errorf("TextWord(%q) = %s; want %s", tc.s, got, tc.want)
			}
		})
	}
}

// TestEscapeControls: what a terminal acts on is escaped, newlines and
// tabs are kept, everything else is left as it is.
func TestEscapeControls(t *testing.T) {
	for _, tc := range []struct{ name, s, want string }{
		{"plain", "LSO 5 STUCK\n", "LSO 5 STUCK\n"},
		{"tab and newline kept", "a\tb\n", "a\tb\n"},
		{"escape sequence", "\x1b[8mSTUCK", `\u001b[8mSTUCK`},
		{"osc title with bell", "\x1b]0;pwned\x07", `\u001b]0;pwned\u0007`},
		{"carriage return", "ok\rSTUCK", `ok\u000dSTUCK`},
		{"DEL", "\x7f", `\u007f`},
		{"C1 CSI", "\u009b8m", `\u009b8m`},
		{"invalid UTF-8 byte", "a\xffb", `a\xffb`},
		{"unicode kept", "zamówienia €", "zamówienia €"},
		{"JSON string keeps its meaning", `{"t":"a` + "\x7f\u0085" + `b"}`, `{"t":"a\u007f\u0085b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EscapeControls(tc.s); got != tc.want {
				t.Errorf("EscapeControls(%q) = %q; want %q", tc.s, got, tc.want)
			}
		})
	}
}

// TestOneLine: a sentence quoting an error stays on its line.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ name, s, want string }{
		{"plain", "NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER"},
		{"newline forges a line", "x\nHANGING orders-0", `x\nHANGING orders-0`},
		{"tab", "a\tb", `a\tb`},
		{"escape", "\x1b[8m", `\u001b[8m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OneLine(tc.s); got != tc.want {
				t.Errorf("OneLine(%q) = %q; want %q", tc.s, got, tc.want)
			}
		})
	}
}
