package cli

import (
	"encoding/json"
	"github.com/txnscope/txnscope/internal/testfixture"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// hostileTopics are partition directory names a file system holds and
// Kafka would never create: each forges output if printed raw.
var hostileTopics = []struct{ name, topic string }{
	{"newline forges a line", "orders\n  clear: nothing holds the LSO"},
	{"conceal hides what follows", "\x1b[8m"},
	{"title sequence", "\x1b]0;title\x07"},
	{"semicolon runs a second command", "orders;touch X;#"},
	{"backticks run a command", "a`id`b"},
	{"C1 CSI", "a\u009b2Jb"},
	{"carriage return", "ok\rorders"},
	{"glob brackets", "orders[0]"},
}

// rawControl is the first control byte, C1 character or invalid UTF-8
// byte of s (but newline and tab), or -1.
func rawControl(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return i
		}
		i += n
	}
	return -1
}

// TestHostileTopicNamesInCLIText: a topic directory named to forge, hide
// or retitle prints, in diagnose, decide and inspect text, with no raw
// control character; the STUCK verdict keeps its line; the report says
// Kafka would reject the name and prints no runnable command for it;
// diagnose's JSON carries the name exactly.
func TestHostileTopicNamesInCLIText(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := now.Format(time.RFC3339)
	for _, tc := range hostileTopics {
		t.Run(tc.name, func(t *testing.T) {
			pdir := testfixture.WriteHostileDir(t, tc.topic, now)
			code, text, errOut := runArgs(t, "diagnose", "--now", at, pdir)
			if code != exitHanging {
				t.Fatalf("diagnose: exit %d, stderr %s\n%s", code, errOut, text)
			}
			for _, out := range []string{text, errOut} {
				if i := rawControl(out); i >= 0 {
					t.Errorf("raw control at byte %d: %q", i, out[max(i-20, 0):min(i+20, len(out))])
				}
			}
			lines := strings.Split(text, "\n")
			stuck := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "  STUCK: the LSO ") && strings.Contains(l, "5 offsets behind the high watermark") {
					stuck++
				}
				if strings.Contains(l, "kafka-transactions.sh --") || strings.Contains(l, "kcat -C") {
					t.Errorf("a command is printed for the topic: %q", l)
				}
				if strings.HasPrefix(strings.TrimSpace(l), "clear") {
					t.Errorf("a forged line: %q", l)
				}
			}
			if stuck != 1 || !strings.Contains(text, "topic name Kafka would reject: ") || !strings.Contains(text, "# no command: topic name Kafka would reject") {
				t.Errorf("want one STUCK line, the rejection and the commented-out commands:\n%s", text)
			}

			_, js, _ := runArgs(t, "diagnose", "--now", at, "--format", "json", pdir)
			var d struct {
				Partitions []struct {
					Topic            string `json:"topic"`
					TopicNameProblem string `json:"topic_name_problem"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Partitions) != 1 {
				t.Fatalf("json: %v\n%s", err, js)
			}
			if p := d.Partitions[0]; p.Topic != tc.topic || p.TopicNameProblem == "" {
				t.Errorf("json topic %q, problem %q; want %q", p.Topic, p.TopicNameProblem, tc.topic)
			}

			for _, args := range [][]string{{"decide", pdir}, {"inspect", pdir}} {
				code, out, errOut := runArgs(t, args...)
				if code != 0 {
					t.Errorf("%s: exit %d %s", args[0], code, errOut)
				}
				if i := rawControl(out + errOut); i >= 0 {
					t.Errorf("%s: raw control at byte %d: %q", args[0], i, (out + errOut)[max(i-20, 0):min(i+20, len(out+errOut))])
				}
			}
		})
	}
}

// TestControlEscaperSplitWrites: stdout's escaper sees a character cut
// between two writes whole, and escapes what a terminal would act on.
func TestControlEscaperSplitWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain lines pass", []string{"a\n", "b\tc\n"}, "a\nb\tc\n"},
		{"letter cut in two", []string{"a\xc3", "\xa9b"}, "aéb"},
		{"C1 cut in two", []string{"x\xc2", "\x9b2J"}, `x\u009b2J`},
		{"escape sequence", []string{"\x1b[8mSTUCK"}, `\u001b[8mSTUCK`},
		{"euro cut in three", []string{"\xe2", "\x82", "\xac"}, "€"},
		{"a lone lead byte at the end", []string{"ok\xe2"}, `ok\xe2`},
		{"invalid byte", []string{"a\xffb"}, `a\xffb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			c := &controlEscaper{w: &b}
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			c.flush()
			if b.String() != tc.want {
				t.Errorf("%q: wrote %q; want %q", tc.writes, b.String(), tc.want)
			}
		})
	}
}
