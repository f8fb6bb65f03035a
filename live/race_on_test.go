//go:build race

package live

// raceOn: the race detector drops sync.Pool items at random, so pooled
// decoders are made again and allocation bounds are looser.
const raceOn = true
