package txnindex

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTextOutput: whatever a name holds, TextWord and OneLine leave no raw
// control, newline or invalid UTF-8, EscapeControls none but newline and
// tab; TextWord's quoted form unquotes to the name when it is valid UTF-8;
// a name TopicNameProblem accepts is printed as it is
// (present.FuzzTopicCommands quotes it and builds its commands).
func FuzzTextOutput(f *testing.F) {
	for _, s := range []string{"orders", "", ".", "..", "a\nb", "\x1b[8m", "\x1b]0;t\x07", "a\xffb", "\u009b", "\u202e", "a`id`b", strings.Repeat("x", 250)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for what, out := range map[string]string{"TextWord": TextWord(s), "OneLine": OneLine(s), "EscapeControls": EscapeControls(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q is not UTF-8", what, s, out)
			}
			for _, r := range out {
				if r < 0x20 && !(what == "EscapeControls" && (r == '\n' || r == '\t')) || r >= 0x7f && r <= 0x9f {
					t.Fatalf("%s(%q) = %q holds %U", what, s, out, r)
				}
			}
		}
		if w := TextWord(s); w != s && utf8.ValidString(s) {
			if u, err := strconv.Unquote(w); err != nil || u != s {
				t.Fatalf("TextWord(%q) = %s unquotes to %q, %v", s, w, u, err)
			}
		}
		if TopicNameProblem(s) == "" && TextWord(s) != s {
			t.Fatalf("legal topic %q printed %s", s, TextWord(s))
		}
	})
}
