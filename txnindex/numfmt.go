package txnindex

import (
	"fmt"
	"strconv"
)

// The one format of counts in text (issue 21: "1 offset", "1 batch",
// "1,234,567 records", CLI included): every CLI text printer and the
// labels here use Count and Plural. Counts are quantities; offsets,
// producer ids and epochs are identifiers that a reader copies into
// kafka-transactions.sh or kcat, and stay plain digits.

// Count writes n with comma thousands separators, as the browser's
// Number.toLocaleString does in English: 32,767.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Plural writes n and the noun that agrees with it: "1 batch",
// "0 batches", "1,024 batches".
func Plural[N ~int | ~int32 | ~int64](n N, one, many string) string {
	if n == 1 || n == -1 {
		return Count(int64(n)) + " " + one
	}
	return Count(int64(n)) + " " + many
}

// Bytes is a byte count for a reader, in binary units to one decimal:
// "12.3 MiB", "2.1 KiB", "90 B" (the replay line, the lazy join's note).
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
