// Command ncclbench measures, in one process driving every GPU (at least
// two) with the communicators of ncclCommInitAll, the bus bandwidth of an
// in-place float32 all-reduce from Go (cuda/nccl) and from C (a loop of
// ncclAllReduce compiled into this binary, on the same communicators,
// streams and buffers), interleaved size by size and round by round; then
// the bandwidth of peer copies between GPU 0 and GPU 1 from Go
// (cuda.CopySlicePeerAsync) and from C (cuMemcpyPeerAsync). It prints one
// RESULT line per measurement and a table:
//
//	RESULT nccl-allreduce impl=go bytes=8388608 busbw_gbs=... us=...
//
// busbw = bytes·2·(n−1)/n / time, NCCL's own definition (nccl-tests).
package main

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

typedef int (*allreduce_fn)(const void*, void*, size_t, int, int, uintptr_t, uintptr_t);
typedef int (*group_fn)(void);
typedef int (*sync_fn)(uintptr_t);
typedef int (*peer_fn)(uint64_t, uintptr_t, uint64_t, uintptr_t, size_t, uintptr_t);

// iters in-place all-reduces of every rank, one group each, as one C
// thread driving every GPU would; then every stream is waited for.
static int c_allreduce(uintptr_t ar, uintptr_t gs, uintptr_t ge, uintptr_t sync, int n,
		uint64_t *bufs, uintptr_t *comms, uintptr_t *streams, size_t count, int iters) {
	for (int i = 0; i < iters; i++) {
		int r = ((group_fn)gs)();
		if (r) return 1000 + r;
		for (int k = 0; k < n; k++) {
			// 7 is ncclFloat32, 0 ncclSum.
			r = ((allreduce_fn)ar)((const void*)(uintptr_t)bufs[k], (void*)(uintptr_t)bufs[k], count, 7, 0, comms[k], streams[k]);
			if (r) return 2000 + r;
		}
		r = ((group_fn)ge)();
		if (r) return 3000 + r;
	}
	for (int k = 0; k < n; k++) {
		int r = ((sync_fn)sync)(streams[k]);
		if (r) return 4000 + r;
	}
	return 0;
}

// iters peer copies of bytes on stream, then a wait.
static int c_peer(uintptr_t peer, uintptr_t sync, uint64_t dst, uintptr_t dctx, uint64_t src, uintptr_t sctx,
		size_t bytes, uintptr_t stream, int iters) {
	for (int i = 0; i < iters; i++) {
		int r = ((peer_fn)peer)(dst, dctx, src, sctx, bytes, stream);
		if (r) return 1000 + r;
	}
	return ((sync_fn)sync)(stream);
}
*/
import "C"

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nccl"
	"github.com/gocuda/gocuda/generated/cu"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
)

func main() {
	minMiB := flag.Int("min-mib", 8, "smallest all-reduce, MiB")
	maxMiB := flag.Int("max-mib", 1024, "largest all-reduce, MiB")
	rounds := flag.Int("rounds", 5, "rounds of every size and implementation, interleaved")
	iters := flag.Int("iters", 20, "all-reduces per measurement")
	peerMiB := flag.String("peer-mib", "8,64,256,1024", "peer copy sizes, MiB")
	flag.Parse()
	if err := run(*minMiB, *maxMiB, *rounds, *iters, *peerMiB); err != nil {
		fmt.Fprintln(os.Stderr, "ncclbench:", err)
		os.Exit(1)
	}
}

func proc(name string, get func(string) (uintptr, error)) C.uintptr_t {
	p, err := get(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ncclbench:", err)
		os.Exit(1)
	}
	return C.uintptr_t(p)
}

type key struct {
	impl  string
	bytes int
}

// series is one benchmark's measurements: its RESULT lines and, per
// implementation and size, the fastest time per iteration.
type series struct {
	name, metric string                 // RESULT <name> ... <metric>=GB/s
	moved        func(size int) float64 // the bytes an iteration of size bytes counts as moved
	iters        int
	best         map[key]time.Duration
}

