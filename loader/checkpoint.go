package loader

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Names of the checkpoint files of a log directory and a partition
// directory (ReplicaManager.HighWatermarkFilename, LogManager,
// LogCleanerManager, LeaderEpochCheckpointFile, PartitionMetadataFile).
const (
	ReplicationOffsetCheckpoint   = "replication-offset-checkpoint"
	RecoveryPointOffsetCheckpoint = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpoint      = "log-start-offset-checkpoint"
	CleanerOffsetCheckpoint       = "cleaner-offset-checkpoint"
	LeaderEpochCheckpointFile     = "leader-epoch-checkpoint"
	PartitionMetadataFile         = "partition.metadata"
)

// maxLineLen bounds one line of a text file. Topic names are at most 249
// characters, so any real line is far shorter.
const maxLineLen = 4096

// OffsetCheckpoint is a decoded offset checkpoint file (the four log-dir
// files above): "topic partition offset" lines after a version and a count.
type OffsetCheckpoint struct {
	Name    string
	Version int
	Entries []OffsetCheckpointEntry // in file order

	byTP map[tp]int64
}

// OffsetCheckpointEntry is one line of an offset checkpoint.
type OffsetCheckpointEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

type tp struct {
	topic     string
	partition int32
}

// Lookup returns the offset recorded for a partition. A partition missing
// from log-start-offset-checkpoint has the first segment's base offset as
// its log start offset (LogManager.checkpointLogStartOffsetsInDir writes
// only the others).
func (c *OffsetCheckpoint) Lookup(topic string, partition int32) (int64, bool) {
	if c == nil {
		return 0, false
	}
	if c.byTP == nil {
		c.byTP = make(map[tp]int64, len(c.Entries))
		for _, e := range c.Entries {
			c.byTP[tp{e.Topic, e.Partition}] = e.Offset
		}
	}
	v, ok := c.byTP[tp{topic, partition}]
	return v, ok
}

// EpochEntry is one line of a leader-epoch-checkpoint.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// LeaderEpochCheckpoint is a decoded leader-epoch-checkpoint.
type LeaderEpochCheckpoint struct {
	Name    string
	Version int
	Entries []EpochEntry
}

// UUID is a Kafka Uuid; String gives the URL-safe base64 form without
// padding that Kafka prints and stores.
type UUID [16]byte

func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// PartitionMetadata is a decoded partition.metadata file.
type PartitionMetadata struct {
	Name    string
	Version int
	TopicID UUID
}

// lines reads r line by line as BufferedReader.readLine does (a line ends at
// \n, \r\n or \r), bounding each line.
type lines struct {
	r    *bufio.Reader
	name string
	n    int
	err  error
	buf  []byte
}

func newLines(r io.Reader, name string) *lines {
	return &lines{r: bufio.NewReaderSize(r, maxLineLen+2), name: name}
}

// next returns the next line, or ok false at the end or on error (in l.err).
func (l *lines) next() (string, bool) {
	b, ok := l.nextBytes()
	return string(b), ok
}

// nextBytes is next without a copy: the line is valid until the next call.
func (l *lines) nextBytes() ([]byte, bool) {
	if l.err != nil {
		return nil, false
	}
	l.buf = l.buf[:0]
	for {
		c, err := l.r.ReadByte()
		if err == io.EOF {
			if len(l.buf) == 0 {
				return nil, false
			}
			l.n++
			return l.buf, true
		}
		if err != nil {
			l.err = fmt.Errorf("loader: %s: reading line %d: %w", l.name, l.n+1, err)
			return nil, false
		}
		switch c {
		case '\n':
			l.n++
			return l.buf, true
		case '\r':
			if nb, err := l.r.Peek(1); err == nil && nb[0] == '\n' {
				l.r.ReadByte()
			}
			l.n++
			return l.buf, true
		}
		if len(l.buf) >= maxLineLen {
			l.err = lineErr(l.name, l.n+1, "line longer than %d bytes", maxLineLen)
			return nil, false
		}
		l.buf = append(l.buf, c)
	}
}

// splitWS is Java's line.split("\\s+"): a leading separator yields an empty
// first field and trailing empty fields are dropped, so " a b" has three
// fields and "a b " two.
func splitWS(s string) []string {
	return splitWSInto(nil, s)
}

