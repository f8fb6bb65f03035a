package present

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// FuzzTopicCommands: a name txnindex.TopicNameProblem accepts is quoted as
// it is, TopicCommands refuses exactly the names it rejects, and no
// command breaks its line.
func FuzzTopicCommands(f *testing.F) {
	for _, s := range []string{"orders", "", ".", "..", "a\nb", "\x1b[8m", "\x1b]0;t\x07", "a\xffb", "\u009b", "\u202e", "a`id`b", strings.Repeat("x", 250)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		legal := txnindex.TopicNameProblem(s) == ""
		if legal && ShellWord(s) != s {
			t.Fatalf("legal topic %q quoted %s", s, ShellWord(s))
		}
		c := NewTopicCommands("k:9092", s, 0)
		if (c.Refused() == "") != legal || strings.ContainsAny(c.AbortStart(0), "\r\n") {
			t.Fatalf("%q: legal %v, refused %q, command %q", s, legal, c.Refused(), c.AbortStart(0))
		}
	})
}