// measure runs fn once untimed, so that the timed run finds everything
// warm, then times it, prints its RESULT line and keeps the best time.
func (s *series) measure(impl string, round, size int, fn func() error) error {
	if err := fn(); err != nil {
		return err
	}
	start := time.Now()
	if err := fn(); err != nil {
		return err
	}
	per := time.Since(start) / time.Duration(s.iters)
	fmt.Printf("RESULT %s impl=%s round=%d bytes=%d us=%.1f %s=%.2f\n", s.name, impl, round, size, float64(per.Nanoseconds())/1e3, s.metric, s.moved(size)/per.Seconds()/1e9)
	if b, ok := s.best[key{impl, size}]; !ok || per < b {
		s.best[key{impl, size}] = per
	}
	return nil
}

// gbs is the bandwidth of impl's best time at size, in GB/s.
func (s *series) gbs(impl string, size int) float64 {
	return s.moved(size) / s.best[key{impl, size}].Seconds() / 1e9
}

func run(minMiB, maxMiB, rounds, iters int, peerMiB string) error {
	v, err := nccl.Version()
	if errors.Is(err, rawnccl.ErrNoLibrary) {
		return fmt.Errorf("no NCCL (libnccl.so.2, or %s): %w", rawnccl.LibraryEnv, err)
	}
	if err != nil {
		return err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	if n < 2 {
		return fmt.Errorf("%d GPU: the benchmarks need two", n)
	}
	fmt.Printf("# NCCL %d, %d GPUs, one process, ncclCommInitAll\n", v, n)
	ctxs := make([]*cuda.Context, n)
	streams := make([]*cuda.Stream, n)
	for i := range n {
		d, err := cuda.GetDevice(i)
		if err != nil {
			return err
		}
		if ctxs[i], err = cuda.PrimaryContext(d); err != nil {
			return err
		}
		defer ctxs[i].Close()
		if streams[i], err = cuda.NewStream(ctxs[i]); err != nil {
			return err
		}
		defer streams[i].Close()
	}
	comms, err := nccl.InitAll(streams)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	maxElems := maxMiB << 20 / 4
	bufs := make([]*cuda.Slice[float32], n)
	for r := range n {
		if bufs[r], err = cuda.AllocSlice[float32](ctxs[r], maxElems); err != nil {
			return err
		}
		defer bufs[r].Close()
		if err := bufs[r].Fill(1); err != nil {
			return err
		}
	}

	ar := proc("ncclAllReduce", rawnccl.Proc)
	gs := proc("ncclGroupStart", rawnccl.Proc)
	ge := proc("ncclGroupEnd", rawnccl.Proc)
	sync := proc("cuStreamSynchronize", cu.Proc)
	peer := proc("cuMemcpyPeerAsync", cu.Proc)

	cBufs := (*[64]C.uint64_t)(C.malloc(C.size_t(64 * 8)))
	cComms := (*[64]C.uintptr_t)(C.malloc(C.size_t(64 * 8)))
	cStreams := (*[64]C.uintptr_t)(C.malloc(C.size_t(64 * 8)))
	defer C.free(unsafe.Pointer(cBufs))
	defer C.free(unsafe.Pointer(cComms))
	defer C.free(unsafe.Pointer(cStreams))
	for r := range n {
		cBufs[r] = C.uint64_t(bufs[r].Ptr())
		cStreams[r] = C.uintptr_t(comms[r].Stream().Raw())
		cComms[r] = C.uintptr_t(comms[r].Raw())
	}

	goAllReduce := func(count int) error {
		views := make([]*cuda.Slice[float32], n)
		for r := range n {
			var err error
			if views[r], err = bufs[r].Sub(0, count); err != nil {
				return err
			}
			defer views[r].Close()
		}
		for range iters {
			if err := nccl.Group(func() error {
				for r, c := range comms {
					if err := nccl.AllReduce(c, views[r], views[r], nccl.Sum); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for _, c := range comms {
			if err := c.Stream().Synchronize(); err != nil {
				return err
			}
		}
		return nil
	}
	cAllReduce := func(count int) error {
		if r := C.c_allreduce(ar, gs, ge, sync, C.int(n), &cBufs[0], &cComms[0], &cStreams[0], C.size_t(count), C.int(iters)); r != 0 {
			return fmt.Errorf("all-reduce from C: status %d", int(r))
		}
		return nil
	}

	allreduce := &series{name: "nccl-allreduce", metric: "busbw_gbs", iters: iters, best: map[key]time.Duration{},
		moved: func(size int) float64 { return float64(size) * 2 * float64(n-1) / float64(n) }}
	var sizes []int
	for size := minMiB << 20; size <= maxMiB<<20; size *= 2 {
		sizes = append(sizes, size)
	}
	impls := []struct {
		name string
		fn   func(int) error
	}{{"c", cAllReduce}, {"go", goAllReduce}}
	for round := range rounds {
		for _, size := range sizes {
			count := size / 4
			for k := range impls {
				im := impls[(k+round+len(sizes))%len(impls)] // alternate which goes first
				if err := allreduce.measure(im.name, round, size, func() error { return im.fn(count) }); err != nil {
					return err
				}
			}
		}
	}
	fmt.Printf("\n# all-reduce float32 in place, %d GPUs, best of %d rounds of %d\n", n, rounds, iters)
	fmt.Printf("%12s %14s %14s %8s\n", "bytes", "C busbw GB/s", "Go busbw GB/s", "Go/C")
	for _, size := range sizes {
		c, g := allreduce.gbs("c", size), allreduce.gbs("go", size)
		fmt.Printf("%12d %14.1f %14.1f %8.3f\n", size, c, g, g/c)
	}

	// Peer copies, GPU 1 → GPU 0 on GPU 0's stream, with peer access.
	if err := cuda.EnablePeers(ctxs[0], ctxs[1]); err != nil {
		return err
	}
	var psizes []int
	for _, f := range strings.Split(peerMiB, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || m <= 0 || m > maxMiB {
			return fmt.Errorf("-peer-mib %q: sizes from 1 to -max-mib", peerMiB)
		}
		psizes = append(psizes, m<<20)
	}
	peerCopy := &series{name: "peer-copy", metric: "gbs", iters: iters, best: map[key]time.Duration{},
		moved: func(size int) float64 { return float64(size) }}
	for round := range rounds {
		for _, size := range psizes {
			count := size / 4
			dst, err := bufs[0].Sub(0, count)
			if err != nil {
				return err
			}
			src, err := bufs[1].Sub(0, count)
			if err != nil {
				return err
			}
			s0 := streams[0]
			goPeer := func() error {
				for range iters {
					if err := cuda.CopySlicePeerAsync(s0, dst, src); err != nil {
						return err
					}
				}
				return s0.Synchronize()
			}
			cPeer := func() error {
				if r := C.c_peer(peer, sync, C.uint64_t(dst.Ptr()), C.uintptr_t(ctxs[0].Raw()), C.uint64_t(src.Ptr()), C.uintptr_t(ctxs[1].Raw()),
					C.size_t(size), C.uintptr_t(s0.Raw()), C.int(iters)); r != 0 {
					return fmt.Errorf("peer copy from C: status %d", int(r))
				}
				return nil
			}
			order := []string{"c", "go"}
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, impl := range order {
				fn := goPeer
				if impl == "c" {
					fn = cPeer
				}
				if err := peerCopy.measure(impl, round, size, fn); err != nil {
					return err
				}
			}
			dst.Close()
			src.Close()
		}
	}
	fmt.Printf("\n# peer copy GPU 1 → GPU 0 (cuMemcpyPeerAsync), best of %d rounds of %d\n", rounds, iters)
	fmt.Printf("%12s %10s %10s %8s\n", "bytes", "C GB/s", "Go GB/s", "Go/C")
	for _, size := range psizes {
		c, g := peerCopy.gbs("c", size), peerCopy.gbs("go", size)
		fmt.Printf("%12d %10.1f %10.1f %8.3f\n", size, c, g, g/c)
	}
	return nil
}
