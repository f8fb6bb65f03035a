package txnindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// AbortedTxnSize is the size of one .txnindex entry (AbortedTxn.TOTAL_SIZE).
const AbortedTxnSize = 34

// AbortedTxnVersion is the only entry version Kafka writes
// (AbortedTxn.CURRENT_VERSION).
const AbortedTxnVersion = 0

// AbortedTxn is one entry of a .txnindex file: a transaction of ProducerID
// that began at FirstOffset and was aborted by the marker at LastOffset.
// LastStableOffset is the LSO the broker computed when it appended the
// marker (ProducerStateManager.lastStableOffset): the first offset of the
// earliest transaction of another producer still undecided at that instant,
// else LastOffset+1. The fetch path relies on it to stop collecting early.
type AbortedTxn struct {
	Version          int16
	ProducerID       ProducerID
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// AppendTo appends the 34-byte big-endian encoding Kafka writes.
func (e AbortedTxn) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(e.Version))
	b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(e.FirstOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(b, uint64(e.LastStableOffset))
}

// String renders the entry as kafka-dump-log.sh does.
func (e AbortedTxn) String() string {
	return fmt.Sprintf("version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d",
		int8(e.Version>>8), e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
}

// FormatError is a decoding error at a byte position of an input.
type FormatError struct {
	Offset int64  // byte position where the problem starts
	Msg    string // what was expected and what was found
	// Version is the version byte of an entry Kafka refuses
	// (RejectedVersion), 0 for any other damage.
	Version int8
}

// RejectedVersion reports whether err is an entry whose version Kafka's
// TransactionIndex refuses, and that version. Kafka's iterator throws a
// KafkaException for it, which LogLoader does not catch (it recovers a
// segment only on NoSuchFileException and CorruptIndexException): a broker
// that loads the file fails to start, where a truncated entry is silently
// skipped.
func RejectedVersion(err error) (int8, bool) {
	var fe *FormatError
	if errors.As(err, &fe) && fe.Version > 0 {
		return fe.Version, true
	}
	return 0, false
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("txnindex: entry at byte %#x: %s", e.Offset, e.Msg)
}

// ErrFormat is matched by errors.Is for every *FormatError.
var ErrFormat = errors.New("txnindex: bad format")

// Is makes errors.Is(err, ErrFormat) true.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

// DecodeAbortedTxn decodes one entry from the first 34 bytes of b. off is the
// entry's byte position, used in errors.
//
// The version check mirrors a quirk of AbortedTxn.version(): Kafka reads the
// single signed byte at position 0 (buffer.get), not the int16, and rejects
// the entry only when that byte is greater than CURRENT_VERSION. So the
// int16 0x0001 is accepted (its first byte is 0) and 0x0100 is not.
func DecodeAbortedTxn(b []byte, off int64) (AbortedTxn, error) {
	if len(b) < AbortedTxnSize {
		return AbortedTxn{}, &FormatError{Offset: off, Msg: fmt.Sprintf("truncated entry: want %d bytes, found %d", AbortedTxnSize, len(b))}
	}
	e := AbortedTxn{
		Version:          int16(binary.BigEndian.Uint16(b[0:])),
		ProducerID:       ProducerID(binary.BigEndian.Uint64(b[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
	}
	if v := int8(b[0]); v > AbortedTxnVersion {
		return e, &FormatError{Offset: off, Msg: fmt.Sprintf("unsupported version: want %d, found %d (first byte %#02x)", AbortedTxnVersion, v, b[0]), Version: v}
	}
	return e, nil
}

// maxIndexEntries bounds what ReadTxnIndex allocates up front from a size it
// was told; growth past it happens only as bytes actually arrive.
const maxIndexEntries = 1 << 16

// ReadTxnIndex decodes a whole .txnindex stream. It returns every entry it
// could decode; on a bad version it stops there, and a trailing partial
// entry (which Kafka's iterator silently ignores) is reported as an error
// after the complete entries, so a caller can keep them and show the damage.
// sizeHint, if positive, presizes the result (bounded).
func ReadTxnIndex(r io.Reader, sizeHint int64) ([]AbortedTxn, error) {
	n := sizeHint / AbortedTxnSize
	if n < 0 {
		n = 0
	}
	out := make([]AbortedTxn, 0, min(n, maxIndexEntries))
	// Entries are 34 bytes: read through a buffer, or an *os.File costs a
	// read(2) per entry (a 1 GiB segment of 1 KiB batches has some 30,000
	// entries: 60 ms of syscalls, a quarter of its header scan).
	if _, ok := r.(io.ByteReader); !ok {
		r = bufio.NewReaderSize(r, txnIndexReadBuffer)
	}
	var buf [AbortedTxnSize]byte
	var off int64
	for {
		k, err := io.ReadFull(r, buf[:])
		if err == io.EOF {
			return out, nil
		}
		if err == io.ErrUnexpectedEOF {
			// Kafka's iterator reads an entry only while a whole one
			// remains (hasNext), so the broker skips these bytes.
			return out, &FormatError{Offset: off, Msg: fmt.Sprintf("truncated entry: want %d bytes, found %d before end of file (the broker reads only whole entries and skips them)", AbortedTxnSize, k)}
		}
		if err != nil {
			return out, fmt.Errorf("txnindex: reading entry at byte %#x: %w", off, err)
		}
		e, derr := DecodeAbortedTxn(buf[:], off)
		if derr != nil {
			return out, derr
		}
		out = append(out, e)
		off += AbortedTxnSize
	}
}

// txnIndexReadBuffer is ReadTxnIndex's read size: 64 KiB holds 1,927
// entries, more than most segments' .txnindex.
const txnIndexReadBuffer = 64 << 10

// EncodeTxnIndex encodes entries as a .txnindex file.
func EncodeTxnIndex(entries []AbortedTxn) []byte {
	b := make([]byte, 0, len(entries)*AbortedTxnSize)
	for _, e := range entries {
		b = e.AppendTo(b)
	}
	return b
}
