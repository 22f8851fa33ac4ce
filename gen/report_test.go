package main

import (
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

func TestReportOneLinePerVersion(t *testing.T) {
	v124 := manifest.Version{Version: "12.4", Tag: "cuda12040"}
	v130 := manifest.Version{Version: "13.0", Tag: "cuda13000"}
	for _, verbose := range []bool{false, true} {
		var b strings.Builder
		r := &genReport{verbose: verbose, w: &b}
		r.generated(v124, 400)
		r.detail("CUDA 12.4 (cuda12040) cuda.h: details at /a/path")
		r.skipped(v130, "not cached")
		r.detail("CUDA 13.0 (cuda13000): cuda.h skipped, header not cached at /a/path")
		r.skipped(v130, "not cached")
		r.restamped(v130)
		r.generated(v124, 20)
		r.print()
		want := "CUDA 12.4 (cuda12040): generated: 2 headers, 420 functions\n" +
			"CUDA 13.0 (cuda13000): skipped: 2 headers not cached; its committed files kept\n" +
			"gen: 1 of 2 versions generated, 1 skipped"
		got := b.String()
		if !strings.Contains(got, want) {
			t.Errorf("verbose %v: got\n%s\nwant it to hold\n%s", verbose, got, want)
		}
		if strings.Contains(got, "/a/path") != verbose {
			t.Errorf("verbose %v: the details' paths are printed: %v\n%s", verbose, !verbose, got)
		}
	}
}
