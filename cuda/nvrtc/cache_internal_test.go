//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestDirectives(t *testing.T) {
	for _, tt := range []struct {
		text     string
		want     []inclusion
		computed bool
	}{
		{"#include \"a.h\"\n  #  include <b/c.h>\nint x;\n", []inclusion{{"a.h", true}, {"b/c.h", false}}, false},
		{"#include_next <n.h>\n#import \"i.h\"\n", []inclusion{{"n.h", false}, {"i.h", true}}, false},
		// Inside #if 0 or a comment: followed all the same.
		{"#if 0\n#include \"dead.h\"\n#endif\n/*\n#include <c.h>\n*/", []inclusion{{"dead.h", true}, {"c.h", false}}, false},
		{"#include \\\n\"joined.h\"\n", []inclusion{{"joined.h", true}}, false},
		{"#if __has_include(<opt.h>) && __has_include_next( \"o2.h\")\n#endif\n", []inclusion{{"opt.h", false}, {"o2.h", true}}, false},
		{"#define H \"a.h\"\n#include H\n", nil, true},
		{"#define HAS(x) __has_include(x)\n", nil, true},
		{"#includes_nothing \"x\"\n#pragma once\n", nil, false},
		{"#include", nil, true},
	} {
		got, computed := directives([]byte(tt.text))
		if !slices.Equal(got, tt.want) || computed != tt.computed {
			t.Errorf("directives(%q) = %v, %v; want %v, %v", tt.text, got, computed, tt.want, tt.computed)
		}
	}
}

func TestIncludeDirsOf(t *testing.T) {
	dirs, pre, ok := includeDirsOf([]string{"-I/a", "-I", "/b", "--include-path=/c", "--include-path", "/d", "-isystem/e", "-std=c++17", "-include", "p.h", "--pre-include=q.h", "-arch=sm_80"})
	if !ok || !slices.Equal(dirs, []string{"/a", "/b", "/c", "/d", "/e"}) || !slices.Equal(pre, []string{"p.h", "q.h"}) {
		t.Errorf("includeDirsOf = %q, %q, %v", dirs, pre, ok)
	}
	for _, opt := range []string{"-MD", "-MF", "--dependency-output=x.d", "-M", "--generate-dependencies", "--create-pch=x.pch", "-pch", "--use-pch=x", "--pch-dir=d", "-fdevice-time-trace=t.json", "--time=t.csv"} {
		if _, _, ok := includeDirsOf([]string{opt}); ok {
			t.Errorf("%s: cacheable; it reads or writes a file the cache does not see", opt)
		}
	}
	for _, opt := range []string{"-default-device", "--use_fast_math", "-dlto", "-DMAX=3", "-lineinfo", "--maxrregcount=32"} {
		if _, _, ok := includeDirsOf([]string{opt}); !ok {
			t.Errorf("%s: uncacheable", opt)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1000": 1000, "64KiB": 64 << 10, "256MiB": 256 << 20, "2GiB": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1MB", "lots", "99999999999GiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// TestEntryDetectsEveryByteChanged: no change of one byte, or cut of the
// end, decodes.
func TestEntryDetectsEveryByteChanged(t *testing.T) {
	key := [32]byte{1, 2, 3}
	for _, res := range []*Result{
		{PTX: []byte(".entry k()"), CUBIN: []byte("\x7fELF..."), Log: "warning", LoweredNames: map[string]string{"k<int>": "_Z1kIiEvv"}},
		{LTOIR: []byte{0, 1, 2}, PTX: []byte{}},
		{},
	} {
		b := encodeEntry(res, key)
		got, err := decodeEntry(b, key)
		if err != nil || !reflect.DeepEqual(got, res) {
			t.Fatalf("round trip of %+v: %+v, %v", res, got, err)
		}
		if _, err := decodeEntry(b, [32]byte{9}); err == nil {
			t.Error("the entry decodes for another key")
		}
		for i := range b {
			c := slices.Clone(b)
			c[i] ^= 0x20
			if got, err := decodeEntry(c, key); err == nil {
				t.Errorf("byte %d changed: decodes, to %+v", i, got)
			}
		}
		for n := range len(b) {
			if _, err := decodeEntry(b[:n], key); err == nil {
				t.Errorf("cut to %d of %d bytes: decodes", n, len(b))
			}
		}
	}
}

// TestDependenciesCandidates: every place a name could come from is a
// dependency, found or not, and the files found are followed.
func TestDependenciesCandidates(t *testing.T) {
	prog, inc1, inc2 := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(inc2, "a.h"), "#include \"sub/b.h\"\n")
	write(filepath.Join(inc2, "sub", "b.h"), "#include <c.h>\n")
	write(filepath.Join(inc1, "unrelated.h"), "")
	sp := &searchPath{headers: map[string][]string{"mem.h": {"#include \"a.h\"\n"}}, programDir: prog, dirs: []string{inc1, inc2}}
	deps, err := dependencies("#include \"mem.h\"\n", sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found, absent []string
	for _, d := range deps {
		if d.found {
			found = append(found, d.path)
		} else {
			absent = append(absent, d.path)
		}
	}
	wantFound := []string{filepath.Join(inc2, "a.h"), filepath.Join(inc2, "sub", "b.h")}
	wantAbsent := []string{
		filepath.Join(prog, "a.h"), filepath.Join(prog, "mem.h"),
		// "sub/b.h" from a.h, which the program included: beside
		// a.h, and beside the program too.
		filepath.Join(prog, "sub", "b.h"),
		filepath.Join(inc1, "a.h"), filepath.Join(inc1, "c.h"), filepath.Join(inc1, "mem.h"), filepath.Join(inc1, "sub", "b.h"),
		filepath.Join(inc2, "c.h"), filepath.Join(inc2, "mem.h"),
	}
	slices.Sort(found)
	slices.Sort(absent)
	slices.Sort(wantAbsent)
	if !slices.Equal(found, wantFound) || !slices.Equal(absent, wantAbsent) {
		t.Errorf("found %q\nwant  %q\nabsent %q\nwant   %q", found, wantFound, absent, wantAbsent)
	}

	write(filepath.Join(inc1, "m.h"), "#define X <x.h>\n#include X\n")
	if _, err := dependencies("#include <m.h>\n", sp, nil); !errors.Is(err, errUncacheable) {
		t.Errorf("a computed #include: %v, want errUncacheable", err)
	}
}
