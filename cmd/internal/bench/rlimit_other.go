//go:build !linux

package bench

import "errors"

// raiseFileLimit is only written for Linux, where the daemon runs; here the
// limit is not known.
func raiseFileLimit(uint64) (uint64, error) {
	return 0, errors.New("raising the open-file limit is only done on Linux")
}
