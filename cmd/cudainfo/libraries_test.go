package main

import (
	"os"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

const nowhere = "/nonexistent/libcublas.so"

var cachedNVRTC string

// TestMain points cuBLAS nowhere and NVRTC at the header cache's library,
// if there is one, before anything loads them: each loads once per process.
func TestMain(m *testing.M) {
	os.Setenv(cublas.LibraryEnv, nowhere)
	cachedNVRTC = nvrtctest.UseCached(rawnvrtc.HeaderVersion() / 1000)
	os.Exit(m.Run())
}

func TestPrintLibrariesOneLineEach(t *testing.T) {
	var b strings.Builder
	printLibraries(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 1+len(libraries) || lines[0] != "libraries:" {
		t.Fatalf("want a heading and %d lines, got:\n%s", len(libraries), b.String())
	}
	byName := map[string]string{}
	for i, l := range libraries {
		fields := strings.Fields(lines[1+i])
		if len(fields) < 3 || fields[0] != l.name {
			t.Fatalf("line %d is %q, want %s, a version or \"missing\", and a path or reason", 1+i, lines[1+i], l.name)
		}
		byName[l.name] = lines[1+i]
	}
	if l := byName["cuBLAS"]; !strings.Contains(l, "missing") || !strings.Contains(l, nowhere) || !strings.Contains(l, cublas.LibraryEnv) {
		t.Errorf("cuBLAS at %s: %q, want it missing, naming the path and %s", nowhere, l, cublas.LibraryEnv)
	}
	if cachedNVRTC == "" {
		t.Logf("no cached NVRTC library: its line is %q", byName["NVRTC"])
		return
	}
	if l := byName["NVRTC"]; strings.Contains(l, "missing") || !strings.HasSuffix(l, cachedNVRTC) {
		t.Errorf("NVRTC at %s: %q, want its version and that file", cachedNVRTC, l)
	}
}

func TestEncodedVersion(t *testing.T) {
	for _, c := range []struct {
		v, base int
		want    string
	}{{120805, 10000, "12.8.5 (120805)"}, {10305, 1000, "10.3.5 (10305)"}, {22803, 10000, "2.28.3 (22803)"}} {
		got, err := encoded(func() (int, error) { return c.v, nil }, c.base)()
		if err != nil || got != c.want {
			t.Errorf("encoded(%d, %d) = %q, %v; want %q", c.v, c.base, got, err, c.want)
		}
	}
}
