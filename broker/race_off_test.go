//go:build !race

package broker

// raceDetector: this test binary runs without the race detector.
const raceDetector = false
