//go:build linux && (amd64 || arm64)

package nccl

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/internal/fakenccl"
)

// These tests need NCCL and GPUs; they skip saying why without them
// (GOCUDA_TEST_LIBS=required makes that a failure). Without a GPU they
// run on the fake driver's two devices and the fake NCCL (TestMain),
// whose ranks meet across processes too (TestTwoProcesses).

// runChild runs test name of this binary in a child process with env added.
func runChild(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

// needNCCL skips (or fails) without the library.
func needNCCL(t *testing.T) {
	t.Helper()
	if err := nccl.Load(); err != nil {
		libtest.Unavailable(t, "no NCCL: %v", err)
	}
	v, err := Version()
	must(t, err)
	fake := ""
	if fakenccl.Active() {
		fake = ", the fake of internal/fakenccl"
	}
	t.Logf("NCCL %d (bindings of nccl.h %d%s)", v, nccl.HeaderVersion(), fake)
}

// comms makes one communicator per GPU, at least min of them, with InitAll.
func comms(t *testing.T, min int) []*Comm {
	t.Helper()
	needNCCL(t)
	n, err := cuda.DeviceCount()
	if err != nil || n < min {
		// A machine's number of GPUs is not a missing library: even with
		// GOCUDA_TEST_LIBS=required, too few GPUs skip.
		t.Skipf("%d CUDA device(s) (%v): the test needs %d", n, err, min)
	}
	streams := make([]*cuda.Stream, n)
	for i := range streams {
		streams[i] = stream(t, i)
	}
	cs, err := InitAll(streams)
	must(t, err)
	t.Cleanup(func() {
		for _, c := range cs {
			must(t, c.Close())
		}
	})
	return cs
}

// onEach runs fn for every rank, one goroutine each, and waits.
func onEach(t *testing.T, cs []*Comm, fn func(c *Comm) error) {
	t.Helper()
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(c)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", i, err)
		}
	}
}

func toT[T Element](f float64) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(f)).(T)
	case float64:
		return any(f).(T)
	case cuda.Float16:
		return any(cuda.ToFloat16(float32(f))).(T)
	case cuda.BFloat16:
		return any(cuda.ToBFloat16(float32(f))).(T)
	case int32:
		return any(int32(f)).(T)
	case int64:
		return any(int64(f)).(T)
	case uint8:
		return any(uint8(f)).(T)
	}
	panic(fmt.Sprintf("no conversion to %T", z))
}

func fromT[T Element](v T) float64 {
	switch x := any(v).(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	case cuda.Float16:
		return float64(x.Float32())
	case cuda.BFloat16:
		return float64(x.Float32())
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint8:
		return float64(x)
	}
	panic(fmt.Sprintf("no conversion from %T", v))
}

// value is element j of rank r's data: small integers, exact in every
// type, whose sums, products and halves are exact too.
func value(r, j int) float64 { return float64((r+j)%4 + 1) }