// splitWSInto is splitWS appending the fields to dst[:0].
func splitWSInto[T string | []byte](dst []T, s T) []T {
	isWS := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	out := dst[:0]
	start, matched := 0, false
	for i := 0; i < len(s); {
		if !isWS(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWS(s[j]) {
			j++
		}
		out = append(out, s[start:i])
		start, i, matched = j, j, true
	}
	if !matched {
		// No separator: Java returns the input itself, even "".
		return append(out, s)
	}
	out = append(out, s[start:])
	for len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

// readCheckpoint is CheckpointFile.CheckpointReadBuffer.read: a version
// line, a count line, then entries until EOF, parsed by entry. A missing
// version or count line yields no entries, as in Kafka; a count that does
// not match the lines read is an error.
func readCheckpoint(r io.Reader, name string, entry func(fields [][]byte) error) (version int, err error) {
	l := newLines(r, name)
	line, ok := l.next()
	if !ok {
		return 0, l.err
	}
	v, perr := strconv.ParseInt(line, 10, 32)
	if perr != nil {
		return 0, lineErr(name, l.n, "version: want an integer, found %s", excerpt(line))
	}
	if v != 0 {
		return int(v), lineErr(name, l.n, "unrecognised version: want 0, found %d", v)
	}
	line, ok = l.next()
	if !ok {
		return 0, l.err
	}
	count, perr := strconv.ParseInt(line, 10, 32)
	if perr != nil {
		return 0, lineErr(name, l.n, "entry count: want an integer, found %s", excerpt(line))
	}
	found := 0
	var fields [][]byte
	for {
		b, ok := l.nextBytes()
		if !ok {
			break
		}
		// The fields are views of the line: an entry that keeps one
		// copies it (most lines of a large checkpoint are not kept).
		fields = splitWSInto(fields, b)
		if err := entry(fields); err != nil {
			fe := lineErr(name, l.n, "malformed line %s: %v", excerpt(string(b)), err)
			fe.numberFormat = errors.Is(err, errNotInteger)
			return 0, fe
		}
		found++
	}
	if l.err != nil {
		return 0, l.err
	}
	if int64(found) != count {
		return 0, lineErr(name, l.n+1, "expected %d entries, found %d", count, found)
	}
	return 0, nil
}

// errNotInteger is an offset checkpoint entry of three fields whose
// partition or offset does not parse: Kafka's OffsetCheckpointFile.Formatter
// throws a NumberFormatException for it, where every other damage is the
// IOException of CheckpointFile's reader.
var errNotInteger = errors.New("partition or offset is not an integer")

// ReadOffsetCheckpoint decodes replication-offset-checkpoint,
// recovery-point-offset-checkpoint, log-start-offset-checkpoint or
// cleaner-offset-checkpoint. On error it returns the entries read so far.
func ReadOffsetCheckpoint(r io.Reader, name string) (*OffsetCheckpoint, error) {
	return readOffsetCheckpoint(r, name, nil)
}

// readOffsetCheckpoint is ReadOffsetCheckpoint keeping only the entries of
// the partitions keep holds (every entry when keep is nil); every line is
// still checked. A partition has one entry: a line repeating it replaces
// its offset, as the broker's reader (a map, the later line
// winning) and Lookup take it, so that a 64 MiB file of one partition's
// line repeated (6 bytes a line) keeps one entry, not 1.3 GB of them. Its
// Lookup map is built before it returns, so that the result can be shared
// by goroutines.
func readOffsetCheckpoint(r io.Reader, name string, keep map[tp]bool) (*OffsetCheckpoint, error) {
	c := &OffsetCheckpoint{Name: name}
	var topics map[string]bool // the topics keep names, looked up without a copy of the line's
	kept := map[tp]int{}       // each kept partition's entry
	if keep != nil {
		topics = map[string]bool{}
		for k := range keep {
			topics[k.topic] = true
		}
	}
	v, err := readCheckpoint(r, name, func(f [][]byte) error {
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields (topic partition offset), found %d", len(f))
		}
		p, err1 := parseIntBytes(f[1], 32)
		o, err2 := parseIntBytes(f[2], 64)
		if err := errors.Join(err1, err2); err != nil {
			return errNotInteger
		}
		if keep != nil && !topics[string(f[0])] {
			return nil
		}
		topic := string(f[0])
		k := tp{topic, int32(p)}
		if keep != nil && !keep[k] {
			return nil
		}
		if i, ok := kept[k]; ok {
			c.Entries[i].Offset = o
			return nil
		}
		kept[k] = len(c.Entries)
		c.Entries = append(c.Entries, OffsetCheckpointEntry{Topic: topic, Partition: int32(p), Offset: o})
		return nil
	})
	c.Version = v
	c.Lookup("", -1)
	return c, err
}

// ReadLeaderEpochCheckpoint decodes a leader-epoch-checkpoint
// ("epoch startOffset" lines).
func ReadLeaderEpochCheckpoint(r io.Reader, name string) (*LeaderEpochCheckpoint, error) {
	c := &LeaderEpochCheckpoint{Name: name}
	v, err := readCheckpoint(r, name, func(f [][]byte) error {
		if len(f) != 2 {
			return fmt.Errorf("want 2 fields (epoch startOffset), found %d", len(f))
		}
		e, err1 := parseIntBytes(f[0], 32)
		o, err2 := parseIntBytes(f[1], 64)
		if err := errors.Join(err1, err2); err != nil {
			return errors.New("epoch or offset is not an integer")
		}
		c.Entries = append(c.Entries, EpochEntry{Epoch: int32(e), StartOffset: o})
		return nil
	})
	c.Version = v
	return c, err
}

// ReadPartitionMetadata decodes partition.metadata as
// PartitionMetadataReadBuffer does: "version: 0" then "topic_id: <uuid>",
// each line exactly two whitespace-separated fields (the labels are not
// checked, as in Kafka), version 0 only, and a topic id that is URL-safe
// base64 of 16 bytes and not all zero.
func ReadPartitionMetadata(r io.Reader, name string) (*PartitionMetadata, error) {
	m := &PartitionMetadata{Name: name}
	l := newLines(r, name)
	line, ok := l.next()
	if !ok {
		if l.err != nil {
			return m, l.err
		}
		return m, lineErr(name, 1, "missing version line")
	}
	f := splitWS(line)
	if len(f) != 2 {
		return m, lineErr(name, l.n, "malformed line %s: want \"version: 0\"", excerpt(line))
	}
	v, err := strconv.ParseInt(f[1], 10, 32)
	if err != nil {
		return m, lineErr(name, l.n, "version: want an integer, found %s", excerpt(f[1]))
	}
	m.Version = int(v)
	if v != 0 {
		return m, lineErr(name, l.n, "unrecognized version: want 0, found %d", v)
	}
	line, ok = l.next()
	if !ok {
		if l.err != nil {
			return m, l.err
		}
		return m, lineErr(name, 2, "missing topic_id line")
	}
	f = splitWS(line)
	if len(f) != 2 {
		return m, lineErr(name, l.n, "malformed line %s: want \"topic_id: <uuid>\"", excerpt(line))
	}
	id, err := ParseUUID(f[1])
	if err != nil {
		return m, lineErr(name, l.n, "topic_id: %v", err)
	}
	if id == (UUID{}) {
		return m, lineErr(name, l.n, "topic_id: the zero UUID is not a valid topic id")
	}
	m.TopicID = id
	return m, nil
}

// ParseUUID parses Kafka's Uuid.fromString form: URL-safe base64 of 16
// bytes, padding optional, at most 24 characters.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) > 24 {
		return u, fmt.Errorf("%s is too long to be a base64 UUID", excerpt(s))
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return u, fmt.Errorf("%s is not URL-safe base64: %v", excerpt(s), err)
	}
	if len(b) != 16 {
		return u, fmt.Errorf("%s decodes to %d bytes, want 16", excerpt(s), len(b))
	}
	copy(u[:], b)
	return u, nil
}

// parseIntBytes is strconv.ParseInt(string(b), 10, bits) without the
// copy for a short field (the compiler keeps a conversion that does not
// escape on the stack).
func parseIntBytes(b []byte, bits int) (int64, error) {
	if len(b) > 32 {
		return 0, strconv.ErrRange
	}
	var buf [32]byte
	return strconv.ParseInt(string(append(buf[:0], b...)), 10, bits)
}
