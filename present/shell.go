package present

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// BootstrapVar is what the printed commands carry for the bootstrap
// address when none was given: a quoted shell variable, so that a copied
// command runs once BOOTSTRAP is set. A placeholder such as <bootstrap>
// is read by the shell as a redirection from a file named "bootstrap".
const BootstrapVar = `"$BOOTSTRAP"`

// BootstrapGuard is the line put before commands that use BootstrapVar:
// it runs, and stops with the reason while BOOTSTRAP is unset or empty.
const BootstrapGuard = `: "${BOOTSTRAP:?set BOOTSTRAP to your brokers, e.g. BOOTSTRAP=kafka:9092}"`

// TopicVar is what the printed commands carry for the topic when it is not
// known: a segment read alone, whose file name is its base offset, not a
// topic. As with BootstrapVar, a copied command runs once TOPIC is set.
const TopicVar = `"$TOPIC"`

// TopicGuard is the line put before commands that use TopicVar.
const TopicGuard = `: "${TOPIC:?set TOPIC to the topic this segment belongs to, e.g. TOPIC=orders}"`

// UsesTopicVar reports whether cmd names the topic through TopicVar.
func UsesTopicVar(cmd string) bool { return strings.Contains(cmd, TopicVar) }

// ShellWord quotes s for a POSIX shell: as it is when it holds only
// characters no shell treats specially (every legal Kafka topic name and
// host:port), else in single quotes, inside which a POSIX shell takes
// every byte as it is but the quote itself, written '\”. "" becomes ”
// (an empty word). It is the one quoting function of the printed and
// copied commands: the CLI's, the JSON's and the web page's (whose
// script never quotes, it shows what the server sent). A NUL cannot be
// passed in an argument at all; no legal topic holds one, and the
// commands of an illegal topic are not printed (TopicCommands).
//
// The bare set leaves out the glob characters (*, ?, [ and ]), which a
// shell expands against the files of the current directory, '=' (zsh
// expands a word that begins with it), '~' and '{'.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:,/@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bootstrapWord is the bootstrap address as the commands print it:
// BootstrapVar when none was given (or when it is BootstrapVar already,
// as live's scans pass it).
func bootstrapWord(addr string) string {
	if addr == "" || addr == BootstrapVar {
		return BootstrapVar
	}
	return ShellWord(addr)
}

// TopicCommands builds the commands printed for one partition, every
// value through ShellWord. For a topic Kafka would reject
// (TopicNameProblem) each command is instead a shell comment that says
// so: a real broker has no such topic, and the name, even quoted, would
// put into a copied line whatever a forged name holds (a comment cannot
// carry it either: a newline in it would end the comment). The comment
// names the topic through TextWord, so it is one line.
type TopicCommands struct {
	boot, topic string
	partition   int32
	refused     string
}

// topicOption is the --topic option of kafka-transactions.sh and
// kafka-topics.sh. A legal topic may begin with '-' ("-rf", "--help"), and
// kafka-transactions.sh's argparse4j takes such a word after an option for
// an option of its own ("argument --topic: expected one argument"): it is
// joined to the option with '=', which argparse4j and joptsimple both read
// as the value. kcat's getopt takes the next word whatever it holds.
func (c TopicCommands) topicOption() string {
	if strings.HasPrefix(c.topic, "-") {
		return "--topic=" + c.topic
	}
	return "--topic " + c.topic
}

// UnknownTopicCommands are the commands of a partition whose topic is not
// known (a segment read alone): TopicVar, unquoted so that the shell
// expands it, stands for the topic.
func UnknownTopicCommands(bootstrap string, partition int32) TopicCommands {
	return TopicCommands{boot: bootstrapWord(bootstrap), topic: TopicVar, partition: partition}
}

// NewTopicCommands: bootstrap is the address as given ("" for
// BootstrapVar), topic the name as read.
func NewTopicCommands(bootstrap, topic string, partition int32) TopicCommands {
	c := TopicCommands{boot: bootstrapWord(bootstrap), topic: ShellWord(topic), partition: partition}
	if p := txnindex.TopicNameProblem(topic); p != "" {
		c.refused = "# no command: topic name Kafka would reject: " + txnindex.TextWord(topic) + ": " + p
	}
	return c
}

// Refused is the comment that replaces the commands of a topic Kafka
// would reject, or "".
func (c TopicCommands) Refused() string { return c.refused }

func (c TopicCommands) guard(cmd string) string {
	if c.refused != "" {
		return c.refused
	}
	return cmd
}

