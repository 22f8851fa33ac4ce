package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// parseDLStatus reads one line of apt's APT::Status-Fd output, e.g.
// "dlstatus:2:46.2619:Retrieving file 2 of 2 (7s remaining)", and returns
// the overall percentage. Other kinds of status lines report ok == false.
func parseDLStatus(line string) (percent float64, ok bool) {
	f := strings.SplitN(strings.TrimSpace(line), ":", 4)
	if len(f) < 3 || f[0] != "dlstatus" {
		return 0, false
	}
	p, err := strconv.ParseFloat(f[2], 64)
	if err != nil || p < 0 || p > 100 {
		return 0, false
	}
	return p, true
}

// progress prints a download's percentage, but only every interval or every
// step points: apt reports many times a second, and a log of a slow download
// should stay readable.
type progress struct {
	w        io.Writer
	prefix   string // "CUDA 12.4: downloading nvidia-cuda-dev"
	interval time.Duration
	step     float64
	now      func() time.Time

	printed  bool
	lastTime time.Time
	lastPct  float64
}

func newProgress(w io.Writer, prefix string) *progress {
	return &progress{w: w, prefix: prefix, interval: 2 * time.Second, step: 10, now: time.Now}
}

func (p *progress) update(percent float64) {
	t := p.now()
	if p.printed && t.Sub(p.lastTime) < p.interval && percent-p.lastPct < p.step {
		return
	}
	p.printed, p.lastTime, p.lastPct = true, t, percent
	fmt.Fprintf(p.w, "%s %d%%\n", p.prefix, int(percent))
}
