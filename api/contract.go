package api

// The binary frame layout of the websocket stream (docs/protocol.md, "Binary
// frames"), exported for internal/gencontract, which writes the browser's
// copy of it (static/js/contract.js) so that the layout is written once, in
// Go. The encoder (appendDecision, encodeTxns, frameHeader) writes the fields
// at these offsets, and TestContractOffsets checks each of them on real
// records.
const (
	// FrameHeaderSize is the header before the records of every frame.
	FrameHeaderSize = frameHeaderSize
	// Header fields: byte offsets in the header.
	HeaderVersion    = 0  // uint8, Version
	HeaderKind       = 1  // uint8, FrameDecisions or FrameTxns
	HeaderLayout     = 2  // uint8, DecisionLayout in decision frames, 0 in transaction frames
	HeaderGeneration = 4  // uint32
	HeaderStart      = 8  // uint32, index of the first record
	HeaderCount      = 12 // uint32, records in the frame

	// Frame kinds (header byte HeaderKind).
	FrameDecisions = frameDecisions
	FrameTxns      = frameTxns

	// DecisionSize is the size of a decision record of DecisionLayout;
	// DecisionSizeLayout1 that of layout 1, which had no timestamp.
	DecisionSize        = decisionSize
	DecisionLayout      = decisionLayout
	DecisionSizeLayout1 = 32
	// TxnSize is the size of a transaction record.
	TxnSize = txnSize

	// LaneGap is the lane of a gap decision, drawn across every lane. Lane 0
	// holds batches without a producer id, lane i ≥ 1 the i-th producer.
	LaneGap = laneGap

	// Flags of a decision record (byte DecFlags).
	FlagTransactional = flagTransactional
	FlagControl       = flagControl
	FlagCommit        = flagCommit
	FlagAbort         = flagAbort
	FlagTxnOpen       = flagTxnOpen
)

// Decision record fields: byte offsets in a record of DecisionLayout.
const (
	DecFrom         = 0  // float64, first offset
	DecTo           = 8  // float64, last offset (inclusive)
	DecBatch        = 16 // int32, batch index in the log, -1 for a gap
	DecTxn          = 20 // int32, transaction index, -1 if none
	DecLane         = 24 // uint16
	DecVerdict      = 26 // uint8, txnindex.Verdict
	DecCause        = 27 // uint8, txnindex.Cause
	DecUncommitted  = 28 // uint8, the txnindex.Verdict under read_uncommitted
	DecFlags        = 29 // uint8, Flag*
	DecMaxTimestamp = 32 // float64, ms since the Unix epoch, -1 for a gap (layout 2)
)

// Transaction record fields: byte offsets in a record of TxnSize.
const (
	TxnFirst       = 0  // float64, first offset
	TxnLastData    = 8  // float64, last data offset seen
	TxnMarker      = 16 // float64, marker offset, -1 while open
	TxnLane        = 24 // uint16
	TxnState       = 26 // uint8, txnindex.TxnState
	TxnEpoch       = 28 // int16, producer epoch
	TxnMarkerEpoch = 30 // int16, marker epoch, -1 while open
)
