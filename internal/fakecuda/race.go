package fakecuda

/*
#include <stddef.h>
#include <stdint.h>

#include "csrc/abi.h"

static int fk_int(void *fn) { return ((int (*)(void))fn)(); }
static long fk_long(void *fn) { return ((long (*)(void))fn)(); }
static int fk_race_get(void *fn, long i, struct fakecuda_race *out) { return ((int (*)(long, struct fakecuda_race *))fn)(i, out); }
static int fk_quiesce(void *fn, long ms) { return ((int (*)(long))fn)(ms); }
static void fk_host_access(void *fn, uint64_t p, size_t n, int w) { ((void (*)(unsigned long long, size_t, int))fn)(p, n, w); }
static int fk_seed(void *fn, unsigned long long *s) { return ((int (*)(unsigned long long *))fn)(s); }
static int fk_observe(void *fn, uintptr_t hostfn, uintptr_t arg) { return ((int (*)(void *, void *))fn)((void *)hostfn, (void *)arg); }
static void fk_void(void *fn) { ((void (*)(void))fn)(); }
*/
import "C"

import (
	"runtime"
	"time"
	"unsafe"
)

// The environment variables the library reads when it is loaded, so that
// a child process started with them inherits the setting.
const (
	// RaceEnv turns the race detector on when it is set to anything but
	// "" or "0".
	RaceEnv = "FAKECUDA_RACE"
	// SeedEnv seeds the scheduler of stream workers (a decimal or 0x
	// number).
	SeedEnv = "FAKECUDA_SEED"
)

// Race is a data race the detector found: two accesses to the same bytes,
// at least one a write, that happens-before does not order. Access is the
// one that found it (it ran second), Previous the one it met.
type Race struct {
	Access, Previous RaceAccess
}

// RaceAccess is one side of a race.
type RaceAccess struct {
	// Seq numbers operations in the order they were queued, process-wide.
	Seq uint64
	// Op is "memset", "copy", "kernel", "host access" (a host access of
	// page-locked or managed memory that a test reported) or "host
	// function" (one that reported its accesses: a fake library's work).
	Op string
	// CopyDir is a copy's direction: "HtoD", "DtoH", "DtoD" or "HtoH".
	CopyDir string
	// API is the driver function that queued the operation (cuMemsetD32Async),
	// "" for a host access.
	API   string
	Write bool
	// Stream is the id of the operation's stream (what cuStreamGetId
	// reports), 0 for the host; Legacy is set for a context's NULL stream.
	Stream uint64
	Legacy bool
	// GraphNode is the index of the operation's node in a launched graph,
	// -1 when it is not a graph's.
	GraphNode int
	// Addr and Size are the bytes both accesses touched.
	Addr uintptr
	Size uint64
	// The allocation they lie in: "device", "managed", "page-locked host"
	// (cuMemAllocHost, cuMemHostAlloc) or "registered host"
	// (cuMemHostRegister) memory.
	AllocBase uintptr
	AllocSize uint64
	AllocKind string
	// PCs is where the operation was queued: the return addresses of the
	// calls that led to it, innermost first, the fake's own C frames
	// included (runtime.CallersFrames skips nothing: filter by function).
	PCs []uintptr
}

// The names of a race access's allocation kinds and copy directions.
var (
	allocKinds = [4]string{C.AK_DEVICE: "device", C.AK_HOST: "page-locked host", C.AK_REGISTERED: "registered host", C.AK_MANAGED: "managed"}
	copyDirs   = [4]string{0: "HtoH", C.COPY_DST_DEVICE: "HtoD", C.COPY_SRC_DEVICE: "DtoH", C.COPY_SRC_DEVICE | C.COPY_DST_DEVICE: "DtoD"}
)

// need returns the entry point p of the library, and panics if it has
// none.
func need(p unsafe.Pointer, name string) unsafe.Pointer {
	if p == nil {
		panic("fakecuda: the library has no " + name)
	}
	return p
}

// raceEnabled calls fakecuda_race_enabled (for Lib.syms).
func raceEnabled(fn unsafe.Pointer) bool { return C.fk_int(fn) != 0 }

