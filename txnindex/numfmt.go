package txnindex

import "strconv"

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
