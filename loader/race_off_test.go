//go:build !race

package loader

const raceOn = false