// RaceDetector reports whether the race detector is on (FAKECUDA_RACE).
func (l *Lib) RaceDetector() bool {
	s := l.syms()
	need(s.raceEnabled, "fakecuda_race_enabled")
	return s.race
}

// RaceCount returns the number of races found since the library was
// loaded. Each pair of operations is reported once.
func (l *Lib) RaceCount() int { return int(C.fk_long(need(l.syms().raceCount, "fakecuda_race_count"))) }

// Race returns race i (0 the first found); false for one past those kept
// (the first 256).
func (l *Lib) Race(i int) (Race, bool) {
	var out C.struct_fakecuda_race
	if C.fk_race_get(need(l.syms().raceGet, "fakecuda_race_get"), C.long(i), &out) != 0 {
		return Race{}, false
	}
	return Race{Access: l.access(&out.cur), Previous: l.access(&out.prev)}, true
}

func (l *Lib) access(a *C.struct_fakecuda_race_access) RaceAccess {
	r := RaceAccess{
		Seq:       uint64(a.seq),
		Write:     a.write != 0,
		Stream:    uint64(a.stream),
		Legacy:    a.legacy != 0,
		GraphNode: int(a.node),
		Addr:      uintptr(a.addr),
		Size:      uint64(a.bytes),
		AllocBase: uintptr(a.alloc_base),
		AllocSize: uint64(a.alloc_size),
	}
	switch a.kind {
	case C.OP_MEMSET:
		r.Op = "memset"
	case C.OP_COPY:
		r.Op = "copy"
		r.CopyDir = copyDirs[a.copy_dir&3]
	case C.RACE_HOST_ACCESS:
		r.Op = "host access"
	case C.OP_HOSTFN:
		r.Op = "host function"
	default:
		r.Op = "kernel"
	}
	r.API = l.functionName(int(a.api))
	r.AllocKind = allocKinds[a.alloc_kind&3]
	for i := range int(a.npcs) {
		r.PCs = append(r.PCs, uintptr(a.pcs[i]))
	}
	return r
}

// Quiesce waits, up to timeout, until every operation queued so far has
// completed, and reports whether they have. It orders nothing: the
// program's clocks are as they were. Races are found as operations run,
// so a check for races quiesces first. Without the detector it returns
// true at once.
func (l *Lib) Quiesce(timeout time.Duration) bool {
	return C.fk_quiesce(need(l.syms().raceQuiesce, "fakecuda_race_quiesce"), C.long(timeout.Milliseconds())) != 0
}

// HostAccess records that the host read (write false) or wrote the n
// bytes at p, page-locked or managed memory that Go code reaches without
// the driver: it races with device work the host has not synchronized
// with. Memory the driver does not know is ignored.
func (l *Lib) HostAccess(p uintptr, n int, write bool) {
	if n <= 0 {
		return
	}
	w := C.int(0)
	if write {
		w = 1
	}
	C.fk_host_access(need(l.syms().raceHostAccess, "fakecuda_race_host_access"), C.uint64_t(p), C.size_t(n), w)
}

// ObserveHostFunc runs body ordered after the completion of the host
// function fn(arg) that ran last (cuLaunchHostFunc's fn and userData): the
// host accesses body reports and the operations it queues, and nothing of
// other goroutines. The completion of a host function orders nothing by
// itself, since the host may never learn of it; this is for code that
// runs because it completed, as the Go function that cuda.Stream.Then
// delivers. body runs on the calling goroutine, locked to its thread. It
// reports whether such a completion was found: false for a host function
// that has not run, or without the detector, and body then runs
// unordered.
func (l *Lib) ObserveHostFunc(fn, arg uintptr, body func()) bool {
	s := l.syms()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	found := C.fk_observe(need(s.raceObserve, "fakecuda_race_observe_hostfn"), C.uintptr_t(fn), C.uintptr_t(arg)) != 0
	defer C.fk_void(need(s.raceObserveEnd, "fakecuda_race_observe_end"))
	body()
	return found
}

// Seed returns the scheduler's seed and whether it is seeded
// (FAKECUDA_SEED).
func (l *Lib) Seed() (uint64, bool) {
	var s C.ulonglong
	ok := C.fk_seed(need(l.syms().seed, "fakecuda_seed"), &s) != 0
	return uint64(s), ok
}
