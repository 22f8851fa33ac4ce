package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gocuda/gocuda/internal/manifest"
)

// genReport gathers what became of each version's headers, across the
// libraries, and prints it as one line per version and a summary: the
// header-by-header lines, which name the cache's paths on this machine,
// only when verbose, as they happen.
type genReport struct {
	verbose  bool
	w        io.Writer
	versions []*versionReport // in the order first seen
}

type versionReport struct {
	name, tag string
	generated int            // headers generated
	functions int            // functions bound, over those headers
	skipped   map[string]int // headers skipped, by short reason
	restamped bool           // committed files kept, their build constraints updated
}

func (r *genReport) of(v manifest.Version) *versionReport {
	for _, vr := range r.versions {
		if vr.tag == v.Tag {
			return vr
		}
	}
	vr := &versionReport{name: v.Name(), tag: v.Tag, skipped: map[string]int{}}
	r.versions = append(r.versions, vr)
	return vr
}

// detail prints a header's line when verbose.
func (r *genReport) detail(format string, args ...any) {
	if r.verbose {
		fmt.Fprintf(r.w, format+"\n", args...)
	}
}

func (r *genReport) generated(v manifest.Version, functions int) {
	vr := r.of(v)
	vr.generated++
	vr.functions += functions
}

func (r *genReport) skipped(v manifest.Version, reason string) { r.of(v).skipped[reason]++ }

func (r *genReport) restamped(v manifest.Version) { r.of(v).restamped = true }

// print writes the line of each version and the summary.
func (r *genReport) print() {
	var generated, skipped int
	for _, vr := range r.versions {
		var parts []string
		if vr.generated > 0 {
			generated++
			parts = append(parts, fmt.Sprintf("generated: %s, %d functions", headers(vr.generated), vr.functions))
		} else {
			skipped++
		}
		var reasons []string
		for reason, n := range vr.skipped {
			reasons = append(reasons, headers(n)+" "+reason)
		}
		// Map order is random; the line must not be.
		sort.Strings(reasons)
		if len(reasons) > 0 {
			parts = append(parts, "skipped: "+strings.Join(reasons, ", "))
		}
		if vr.restamped && vr.generated == 0 {
			parts = append(parts, "its committed files kept")
		}
		fmt.Fprintf(r.w, "%s (%s): %s\n", vr.name, vr.tag, strings.Join(parts, "; "))
	}
	summary := fmt.Sprintf("gen: %d of %d versions generated, %d skipped", generated, generated+skipped, skipped)
	if !r.verbose {
		summary += " (-v prints each header)"
	}
	fmt.Fprintln(r.w, summary)
}

func headers(n int) string {
	if n == 1 {
		return "1 header"
	}
	return fmt.Sprintf("%d headers", n)
}
