package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// maxFuzzInput bounds the headers FuzzModel tries: big enough for every
// construct of cuda.h, small enough that the C front end answers quickly.
const maxFuzzInput = 64 << 10

// FuzzModel feeds the generator corrupted headers. Any outcome but a panic
// is fine: an error, or a model (which must then emit). cc's own panics
// are turned into errors by Parse; a panic here is one in our code.
//
//	go test -run '^$' -fuzz FuzzModel -fuzztime 60s ./gen
func FuzzModel(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.h")
	for _, p := range seeds {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
		for _, m := range mutations(src) {
			f.Add(m)
		}
	}
	for _, h := range hostileSeeds() {
		f.Add([]byte(h))
	}
	m, v := smallManifest()
	hw := packageHandwritten(f)
	parseExpansion = 1 << 16
	f.Cleanup(func() { parseExpansion = expansionLimit })
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			t.Skip("input too large")
		}
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		mod, err := Model(src)
		if err != nil {
			return
		}
		if _, err := Generate(m, v, v.SHA256, mod, nil, hw); err != nil {
			return
		}
	})
}

// mutations are corruptions a header really meets: cut short (a partial
// download), a byte flipped, a line lost, a block duplicated.
func mutations(src []byte) [][]byte {
	var out [][]byte
	for _, frac := range []int{4, 2} {
		out = append(out, src[:len(src)*(frac-1)/frac])
	}
	for _, at := range []int{len(src) / 3, len(src) / 2, 2 * len(src) / 3} {
		c := bytes.Clone(src)
		c[at] ^= 0x20
		out = append(out, c)
	}
	lines := bytes.Split(src, []byte("\n"))
	for _, drop := range []int{len(lines) / 2, len(lines) - 3} {
		if drop > 0 && drop < len(lines) {
			out = append(out, bytes.Join(append(append([][]byte{}, lines[:drop]...), lines[drop+1:]...), []byte("\n")))
		}
	}
	half := len(src) / 2
	out = append(out, append(bytes.Clone(src[:half]), src[half/2:]...))
	return out
}

// hostileSeeds are headers written to break the generator (badinput_test.go
// has one test for each), for the fuzzer to mutate further.
func hostileSeeds() []string {
	return []string{
		"#include \"cuda.h\"\n" + hostilePrelude,
		hostilePrelude + bomb(9, 8),
		hostilePrelude + bomb(6, 8) + "enum CUbomb { CU_BOMB = B6 };\n",
		hostilePrelude + "CUresult cuParams(int proc, int resultError, int CUresult, int _, int fn, int C, int unsafe, int missing);\n",
		hostilePrelude + "CUresult cuLoad(void);\nCUresult cuFoo(void);\nCUresult cu_Foo(void);\n",
		hostilePrelude + "typedef enum CUbig_enum { CU_BIG_A = 0x100000000, CU_ALL = 0xFFFFFFFFFFFFFFFFULL } CUbig;\n",
		hostilePrelude + "typedef struct __attribute__((aligned(64))) CUa_st { int a[15]; } CUa;\ntypedef struct { char c; CUa a; } CUouter;\nCUresult cuA(CUa a, CUouter *o);\n",
	}
}
