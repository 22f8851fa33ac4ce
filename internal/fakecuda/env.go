package fakecuda

import "os"

// QuickRaceExit returns a GORACE environment entry for a child process
// that adds, to the caller's own GORACE options, atexit_sleep_ms=0: a
// binary built with -race otherwise sleeps a second before it exits, which
// makes tests that start a process per case (fault sweeps) take minutes.
// Without -race the variable is ignored.
func QuickRaceExit() string {
	opts := os.Getenv("GORACE")
	if opts != "" {
		opts += " "
	}
	return "GORACE=" + opts + "atexit_sleep_ms=0"
}
