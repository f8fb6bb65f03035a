package txnindex

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxTopicNameLength is the longest topic name Kafka accepts
// (org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH), which keeps a
// partition directory's name, topic-partition, within the 255-byte file
// name limit of most file systems.
const MaxTopicNameLength = 249

// TopicNameProblem says why Kafka would reject topic as a topic name, or
// "" when it would accept it. The rule is Kafka's Topic.validate (the
// check CreateTopics and the auto-creation of topics run): not empty, not
// "." or "..", at most 249 characters, each an ASCII letter or digit, '.',
// '_' or '-'.
//
// A name that breaks it cannot be a topic of a real broker: it comes from
// a renamed or forged partition directory, a capture or dump edited by
// hand, or a broker that lies in its Metadata answers. The commands
// printed for such a name would at best fail and at worst act on another
// topic (a shell reads "a;b" as two commands), so none is printed for it
// (present.TopicCommands); the report says the name is one Kafka would reject.
func TopicNameProblem(topic string) string {
	switch {
	case topic == "":
		return "it is empty"
	case topic == "." || topic == "..":
		return `it is "." or ".."`
	case len(topic) > MaxTopicNameLength:
		return fmt.Sprintf("it is %d bytes long, longer than %d", len(topic), MaxTopicNameLength)
	}
	for i := 0; i < len(topic); i++ {
		if !legalTopicByte(topic[i]) {
			r, _ := utf8.DecodeRuneInString(topic[i:])
			what := strconv.QuoteRuneToASCII(r)
			if r == utf8.RuneError {
				what = fmt.Sprintf("byte %#02x", topic[i])
			}
			return fmt.Sprintf("it holds %s at byte %d, and only ASCII letters, digits, '.', '_' and '-' are allowed", what, i)
		}
	}
	return ""
}

func legalTopicByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// TextWord is s as a line of terminal text shows it: as it is when every
// character is printable (strconv.IsPrint: no C0 or C1 control, no DEL,
// no format character such as a bidirectional override) and s is valid
// UTF-8, not empty and holds no space or quote; else Go-quoted, with
// those escaped. A name from a file or a broker can thus neither forge a
// line (a newline), hide one (ESC [8m, "conceal") nor retitle the
// terminal (ESC ]0;...BEL). Every legal topic name prints as it is.
//
// Transactional ids and group names are printed with %q, which is
// strconv.Quote too.
func TextWord(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\\' || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// PartitionName is topic-partition as text output names a partition,
// the topic through TextWord.
func PartitionName(topic string, partition int32) string {
	return TextWord(topic) + "-" + strconv.Itoa(int(partition))
}

// EscapeControls replaces in s each byte or character a terminal would
// act on instead of showing, except newline and tab: C0 controls, DEL
// and C1 controls (U+0080-U+009F, which some terminals read as CSI and
// OSC), each as \u00NN, and bytes that are not UTF-8, each as \xNN. It
// is the last line of defence of the CLI's output (internal/cli wraps
// stdout in it); names are escaped where they are printed (TextWord), so
// that a newline in one cannot forge a line either.
//
// JSON goes through it unchanged in meaning: encoding/json writes no raw
// C0 control and no invalid UTF-8, and \u007f or \u0085 inside a JSON
// string is the character the raw one was.
func EscapeControls(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// OneLine is EscapeControls that escapes newlines and tabs too, as \n
// and \t: for a sentence that may quote what a file or a broker said
// (an error message) and must stay on its line.
func OneLine(s string) string {
	s = EscapeControls(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
	}
	return s
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r <= 0x9f {
			return true
		}
		i += n
	}
	return false
}

// internalTopics are the broker's own topics (Topic.INTERNAL_TOPICS in
// Kafka's clients, plus share groups' state, KIP-932): shown, but folded
// away on the index, since the question is usually about the user's topics.
var internalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true, "__share_group_state": true}

// IsInternalTopic reports whether topic is one of the broker's own topics.
func IsInternalTopic(topic string) bool { return internalTopics[topic] }

// NaturalCompare orders strings with their digit runs compared as
// numbers: "t-8" before "t-39", "orders2" before "orders10".
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// ClusterMetadataTopic is the KRaft metadata log's topic: the controllers'
// Raft log (KafkaRaftServer's MetadataTopic), in every KRaft node's
// metadata.log.dir as __cluster_metadata-0.
const ClusterMetadataTopic = "__cluster_metadata"

// MetadataLogNote says what a partition of topic is when it is not a data
// partition a consumer reads: for __cluster_metadata, the KRaft metadata
// log, whose batches are metadata records and Raft control records
// (LeaderChange, SnapshotHeader/Footer, KRaftVersion, Voters), never a
// producer transaction, and whose snapshots are the .checkpoint files
// beside it. "" for any other topic.
func MetadataLogNote(topic string) string {
	if topic != ClusterMetadataTopic {
		return ""
	}
	return "KRaft cluster metadata log (__cluster_metadata): the controllers' Raft log of metadata records, " +
		"with its snapshots in .checkpoint files; it holds no producer transactions and no consumer reads it, " +
		"so it has no last stable offset to be held"
}
