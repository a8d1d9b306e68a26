package bench

import (
	"fmt"
	"syscall"
)

// raiseFileLimit raises this process's soft limit on open files to the hard
// limit, and both to want when the hard limit is lower and the process may
// (root, or CAP_SYS_RESOURCE). It returns the soft limit then in force, and
// why when that is below want.
func raiseFileLimit(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	var hardErr error
	if lim.Max < want {
		if hardErr = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}); hardErr == nil {
			return want, nil
		}
	}
	if lim.Cur < lim.Max {
		raised := syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return lim.Cur, fmt.Errorf("raise the open-file limit to %d: %w", lim.Max, err)
		}
		lim = raised
	}
	if lim.Cur < want {
		return lim.Cur, fmt.Errorf("raise the hard open-file limit %d to %d: %w", lim.Max, want, hardErr)
	}
	return lim.Cur, nil
}