func (c TopicCommands) txns(verb string) string {
	return fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s %s %s --partition %d", c.boot, verb, c.topicOption(), c.partition)
}

// AbortStart is kafka-transactions.sh abort --start-offset: the tool asks
// DescribeProducers for the producer whose transaction starts there and
// fills in its epochs itself.
func (c TopicCommands) AbortStart(start int64) string {
	return c.guard(fmt.Sprintf("%s --start-offset %d", c.txns("abort"), start))
}

// AbortStartAfterDescribe is describe-producers, then the abort with a
// START the reader sets from its answer (a placeholder in angle brackets
// would be a shell redirection).
func (c TopicCommands) AbortStartAfterDescribe() string {
	return c.guard(c.txns("describe-producers") + "\n" +
		"START=  # its CurrentTransactionStartOffset, from the line above\n" +
		c.txns("abort") + ` --start-offset "${START:?set START first}"`)
}

// AbortProducer is the abort that names the producer, its epoch and the
// coordinator epoch (the broker fences a lower one).
func (c TopicCommands) AbortProducer(pid int64, epoch int16, coordinatorEpoch int32) string {
	return c.guard(fmt.Sprintf("%s --producer-id %d --producer-epoch %d --coordinator-epoch %d", c.txns("abort"), pid, epoch, coordinatorEpoch))
}

// DescribeProducers lists the partition's producers and their open
// transactions' start offsets.
func (c TopicCommands) DescribeProducers() string { return c.guard(c.txns("describe-producers")) }

// FindHanging is kafka-transactions.sh find-hanging for the partition: the
// coordinator's word on whether its open transactions are hanging
// (KIP-664); maxTimeoutMinutes, when above 0, is passed as the tool's
// --max-transaction-timeout.
func (c TopicCommands) FindHanging(maxTimeoutMinutes int64) string {
	cmd := c.txns("find-hanging")
	if maxTimeoutMinutes > 0 {
		cmd += fmt.Sprintf(" --max-transaction-timeout %d", maxTimeoutMinutes)
	}
	return c.guard(cmd)
}

// KcatPrint prints count records from offset from, read_uncommitted (the
// records of open transactions too).
func (c TopicCommands) KcatPrint(from, count int64) string {
	return c.guard(c.kcat(from, count))
}

func (c TopicCommands) kcat(from, count int64) string {
	return fmt.Sprintf("kcat -C -b %s -t %s -p %d -o %d -c %d -X isolation.level=read_uncommitted -f '%%o %%k %%s\\n'", c.boot, c.topic, c.partition, from, count)
}

// KcatPrintRanges prints the records of rs and only those, read_uncommitted:
// kcat cannot filter by producer, so each range is a kcat of its own (a
// line each), from its first offset for its count of records (kcat's -c
// counts records, not offsets). At most
// most ranges are printed; a comment line says how many are left out and
// where. Ranges without a record are skipped; with none left it is "".
func (c TopicCommands) KcatPrintRanges(rs []diagnosis.PrintRange, most int) string {
	var lines []string
	for i, r := range rs {
		if r.Records <= 0 {
			continue
		}
		if len(lines) == most {
			var left, recs int64
			for _, r := range rs[i:] {
				if r.Records > 0 {
					left++
					recs += r.Records
				}
			}
			lines = append(lines, fmt.Sprintf("# and %s (%s) up to offset %d: the list of offsets above has them all",
				txnindex.Plural(left, "more range", "more ranges"), txnindex.Plural(recs, "record", "records"), rs[len(rs)-1].To))
			break
		}
		lines = append(lines, c.kcat(r.From, r.Records))
	}
	if len(lines) == 0 {
		return ""
	}
	return c.guard(strings.Join(lines, "\n"))
}

// DescribeAndKcatPrint is DescribeProducers, then KcatPrint, on one line.
func (c TopicCommands) DescribeAndKcatPrint(from, count int64) string {
	return c.guard(c.txns("describe-producers") + "; " + c.kcat(from, count))
}

// DescribeTopic shows the topic's replicas and in-sync replicas.
func (c TopicCommands) DescribeTopic() string {
	return c.guard(fmt.Sprintf("kafka-topics.sh --bootstrap-server %s --describe %s", c.boot, c.topicOption()))
}

// UsesBootstrapVar reports whether a printed command needs BOOTSTRAP set.
func UsesBootstrapVar(cmd string) bool { return strings.Contains(cmd, BootstrapVar) }
