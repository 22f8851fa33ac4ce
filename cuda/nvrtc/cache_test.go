//go:build linux && (amd64 || arm64)

package nvrtc_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	raw "github.com/gocuda/gocuda/generated/nvrtc"
)

// statsDelta runs f and returns how the cache's counters moved.
func statsDelta(f func()) nvrtc.CacheStats {
	a := nvrtc.Stats()
	f()
	b := nvrtc.Stats()
	return nvrtc.CacheStats{
		Hits: b.Hits - a.Hits, Misses: b.Misses - a.Misses, Stores: b.Stores - a.Stores,
		Corrupt: b.Corrupt - a.Corrupt, Evictions: b.Evictions - a.Evictions,
		Uncached: b.Uncached - a.Uncached, Errors: b.Errors - a.Errors, LastError: b.LastError,
	}
}

// entries lists the cache entries of dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.nvrtc"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustCompile(t *testing.T, src string, opts ...nvrtc.Option) *nvrtc.Result {
	t.Helper()
	res, err := nvrtc.Compile(src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCacheHitReturnsWhatTheCompileMade(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	src := `
#include "scale.h"
template <typename T> __global__ void scale(T *x, T k, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = times(x[i], k);
}
__global__ void unused_warning() { int unused; }
`
	opts := []nvrtc.Option{nvrtc.WithCacheDir(dir), nvrtc.WithArch("sm_80"),
		nvrtc.WithHeader("scale.h", "template <typename T> __device__ T times(T a, T b) { return a * b; }\n"),
		nvrtc.WithNameExpressions("scale<float>", "scale<int>")}
	var first, second *nvrtc.Result
	d := statsDelta(func() { first = mustCompile(t, src, opts...) })
	if d.Misses != 1 || d.Stores != 1 || d.Hits != 0 {
		t.Fatalf("first compile: %+v, want a miss and a store", d)
	}
	if n := len(entries(t, dir)); n != 1 {
		t.Fatalf("%d entries after one compile", n)
	}
	d = statsDelta(func() { second = mustCompile(t, src, opts...) })
	if d.Hits != 1 || d.Misses != 0 || d.Stores != 0 {
		t.Fatalf("second compile: %+v, want a hit", d)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the hit differs from the compile:\n%+v\n%+v", first, second)
	}
	uncached := mustCompile(t, src, append(opts, nvrtc.WithoutCache())...)
	if !bytes.Equal(uncached.CUBIN, second.CUBIN) || !bytes.Equal(uncached.PTX, second.PTX) || !reflect.DeepEqual(uncached.LoweredNames, second.LoweredNames) {
		t.Error("the hit differs from an uncached compile")
	}
	if len(second.CUBIN) == 0 || len(second.LoweredNames) != 2 || second.Log == "" {
		t.Errorf("the cached result lacks a part: CUBIN %d bytes, names %v, log %q", len(second.CUBIN), second.LoweredNames, second.Log)
	}
	// The caller owns what it gets: changing it changes no later hit.
	second.PTX[0] ^= 0xff
	if third := mustCompile(t, src, opts...); !bytes.Equal(third.PTX, first.PTX) {
		t.Error("a caller's change of a hit's PTX reached the cache")
	}
}

const constKernel = `
#include "k.h"
extern "C" __global__ void kern(int *x) { *x = K; }
`

// TestCacheKey: a change of any part of what decides the result misses;
// a change of anything else hits.
func TestCacheKey(t *testing.T) {
	needLibrary(t)
	cache := t.TempDir()
	inc, shadow, progDir := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(inc, "k.h"), "#define K 12345\n")
	write(filepath.Join(inc, "unrelated.h"), "#define U 1\n")
	base := []nvrtc.Option{nvrtc.WithCacheDir(cache), nvrtc.WithIncludeDir(shadow), nvrtc.WithIncludeDir(inc)}
	compile := func(src string, extra ...nvrtc.Option) (*nvrtc.Result, nvrtc.CacheStats) {
		t.Helper()
		var res *nvrtc.Result
		d := statsDelta(func() { res = mustCompile(t, src, append(cloneOpts(base), extra...)...) })
		if d.Errors != 0 || d.Uncached != 0 {
			t.Fatalf("cache: %+v", d)
		}
		return res, d
	}
	if _, d := compile(constKernel); d.Misses != 1 {
		t.Fatalf("first compile: %+v", d)
	}
	if _, d := compile(constKernel); d.Hits != 1 {
		t.Fatalf("same compile again: %+v, want a hit", d)
	}

	for _, tt := range []struct {
		what  string
		src   string
		extra []nvrtc.Option
	}{
		{"another source", constKernel + "\n", nil},
		{"an option", constKernel, []nvrtc.Option{nvrtc.WithOptions("-DEXTRA=1")}},
		{"an architecture", constKernel, []nvrtc.Option{nvrtc.WithArch("compute_80")}},
		{"another architecture", constKernel, []nvrtc.Option{nvrtc.WithOptions("-arch=compute_86")}},
		{"a real architecture", constKernel, []nvrtc.Option{nvrtc.WithOptions("--gpu-architecture=sm_80")}},
		{"another program name", constKernel, []nvrtc.Option{nvrtc.WithProgramName("other.cu")}},
		{"an in-memory header", constKernel, []nvrtc.Option{nvrtc.WithHeader("extra.h", "")}},
		{"a name expression", constKernel, []nvrtc.Option{nvrtc.WithNameExpressions("kern")}},
		{"LTO-IR", constKernel, []nvrtc.Option{nvrtc.WithLTO()}},
	} {
		if _, d := compile(tt.src, tt.extra...); d.Misses != 1 || d.Hits != 0 {
			t.Errorf("%s: %+v, want a miss", tt.what, d)
		}
		if _, d := compile(tt.src, tt.extra...); d.Hits != 1 {
			t.Errorf("%s again: %+v, want a hit", tt.what, d)
		}
	}

	// The content of an in-memory header.
	memSrc := "#include \"m.h\"\nextern \"C\" __global__ void kern(int *x) { *x = M; }\n"
	compile(memSrc, nvrtc.WithHeader("m.h", "#define M 11111\n"))
	if res, d := compile(memSrc, nvrtc.WithHeader("m.h", "#define M 22222\n")); d.Misses != 1 || !bytes.Contains(res.PTX, []byte("22222")) {
		t.Errorf("in-memory header changed: %+v, want a miss compiling the new one", d)
	}

	// A file of an include directory that is not included: still a hit.
	write(filepath.Join(inc, "unrelated.h"), "#define U 2\n")
	if _, d := compile(constKernel); d.Hits != 1 {
		t.Errorf("an unrelated file changed: %+v, want a hit", d)
	}
	// The included file, its size and modification time kept.
	st, err := os.Stat(filepath.Join(inc, "k.h"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(inc, "k.h"), "#define K 54321\n")
	if err := os.Chtimes(filepath.Join(inc, "k.h"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if res, d := compile(constKernel); d.Misses != 1 || !bytes.Contains(res.PTX, []byte("54321")) {
		t.Errorf("included file changed: %+v, want a miss compiling the new one", d)
	}
	// A file of the same name, earlier on the search path.
	write(filepath.Join(shadow, "k.h"), "#define K 77777\n")
	if res, d := compile(constKernel); d.Misses != 1 || !bytes.Contains(res.PTX, []byte("77777")) {
		t.Errorf("a file shadowing the included one: %+v, want a miss compiling the new one", d)
	}

	// A quoted name found beside the program's name.
	prog := filepath.Join(progDir, "prog.cu")
	src := "#include \"local.h\"\nextern \"C\" __global__ void kern(int *x) { *x = L; }\n"
	write(filepath.Join(progDir, "local.h"), "#define L 31313\n")
	compile(src, nvrtc.WithProgramName(prog))
	write(filepath.Join(progDir, "local.h"), "#define L 42424\n")
	if res, d := compile(src, nvrtc.WithProgramName(prog)); d.Misses != 1 || !bytes.Contains(res.PTX, []byte("42424")) {
		t.Errorf("file beside the program changed: %+v, want a miss compiling the new one", d)
	}
}

func cloneOpts(o []nvrtc.Option) []nvrtc.Option { return append([]nvrtc.Option(nil), o...) }

// TestCacheComputedIncludeIsNotCached: a name given through a macro
// cannot be followed, so the compile is not cached.
func TestCacheComputedIncludeIsNotCached(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	src := "#define H \"m.h\"\n#include H\nextern \"C\" __global__ void kern(int *x) { *x = M; }\n"
	opts := []nvrtc.Option{nvrtc.WithCacheDir(dir), nvrtc.WithHeader("m.h", "#define M 1\n")}
	for range 2 {
		if d := statsDelta(func() { mustCompile(t, src, opts...) }); d.Uncached != 1 || d.Hits+d.Misses+d.Stores != 0 {
			t.Errorf("computed #include: %+v, want it uncached", d)
		}
	}
	if n := len(entries(t, dir)); n != 0 {
		t.Errorf("%d entries of an uncached compile", n)
	}
}

func TestCacheCorruptEntryIsReplaced(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	opts := []nvrtc.Option{nvrtc.WithCacheDir(dir), nvrtc.WithArch("sm_80")}
	good := mustCompile(t, vadd, opts...)
	es := entries(t, dir)
	if len(es) != 1 {
		t.Fatalf("%d entries", len(es))
	}
	intact, err := os.ReadFile(es[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, corrupt := range map[string]func([]byte) []byte{
		"last byte flipped":     func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"a CUBIN byte flipped":  func(b []byte) []byte { b[len(b)/2] ^= 0x80; return b },
		"truncated":             func(b []byte) []byte { return b[:len(b)/2] },
		"cut inside the header": func(b []byte) []byte { return b[:20] },
		"empty":                 func(b []byte) []byte { return nil },
		"another layout":        func(b []byte) []byte { b[8]++; return b },
		"checksum changed":      func(b []byte) []byte { b[60] ^= 1; return b },
		"length grown":          func(b []byte) []byte { return append(b, 0) },
	} {
		if err := os.WriteFile(es[0], corrupt(bytes.Clone(intact)), 0o644); err != nil {
			t.Fatal(err)
		}
		var res *nvrtc.Result
		d := statsDelta(func() { res = mustCompile(t, vadd, opts...) })
		if d.Corrupt != 1 || d.Misses != 1 || d.Hits != 0 || d.Stores != 1 {
			t.Errorf("%s: %+v, want a corrupt entry recompiled and stored", name, d)
		}
		if !reflect.DeepEqual(res, good) {
			t.Errorf("%s: the result differs from the first compile's", name)
		}
		if b, err := os.ReadFile(es[0]); err != nil || !bytes.Equal(b, intact) {
			t.Errorf("%s: the entry was not replaced by a good one (%v)", name, err)
		}
		if d := statsDelta(func() { mustCompile(t, vadd, opts...) }); d.Hits != 1 {
			t.Errorf("%s, replaced: %+v, want a hit", name, d)
		}
	}
}

// kernelN is a distinct kernel for each n, of one size.
func kernelN(n int) string {
	return fmt.Sprintf("extern \"C\" __global__ void k(int *x) { *x = %06d; }\n", 100000+n)
}

func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	needLibrary(t)
	// The size of each entry, learnt in a directory of its own.
	sizes := map[int]int64{}
	for i := range 4 {
		scratch := t.TempDir()
		mustCompile(t, kernelN(i), nvrtc.WithCacheDir(scratch))
		es := entries(t, scratch)
		if len(es) != 1 {
			t.Fatalf("%d entries", len(es))
		}
		st, err := os.Stat(es[0])
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = st.Size()
	}
	// Room for 0, 2 and 3, not for 1 as well.
	limit := sizes[0] + sizes[1] + sizes[2] + sizes[3] - 1
	dir := t.TempDir()
	opts := func(i int) (string, nvrtc.Option, nvrtc.Option) {
		return kernelN(i), nvrtc.WithCacheDir(dir), nvrtc.WithCacheLimit(limit)
	}
	byKernel := map[int]string{}
	for i := range 3 {
		src, o1, o2 := opts(i)
		before := entries(t, dir)
		mustCompile(t, src, o1, o2)
		for _, e := range entries(t, dir) {
			if !contains(before, e) {
				byKernel[i] = e
			}
		}
		// Oldest first: 0, then 1, then 2.
		past := time.Now().Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(byKernel[i], past, past); err != nil {
			t.Fatal(err)
		}
	}
	// A hit on 0 makes it the most recently used.
	src, o1, o2 := opts(0)
	if d := statsDelta(func() { mustCompile(t, src, o1, o2) }); d.Hits != 1 {
		t.Fatalf("kernel 0 again: %+v", d)
	}
	src, o1, o2 = opts(3)
	if d := statsDelta(func() { mustCompile(t, src, o1, o2) }); d.Evictions != 1 || d.Stores != 1 {
		t.Errorf("kernel 3 over the limit: %+v, want one eviction", d)
	}
	if _, err := os.Stat(byKernel[1]); !os.IsNotExist(err) {
		t.Errorf("the least recently used entry (kernel 1) is still there: %v", err)
	}
	var total int64
	for _, e := range entries(t, dir) {
		st, err := os.Stat(e)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total > limit || len(entries(t, dir)) != 3 {
		t.Errorf("%d entries of %d bytes in all, limit %d", len(entries(t, dir)), total, limit)
	}
	for _, i := range []int{0, 2, 3} {
		src, o1, o2 := opts(i)
		if d := statsDelta(func() { mustCompile(t, src, o1, o2) }); d.Hits != 1 {
			t.Errorf("kernel %d: %+v, want a hit", i, d)
		}
	}
	// An entry larger than the whole bound is not stored.
	small := t.TempDir()
	if d := statsDelta(func() { mustCompile(t, kernelN(9), nvrtc.WithCacheDir(small), nvrtc.WithCacheLimit(100)) }); d.Stores != 0 || len(entries(t, small)) != 0 {
		t.Errorf("entry over the limit: %+v", d)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestCacheOff(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	d := statsDelta(func() { mustCompile(t, vadd, nvrtc.WithCacheDir(dir), nvrtc.WithoutCache()) })
	if d.Hits+d.Misses+d.Stores != 0 || len(entries(t, dir)) != 0 {
		t.Errorf("WithoutCache: %+v, %d entries", d, len(entries(t, dir)))
	}
	t.Setenv(nvrtc.CacheEnv, "off")
	d = statsDelta(func() { mustCompile(t, vadd, nvrtc.WithCacheDir(dir)) })
	if d.Hits+d.Misses+d.Stores != 0 || len(entries(t, dir)) != 0 {
		t.Errorf("%s=off: %+v, %d entries", nvrtc.CacheEnv, d, len(entries(t, dir)))
	}
	// The environment's directory, then the default one.
	t.Setenv(nvrtc.CacheEnv, dir)
	mustCompile(t, vadd)
	if len(entries(t, dir)) != 1 {
		t.Errorf("%s=%s: %d entries there", nvrtc.CacheEnv, dir, len(entries(t, dir)))
	}
	home := t.TempDir()
	t.Setenv(nvrtc.CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", home)
	mustCompile(t, vadd)
	if n := len(entries(t, filepath.Join(home, "gocuda", "nvrtc"))); n != 1 {
		t.Errorf("default directory: %d entries in $XDG_CACHE_HOME/gocuda/nvrtc", n)
	}
	// A limit from the environment: nothing fits in 10 bytes.
	t.Setenv(nvrtc.CacheLimitEnv, "10")
	if d := statsDelta(func() { mustCompile(t, vadd+"\n") }); d.Stores != 0 {
		t.Errorf("%s=10: %+v, want no store", nvrtc.CacheLimitEnv, d)
	}
	t.Setenv(nvrtc.CacheLimitEnv, "lots")
	if d := statsDelta(func() { mustCompile(t, vadd) }); d.Errors != 1 || d.LastError == nil || !strings.Contains(d.LastError.Error(), nvrtc.CacheLimitEnv) {
		t.Errorf("%s=lots: %+v, want the compile done and the error kept", nvrtc.CacheLimitEnv, d)
	}
}

// TestCacheUnwritableDirectory: the compile succeeds; Stats has the error.
func TestCacheUnwritableDirectory(t *testing.T) {
	needLibrary(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "cache")
	var res *nvrtc.Result
	var err error
	d := statsDelta(func() { res, err = nvrtc.Compile(vadd, nvrtc.WithCacheDir(dir)) })
	if err != nil || len(res.PTX) == 0 {
		t.Fatalf("Compile with an unusable cache: %v", err)
	}
	if d.Errors != 1 || d.Misses != 1 || d.LastError == nil || !strings.Contains(d.LastError.Error(), file) {
		t.Errorf("Stats: %+v, want the error naming %s", d, file)
	}
}

// TestCacheProcesses compiles, in several processes at once, one kernel
// they share and one of each, into one cache: first unbounded, then
// bounded so that they evict one another's entries meanwhile.
func TestCacheProcesses(t *testing.T) {
	needLibrary(t)
	procs := 6
	if testing.Short() {
		procs = 3
	}
	for _, limit := range []string{"", "12KiB"} {
		dir := t.TempDir()
		var wg sync.WaitGroup
		outs := make([][]byte, procs)
		errs := make([]error, procs)
		for i := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChild$", "-test.v")
				cmd.Env = append(os.Environ(), "GOCUDA_NVRTC_CHILD=cache", nvrtc.CacheEnv+"="+dir,
					nvrtc.CacheLimitEnv+"="+limit, "CACHE_CHILD_ID="+strconv.Itoa(i))
				outs[i], errs[i] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		for i := range procs {
			if errs[i] != nil || !bytes.Contains(outs[i], []byte("--- PASS: TestCacheChild")) {
				t.Errorf("limit %q: child %d: %v\n%s", limit, i, errs[i], outs[i])
			}
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
		if len(left) != 0 {
			t.Errorf("limit %q: temporary files left: %q", limit, left)
		}
		var total int64
		for _, e := range entries(t, dir) {
			if st, err := os.Stat(e); err == nil {
				total += st.Size()
			}
		}
		if n, _ := strconv.Atoi(strings.TrimSuffix(limit, "KiB")); limit != "" && total > int64(n)<<10 {
			t.Errorf("limit %q: %d bytes left", limit, total)
		}
		d := statsDelta(func() { mustCompile(t, kernelN(1000), nvrtc.WithArch("sm_80"), nvrtc.WithCacheDir(dir)) })
		if limit == "" && d.Hits != 1 {
			t.Errorf("the shared kernel after the children: %+v, want a hit", d)
		}
		if d.Corrupt != 0 {
			t.Errorf("limit %q: a corrupt entry: %+v", limit, d)
		}
		for i := range procs {
			if j := bytes.Index(outs[i], []byte("stats {")); j >= 0 {
				t.Logf("limit %q: child %d: %s", limit, i, bytes.TrimSpace(outs[i][j:j+bytes.IndexByte(outs[i][j:], 10)]))
			}
		}
		t.Logf("limit %q: %d entries, %d bytes", limit, len(entries(t, dir)), total)
	}
}

// TestCacheChild is one process of TestCacheProcesses.
func TestCacheChild(t *testing.T) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") != "cache" {
		t.Skip("run by TestCacheProcesses")
	}
	id, err := strconv.Atoi(os.Getenv("CACHE_CHILD_ID"))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 4 {
		for _, n := range []int{1000, id, 2000 + (id+round)%3} {
			res := mustCompile(t, kernelN(n), nvrtc.WithArch("sm_80"))
			want := fmt.Sprintf("%d", 100000+n)
			if !bytes.Contains(res.PTX, []byte(want)) || !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) {
				t.Fatalf("kernel %d: PTX without %s or no CUBIN", n, want)
			}
			if round == 0 {
				ref := mustCompile(t, kernelN(n), nvrtc.WithArch("sm_80"), nvrtc.WithoutCache())
				if !bytes.Equal(ref.PTX, res.PTX) || !bytes.Equal(ref.CUBIN, res.CUBIN) {
					t.Fatalf("kernel %d: the cache's result differs from a compile's", n)
				}
			}
		}
	}
	s := nvrtc.Stats()
	t.Logf("stats %+v", s)
	if s.Corrupt != 0 || s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
	if s.Hits == 0 && os.Getenv(nvrtc.CacheLimitEnv) == "" {
		t.Errorf("no hits in %d compiles", s.Misses)
	}
}

func BenchmarkCompileCacheHit(b *testing.B) {
	if err := raw.Load(); err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	opts := []nvrtc.Option{nvrtc.WithArch("sm_80"), nvrtc.WithCacheDir(dir)}
	if _, err := nvrtc.Compile(vadd, opts...); err != nil {
		b.Fatal(err)
	}
	before := nvrtc.Stats().Hits
	b.ResetTimer()
	for b.Loop() {
		if _, err := nvrtc.Compile(vadd, opts...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if hits := nvrtc.Stats().Hits - before; hits != uint64(b.N) {
		b.Fatalf("%d hits in %d compiles", hits, b.N)
	}
}

func BenchmarkCompileCold(b *testing.B) {
	if err := raw.Load(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := nvrtc.Compile(vadd, nvrtc.WithArch("sm_80"), nvrtc.WithoutCache()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileCacheHitToolkitHeaders: a hit that depends on the
// toolkit's cuda_fp16.h, whose files it stats.
func BenchmarkCompileCacheHitToolkitHeaders(b *testing.B) {
	if err := raw.Load(); err != nil {
		b.Skip(err)
	}
	if _, err := nvrtc.ToolkitIncludeDirs(); err != nil {
		b.Skip(err)
	}
	opts := []nvrtc.Option{nvrtc.WithArch("sm_80"), nvrtc.WithToolkitHeaders(), nvrtc.WithCacheDir(b.TempDir())}
	if _, err := nvrtc.Compile(halfToFloat, opts...); err != nil {
		b.Fatal(err)
	}
	before := nvrtc.Stats()
	for b.Loop() {
		if _, err := nvrtc.Compile(halfToFloat, opts...); err != nil {
			b.Fatal(err)
		}
	}
	if after := nvrtc.Stats(); after.Hits-before.Hits != uint64(b.N) {
		b.Fatalf("%d hits in %d compiles: %+v", after.Hits-before.Hits, b.N, after)
	}
}

// TestLoadModuleFromCache loads, where a GPU is, the PTX and the CUBIN a
// cache hit returns.
func TestLoadModuleFromCache(t *testing.T) {
	ctx, arch := gpuContext(t)
	defer ctx.Close()
	dir := t.TempDir()
	for _, target := range []string{"compute_" + strings.TrimPrefix(arch, "sm_"), arch} {
		opts := []nvrtc.Option{nvrtc.WithArch(target), nvrtc.WithCacheDir(dir)}
		if _, err := nvrtc.Compile(vadd, opts...); err != nil {
			if target == arch {
				t.Skipf("this NVRTC does not compile for %s: %v", arch, err)
			}
			t.Fatal(err)
		}
		var res *nvrtc.Result
		if d := statsDelta(func() { res = mustCompile(t, vadd, opts...) }); d.Hits != 1 {
			t.Fatalf("%s again: %+v, want a hit", target, d)
		}
		image := res.PTX
		if target == arch {
			image = res.CUBIN
		}
		mod, err := cuda.LoadModule(ctx, image)
		if err != nil {
			t.Fatalf("%s: loading the cached image: %v", target, err)
		}
		if _, err := mod.Function("vadd"); err != nil {
			t.Error(err)
		}
		mod.Close()
	}
}