func upload[T Element](t *testing.T, c *Comm, host []T) *cuda.Slice[T] {
	t.Helper()
	s, err := cuda.AllocSliceFrom(c.Stream().Context(), host)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func download[T Element](t *testing.T, c *Comm, s *cuda.Slice[T]) []float64 {
	t.Helper()
	must(t, c.Stream().Synchronize())
	host := make([]T, s.Len())
	must(t, s.CopyTo(host))
	out := make([]float64, len(host))
	for i, v := range host {
		out[i] = fromT(v)
	}
	return out
}

func reduceWant(op Op, vals []float64) float64 {
	acc := vals[0]
	for _, v := range vals[1:] {
		switch op {
		case Sum, Avg:
			acc += v
		case Prod:
			acc *= v
		case Max:
			acc = math.Max(acc, v)
		case Min:
			acc = math.Min(acc, v)
		}
	}
	if op == Avg {
		acc /= float64(len(vals))
	}
	return acc
}

// allReduceCase all-reduces n elements of T with op across cs, out of place
// and in place, one goroutine per GPU, and checks every element on every
// rank.
func allReduceCase[T Element](t *testing.T, cs []*Comm, op Op) {
	const n = 1000
	sends := make([]*cuda.Slice[T], len(cs))
	recvs := make([]*cuda.Slice[T], len(cs))
	for r, c := range cs {
		host := make([]T, n)
		for j := range host {
			host[j] = toT[T](value(r, j))
		}
		sends[r] = upload(t, c, host)
		recvs[r] = upload(t, c, make([]T, n))
	}
	for _, inPlace := range []bool{false, true} {
		onEach(t, cs, func(c *Comm) error {
			r := c.Rank()
			if inPlace {
				return AllReduce(c, sends[r], sends[r], op)
			}
			return AllReduce(c, sends[r], recvs[r], op)
		})
		for r, c := range cs {
			got := recvs[r]
			if inPlace {
				got = sends[r]
			}
			vals := download(t, c, got)
			for j, g := range vals {
				in := make([]float64, len(cs))
				for q := range in {
					in[q] = value(q, j)
				}
				if want := reduceWant(op, in); g != want {
					t.Fatalf("%T %v (in place %v): rank %d element %d is %v, want %v", *new(T), op, inPlace, r, j, g, want)
				}
			}
		}
	}
}

// TestAllReduceEveryOpAndType checks AllReduce on data across every GPU of
// the machine (at least two) for each reduction and float type (the FP8
// types: TestAllReduceFP8, on two ranks).
func TestAllReduceEveryOpAndType(t *testing.T) {
	cs := comms(t, 2)
	for _, op := range []Op{Sum, Prod, Max, Min, Avg} {
		t.Run(op.String(), func(t *testing.T) {
			allReduceCase[float32](t, cs, op)
			allReduceCase[float64](t, cs, op)
			allReduceCase[cuda.Float16](t, cs, op)
			allReduceCase[cuda.BFloat16](t, cs, op)
			if op != Avg {
				allReduceCase[int32](t, cs, op)
				allReduceCase[int64](t, cs, op)
			}
		})
	}
}

// TestCollectivesOnData: all-gather, reduce-scatter, broadcast, reduce and
// send/receive in a ring (in a Group), checked on data.
func TestCollectivesOnData(t *testing.T) {
	cs := comms(t, 2)
	nr := len(cs)
	const n = 257
	in := make([]*cuda.Slice[float32], nr)
	for r, c := range cs {
		host := make([]float32, n*nr)
		for j := range host {
			host[j] = float32(value(r, j))
		}
		in[r] = upload(t, c, host)
	}
	part := func(r int) *cuda.Slice[float32] {
		s, err := in[r].Sub(0, n)
		must(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	out := make([]*cuda.Slice[float32], nr)
	for r, c := range cs {
		out[r] = upload(t, c, make([]float32, n*nr))
	}

	t.Run("AllGather", func(t *testing.T) {
		onEach(t, cs, func(c *Comm) error { return AllGather(c, part(c.Rank()), out[c.Rank()]) })
		for r, c := range cs {
			got := download(t, c, out[r])
			for q := 0; q < nr; q++ {
				for j := 0; j < n; j++ {
					if want := value(q, j); got[q*n+j] != want {
						t.Fatalf("rank %d: element %d of rank %d's part is %v, want %v", r, j, q, got[q*n+j], want)
					}
				}
			}
		}
	})
	t.Run("ReduceScatter", func(t *testing.T) {
		recv := make([]*cuda.Slice[float32], nr)
		for r, c := range cs {
			recv[r] = upload(t, c, make([]float32, n))
		}
		onEach(t, cs, func(c *Comm) error { return ReduceScatter(c, in[c.Rank()], recv[c.Rank()], Sum) })
		for r, c := range cs {
			got := download(t, c, recv[r])
			for j := range got {
				want := 0.0
				for q := 0; q < nr; q++ {
					want += value(q, r*n+j)
				}
				if got[j] != want {
					t.Fatalf("rank %d element %d is %v, want %v", r, j, got[j], want)
				}
			}
		}
	})
	t.Run("Broadcast", func(t *testing.T) {
		root := nr - 1
		recv := make([]*cuda.Slice[float32], nr)
		for r, c := range cs {
			recv[r] = upload(t, c, make([]float32, n))
		}
		onEach(t, cs, func(c *Comm) error {
			var send *cuda.Slice[float32]
			if c.Rank() == root {
				send = part(root)
			}
			return Broadcast(c, send, recv[c.Rank()], root)
		})
		for r, c := range cs {
			got := download(t, c, recv[r])
			for j := range got {
				if want := value(root, j); got[j] != want {
					t.Fatalf("rank %d element %d is %v, want %v", r, j, got[j], want)
				}
			}
		}
	})
	t.Run("Reduce", func(t *testing.T) {
		const root = 0
		recv := upload(t, cs[root], make([]float32, n))
		onEach(t, cs, func(c *Comm) error {
			var dst *cuda.Slice[float32]
			if c.Rank() == root {
				dst = recv
			}
			return Reduce(c, part(c.Rank()), dst, Max, root)
		})
		got := download(t, cs[root], recv)
		for j := range got {
			want := 0.0
			for q := 0; q < nr; q++ {
				want = math.Max(want, value(q, j))
			}
			if got[j] != want {
				t.Fatalf("element %d is %v, want %v", j, got[j], want)
			}
		}
	})
	t.Run("SendRecvRingInOneGroup", func(t *testing.T) {
		// One goroutine drives every rank: the calls must be one group.
		recv := make([]*cuda.Slice[float32], nr)
		for r, c := range cs {
			recv[r] = upload(t, c, make([]float32, n))
		}
		must(t, Group(func() error {
			for r, c := range cs {
				if err := Send(c, part(r), (r+1)%nr); err != nil {
					return err
				}
				if err := Recv(c, recv[r], (r+nr-1)%nr); err != nil {
					return err
				}
			}
			return nil
		}))
		for r, c := range cs {
			got := download(t, c, recv[r])
			from := (r + nr - 1) % nr
			for j := range got {
				if want := value(from, j); got[j] != want {
					t.Fatalf("rank %d element %d is %v, want %v (rank %d's)", r, j, got[j], want, from)
				}
			}
		}
	})
	t.Run("AllReduceOfEveryRankInOneGroup", func(t *testing.T) {
		must(t, Group(func() error {
			for r, c := range cs {
				if err := AllReduce(c, out[r], out[r], Sum); err != nil {
					return err
				}
			}
			return nil
		}))
		for r, c := range cs {
			got := download(t, c, out[r])
			for q := 0; q < nr; q++ {
				for j := 0; j < n; j++ {
					if want := value(q, j) * float64(nr); got[q*n+j] != want {
						t.Fatalf("rank %d: element %d of part %d is %v, want %v", r, j, q, got[q*n+j], want)
					}
				}
			}
		}
	})
}

// TestLifecycle: clones, Close, Abort and Shutdown of real communicators,
// on one GPU or more.
func TestLifecycle(t *testing.T) {
	needNCCL(t)
	s := stream(t, 0)
	before := cuda.LiveObjects()
	cs, err := InitAll([]*cuda.Stream{s})
	must(t, err)
	c := cs[0]
	if c.Rank() != 0 || c.Size() != 1 || c.Device() != 0 {
		t.Errorf("rank %d of %d on device %d", c.Rank(), c.Size(), c.Device())
	}
	x := upload(t, c, []float32{1, 2, 3})
	must(t, AllReduce(c, x, x, Sum))
	must(t, c.AsyncError())
	c2, err := c.Clone()
	must(t, err)
	must(t, c.Close())
	must(t, AllReduce(c2, x, x, Sum)) // the clone still works
	must(t, c2.Abort())
	wantClosed(t, "AllReduce after Abort", AllReduce(c2, x, x, Sum))
	must(t, c2.Close()) // Abort closed it: closing again is nil
	must(t, x.Close())
	if after := cuda.LiveObjects(); after != before {
		t.Errorf("live objects %+v after Abort, %+v before", after, before)
	}

	cs, err = InitAll([]*cuda.Stream{s})
	must(t, err)
	x = upload(t, cs[0], []float32{1, 2, 3})
	must(t, AllReduce(cs[0], x, x, Max))
	must(t, cs[0].Shutdown(t.Context()))
	wantClosed(t, "AllReduce after Shutdown", AllReduce(cs[0], x, x, Sum))
}

// TestInitRankPeerNeverJoins: a communicator of two ranks of which only
// one ever joins is aborted when its context's deadline passes, and
// InitRank returns within the deadline (and the abort's own time).
func TestInitRankPeerNeverJoins(t *testing.T) {
	needNCCL(t)
	s := stream(t, 0)
	id, err := NewUniqueID()
	must(t, err)
	const deadline = 3 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	c, err := InitRank(ctx, s, id, 2, 0)
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("InitRank of 2 ranks returned a communicator with no peer")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("InitRank: %v, want an error matching context.DeadlineExceeded", err)
	}
	if took < deadline-100*time.Millisecond || took > deadline+2*time.Second {
		t.Errorf("InitRank returned after %v, deadline %v", took, deadline)
	}
	t.Logf("InitRank returned after %v (deadline %v): %v", took, deadline, err)
	// The process can still make communicators.
	cs, err := InitAll([]*cuda.Stream{s})
	must(t, err)
	must(t, cs[0].Close())
}

const (
	childID   = "GOCUDA_NCCL_TEST_ID"
	childRank = "GOCUDA_NCCL_TEST_RANK"
)

// TestTwoProcesses: rank 0 here on device 0, rank 1 in a child process (this
// test binary again) on device 1; the id crosses in the environment, as it
// would over any channel. Both all-reduce and check the result.
func TestTwoProcesses(t *testing.T) {
	if os.Getenv(childID) != "" {
		return // the child runs TestTwoProcessesChild
	}
	needNCCL(t)
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		t.Skipf("%d CUDA device(s) (%v): two processes need a GPU each", n, err)
	}
	id, err := NewUniqueID()
	must(t, err)
	done := make(chan error, 1)
	go func() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcessesChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childID+"="+id.String(), childRank+"=1")
		out, err := cmd.CombinedOutput()
		if err == nil && !strings.Contains(string(out), "--- PASS: TestTwoProcessesChild") {
			err = errors.New("the child did not pass")
		}
		if err != nil {
			err = fmt.Errorf("child: %v\n%s", err, out)
		}
		done <- err
	}()
	if err := twoProcessRank(t, id, 0); err != nil {
		t.Error(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTwoProcessesChild(t *testing.T) {
	hexID := os.Getenv(childID)
	if hexID == "" {
		t.Skip("run by TestTwoProcesses")
	}
	b, err := hex.DecodeString(hexID)
	must(t, err)
	var id UniqueID
	must(t, id.UnmarshalBinary(b))
	rank, err := strconv.Atoi(os.Getenv(childRank))
	must(t, err)
	if err := twoProcessRank(t, id, rank); err != nil {
		t.Fatal(err)
	}
}

func twoProcessRank(t *testing.T, id UniqueID, rank int) error {
	s := stream(t, rank)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := InitRank(ctx, s, id, 2, rank)
	if err != nil {
		return fmt.Errorf("rank %d: %w", rank, err)
	}
	defer c.Close()
	const n = 1 << 20
	host := make([]float32, n)
	for j := range host {
		host[j] = float32(value(rank, j))
	}
	x := upload(t, c, host)
	if err := AllReduce(c, x, x, Sum); err != nil {
		return err
	}
	got := download(t, c, x)
	for j, g := range got {
		if want := value(0, j) + value(1, j); g != want {
			return fmt.Errorf("rank %d: element %d is %v, want %v", rank, j, g, want)
		}
	}
	return c.Shutdown(ctx)
}
