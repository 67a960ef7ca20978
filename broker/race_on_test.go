//go:build race

package broker

// raceDetector: this test binary runs with the race detector, which makes
// Go code several times slower (more for the encoding of large responses).
const raceDetector = true
