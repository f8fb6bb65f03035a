package present

import (
	"strings"
	"testing"
)

// TestTopicBeginningWithDash: "-rf" and "--help" are legal topic names
// (Topic.validate allows '-' anywhere), but kafka-transactions.sh parses
// its arguments with argparse4j, which takes a value beginning with '-'
// for an option: `--topic -rf` fails with "argument --topic: expected one
// argument". Such a topic is now passed as `--topic=-rf`, which
// argparse4j (and kafka-topics.sh's joptsimple) read as the value; kcat's
// getopt takes the next word whatever it holds. bash must hand the tool
// the topic in one word after the option or joined to it.
func TestTopicBeginningWithDash(t *testing.T) {
	for _, tc := range []struct {
		name, topic string
		want        string // the --topic argument as bash passes it
	}{
		{"an ordinary topic stays a word of its own", "orders", "--topic orders"},
		{"a topic like a short option", "-rf", "--topic=-rf"},
		{"a topic like a long option", "--help", "--topic=--help"},
		{"a topic like a negative number", "-1", "--topic=-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewTopicCommands("k:9092", tc.topic, 0)
			for _, cmd := range []string{c.AbortStart(7), c.AbortProducer(1, 0, 0), c.DescribeProducers(), c.FindHanging(15), c.DescribeTopic()} {
				args, _ := bashWords(t, strings.Fields(cmd))
				got := ""
				for i, a := range args {
					switch {
					case a == "--topic" && i+1 < len(args):
						got = a + " " + args[i+1]
					case strings.HasPrefix(a, "--topic="):
						got = a
					}
				}
				if got != tc.want {
					t.Errorf("%s\n--topic argument %q, want %q", cmd, got, tc.want)
				}
			}
		})
	}
}
