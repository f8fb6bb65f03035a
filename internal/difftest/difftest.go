// Package difftest holds txnscope's differential tests: random transactional
// workloads written by real franz-go producers to a real kfake broker over
// loopback, read back raw, decided by the txnindex engine, and compared with
// what real read_committed consumers (kgo, kgo.ProcessFetchPartition and
// librdkafka's kcat) deliver. The package has no non-test code beyond this
// comment and the small kmsg-based batch reader below, which is kept apart
// from package loader on purpose: the oracle must not share the decoder
// under test.
package difftest
