package cli

import (
	"io"
	"unicode/utf8"

	"github.com/txnscope/txnscope/txnindex"
)

// controlEscaper is stdout as every command writes it: each control
// character (but newline and tab) and each byte that is not UTF-8 goes
// out escaped (txnindex.EscapeControls), whatever name or file content a
// line carries, so that no input can send a terminal an escape sequence
// (ESC [8m hides the lines after it, ESC ]0;…BEL retitles the window).
// JSON keeps its meaning through it. A character split across two
// writes is held until its end comes.
type controlEscaper struct {
	w    io.Writer
	pend []byte
}

func (c *controlEscaper) Write(p []byte) (int, error) {
	buf := append(c.pend, p...)
	cut := len(buf)
	// Hold an incomplete UTF-8 sequence at the end (at most 3 bytes).
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	c.pend = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(c.w, txnindex.EscapeControls(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes what is held, escaped: at the end a held byte is not the
// start of a character.
func (c *controlEscaper) flush() {
	if len(c.pend) > 0 {
		io.WriteString(c.w, txnindex.EscapeControls(string(c.pend)))
		c.pend = nil
	}
}
