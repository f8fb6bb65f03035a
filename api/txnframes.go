package api

import "github.com/gorilla/websocket"

// sendTxns writes the generation's transaction frames once, right after the
// visible window's decision chunks: the 1M-batch demo has 200,000
// transactions (6.4 MB), and sending them before the window kept the first
// paint waiting on frames the window does not need. The client draws spans
// from the transactions that have arrived (a prefix, in order).
func (c *wsConn) sendTxns(s *stream) error {
	if s.txns {
		return nil
	}
	s.txns = true
	for f := range txnFrames(c.l, s.e.lanes, s.gen) {
		if err := c.write(websocket.BinaryMessage, f); err != nil {
			return err
		}
	}
	return nil
}
