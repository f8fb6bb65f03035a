package txnindex

import "strings"

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

// topicWord is the topic as the commands name it: TopicVar when it is not
// known (Log.TopicUnknown).
func (l *Log) topicWord() string {
	if l.TopicUnknown {
		return TopicVar
	}
	return l.Topic
}

// ShellWord quotes s for a POSIX shell: as it is when it holds only
// characters no shell treats specially (every legal Kafka topic name and
// host:port), else in single quotes. "" becomes BootstrapVar's
// counterpart, ” (an empty word).
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:,/@%+=[]") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bootstrapWord is the bootstrap address as the commands print it.
func bootstrapWord(addr string) string {
	if addr == "" {
		return BootstrapVar
	}
	return ShellWord(addr)
}

// UsesBootstrapVar reports whether a printed command needs BOOTSTRAP set.
func UsesBootstrapVar(cmd string) bool { return strings.Contains(cmd, BootstrapVar) }

// usesBootstrapVar: some command of d needs BOOTSTRAP set.
func (d *Diagnosis) usesBootstrapVar() bool {
	for _, ts := range [][]OpenTxnReport{d.OpenTransactions, d.Unreplicated} {
		for i := range ts {
			if UsesBootstrapVar(ts[i].AbortCommand) || UsesBootstrapVar(ts[i].Discards.PrintCommand) || UsesBootstrapVar(ts[i].ConfirmCommand) {
				return true
			}
		}
	}
	return false
}
