//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/nccl"
)

// The FP8 types through NCCL: the refusals before NCCL (an older library,
// a device below 9.0 for reductions), and, on two ranks, reductions against
// cuda's own FP8 conversions and moves of every encoding.

// fp8 is what the tests need of an FP8 type F: cuda's conversions.
type fp8[F Element] struct {
	name     string
	fromBits func(uint8) F
	bits     func(F) uint8
	value    func(F) float32
	round    func(float32) F // to nearest, ties to even, saturating
	isNaN    func(F) bool
}

var (
	e4m3 = fp8[cuda.Float8E4M3]{"cuda.Float8E4M3", cuda.Float8E4M3FromBits, cuda.Float8E4M3.Bits,
		cuda.Float8E4M3.Float32, cuda.ToFloat8E4M3, cuda.Float8E4M3.IsNaN}
	e5m2 = fp8[cuda.Float8E5M2]{"cuda.Float8E5M2", cuda.Float8E5M2FromBits, cuda.Float8E5M2.Bits,
		cuda.Float8E5M2.Float32, cuda.ToFloat8E5M2, cuda.Float8E5M2.IsNaN}
)

// standInVersion makes the package see NCCL version v loaded, for the
// test's length.
func standInVersion(t *testing.T, v int) {
	saved := loadedVersion
	loadedVersion = func() (int, error) { return v, nil }
	t.Cleanup(func() { loadedVersion = saved })
}

// wantChecked checks that err is a refusal before NCCL whose message has
// every one of parts.
func wantChecked(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var e *Error
	if !errors.Is(err, nccl.NcclInvalidArgument) || !errors.As(err, &e) || e.Func != "(checked before NCCL)" {
		t.Errorf("%s: %v, want an *Error matching ncclInvalidArgument, checked before NCCL", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %q does not say %q", what, err, p)
		}
	}
}

func TestVersionString(t *testing.T) {
	for code, want := range map[int]string{22803: "2.28.3", 22203: "2.22.3", 22400: "2.24.0", 21003: "2.10.3", 2708: "2.7.8"} {
		if got := versionString(code); got != want {
			t.Errorf("versionString(%d) = %q, want %q", code, got, want)
		}
	}
}

// TestFP8RefusedBeforeNCCL: with a library older than 2.24 every
// collective on FP8 data is refused before NCCL, naming the type and both
// versions; 2.24 itself and other types pass. A reduction of FP8 on a
// device below 9.0 is refused, a move is not. A communicator NCCL never
// sees: nothing here may reach it.
func TestFP8RefusedBeforeNCCL(t *testing.T) {
	s := stream(t, 0)
	c := fakeComm(t, s, 0, 2)
	ctx := s.Context()
	alloc := func(n int) *cuda.Slice[cuda.Float8E4M3] {
		x, err := cuda.AllocSlice[cuda.Float8E4M3](ctx, n)
		must(t, err)
		t.Cleanup(func() { x.Close() })
		return x
	}
	a4, b4, a8 := alloc(4), alloc(4), alloc(8)
	collectives := map[string]func() error{
		"AllReduce":     func() error { return AllReduce(c, a4, b4, Sum) },
		"AllGather":     func() error { return AllGather(c, a4, a8) },
		"ReduceScatter": func() error { return ReduceScatter(c, a8, a4, Max) },
		"Broadcast":     func() error { return Broadcast(c, a4, b4, 0) },
		"Reduce":        func() error { return Reduce(c, a4, b4, Avg, 0) },
		"Send":          func() error { return Send(c, a4, 1) },
		"Recv":          func() error { return Recv(c, b4, 1) },
	}

	standInVersion(t, 22203)
	for name, call := range collectives {
		wantChecked(t, name+" of E4M3 with NCCL 2.22.3", call(),
			"nccl: "+name+": ", "cuda.Float8E4M3 data (ncclFloat8e4m3) needs NCCL 2.24 or later", "loaded is 2.22.3")
	}
	e5, err := cuda.AllocSlice[cuda.Float8E5M2](ctx, 4)
	must(t, err)
	defer e5.Close()
	wantChecked(t, "AllReduce of E5M2 with NCCL 2.22.3", AllReduce(c, e5, e5, Prod), "cuda.Float8E5M2 data (ncclFloat8e5m2) needs NCCL 2.24")
	for _, err := range []error{
		checkElement[float32]("AllReduce", c.sh, true), checkElement[uint8]("AllGather", c.sh, false),
		checkElement[cuda.BFloat16]("Reduce", c.sh, true), checkElement[cuda.Float16]("Send", c.sh, false),
	} {
		if err != nil {
			t.Errorf("a type older than FP8 refused with NCCL 2.22.3: %v", err)
		}
	}
	standInVersion(t, fp8Version-1)
	wantChecked(t, "E4M3 with NCCL 2.23.99", checkElement[cuda.Float8E4M3]("AllGather", c.sh, false), "loaded is 2.23.99")
	standInVersion(t, fp8Version)
	if err := checkElement[cuda.Float8E5M2]("AllGather", c.sh, false); err != nil {
		t.Errorf("E5M2 with NCCL 2.24.0: %v", err)
	}

	// Compute capability: only reductions, only where it is known and
	// below 9.0.
	c.sh.cc = 89
	for _, name := range []string{"AllReduce", "ReduceScatter", "Reduce"} {
		wantChecked(t, name+" of E4M3 on 8.9", collectives[name](),
			"NCCL reduces cuda.Float8E4M3 data (ncclFloat8e4m3) on devices of compute capability 9.0 or later only, and device 0 is 8.9")
	}
	wantChecked(t, "AllReduce of E5M2 on 8.9", AllReduce(c, e5, e5, Min), "cuda.Float8E5M2 data (ncclFloat8e5m2)", "is 8.9")
	if err := checkElement[cuda.Float8E4M3]("AllGather", c.sh, false); err != nil {
		t.Errorf("a move of E4M3 on 8.9: %v", err)
	}
	if err := checkElement[cuda.BFloat16]("AllReduce", c.sh, true); err != nil {
		t.Errorf("a reduction of bfloat16 on 8.9: %v", err)
	}
	for _, cc := range []int{90, 100, 0} {
		c.sh.cc = cc
		if err := checkElement[cuda.Float8E5M2]("AllReduce", c.sh, true); err != nil {
			t.Errorf("a reduction of E5M2 on compute capability %d (0: unknown): %v", cc, err)
		}
	}
}

// twoComms makes a communicator of two ranks, on devices 0 and 1
// (InitAll), however many GPUs the machine has: FP8 reductions of more
// ranks round at every step of NCCL's algorithm.
func twoComms(t *testing.T) []*Comm {
	t.Helper()
	needNCCL(t)
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		t.Skipf("%d CUDA device(s) (%v): the test needs 2", n, err)
	}
	cs, err := InitAll([]*cuda.Stream{stream(t, 0), stream(t, 1)})
	must(t, err)
	t.Cleanup(func() {
		for _, c := range cs {
			must(t, c.Close())
		}
	})
	for i, c := range cs {
		d, err := cuda.GetDevice(i)
		must(t, err)
		major, minor, err := d.ComputeCapability()
		must(t, err)
		if c.sh.cc != 10*major+minor {
			t.Errorf("rank %d: compute capability %d read, the device says %d.%d", i, c.sh.cc, major, minor)
		}
	}
	return cs
}

// needFP8 skips where the library loaded has no FP8, after checking that
// FP8 data is refused before NCCL there (the build of nccl22203 with the
// fake NCCL, which reports 2.22.3); and, for reductions, where a device
// is below 9.0, after checking the refusal likewise.
func needFP8(t *testing.T, cs []*Comm, reductions bool) {
	t.Helper()
	v, err := Version()
	must(t, err)
	if lv, err := loadedVersion(); err != nil || lv != v {
		t.Fatalf("the version read once is %d (%v), Version says %d", lv, err, v)
	}
	x := upload(t, cs[0], make([]cuda.Float8E4M3, 4))
	if v < fp8Version {
		wantChecked(t, "AllReduce of E4M3", AllReduce(cs[0], x, x, Sum), "needs NCCL 2.24 or later", "loaded is "+versionString(v))
		wantChecked(t, "Send of E5M2", Send(cs[0], upload(t, cs[0], make([]cuda.Float8E5M2, 4)), 1), "needs NCCL 2.24 or later")
		t.Skipf("NCCL %s has no FP8 (checked: refused before NCCL)", versionString(v))
	}
	if !reductions {
		return
	}
	for _, c := range cs {
		if c.sh.cc < 90 {
			x := upload(t, c, make([]cuda.Float8E4M3, 4))
			wantChecked(t, "AllReduce of E4M3", AllReduce(c, x, x, Sum), "compute capability 9.0 or later")
			t.Skipf("device %d is of compute capability %d.%d: NCCL reduces FP8 from 9.0 (checked: refused before NCCL)", c.Device(), c.sh.cc/10, c.sh.cc%10)
		}
	}
}

// TestAllReduceFP8: every pair of FP8 numbers (NaNs left out), one from
// each rank, all-reduced with each reduction, against the reduction of
// the pair in float64 rounded by cuda's conversion (ToFloat8E4M3,
// ToFloat8E5M2: to nearest, ties to even, saturating), which is what NCCL
// computes for two ranks.
func TestAllReduceFP8(t *testing.T) {
	cs := twoComms(t)
	needFP8(t, cs, true)
	t.Run("E4M3", func(t *testing.T) { allReduceFP8(t, cs, e4m3) })
	t.Run("E5M2", func(t *testing.T) { allReduceFP8(t, cs, e5m2) })
}

func allReduceFP8[F Element](t *testing.T, cs []*Comm, k fp8[F]) {
	var all []F
	for b := range 256 {
		if x := k.fromBits(uint8(b)); !k.isNaN(x) {
			all = append(all, x)
		}
	}
	for _, op := range []Op{Sum, Prod, Max, Min, Avg} {
		vals := all
		if op == Avg {
			// NCCL halves each value in FP8 before the sum: only values
			// whose halves are FP8 numbers (an infinity's is not: it
			// saturates) give the rounded mean.
			vals = nil
			for _, x := range all {
				h := float64(k.value(x)) / 2
				if float64(k.value(k.round(float32(h)))) == h {
					vals = append(vals, x)
				}
			}
		}
		n := len(vals) * len(vals)
		in := [2][]F{make([]F, n), make([]F, n)}
		for i, a := range vals {
			for j, b := range vals {
				in[0][i*len(vals)+j], in[1][i*len(vals)+j] = a, b
			}
		}
		sends := []*cuda.Slice[F]{upload(t, cs[0], in[0]), upload(t, cs[1], in[1])}
		recvs := []*cuda.Slice[F]{upload(t, cs[0], make([]F, n)), upload(t, cs[1], make([]F, n))}
		for _, inPlace := range []bool{false, true} {
			if inPlace && op != Sum {
				continue
			}
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
				must(t, c.Stream().Synchronize())
				host := make([]F, n)
				must(t, got.CopyTo(host))
				bad := 0
				for e, g := range host {
					a, b := in[0][e], in[1][e]
					want := k.round(fp8Reduce(op, float64(k.value(a)), float64(k.value(b))))
					// Compared as numbers: -0 and +0 are one (the order
					// of Max and Min of zeros is NCCL's).
					if k.value(g) == k.value(want) || k.isNaN(g) && k.isNaN(want) {
						continue
					}
					if bad++; bad <= 5 {
						t.Errorf("%s %v (in place %v): rank %d: %v (%#02x) and %v (%#02x) gave %v (%#02x), want %v (%#02x)",
							k.name, op, inPlace, r, a, k.bits(a), b, k.bits(b), g, k.bits(g), want, k.bits(want))
					}
				}
				if bad > 0 {
					t.Fatalf("%s %v: %d of %d pairs wrong on rank %d", k.name, op, bad, n, r)
				}
			}
		}
	}
}

// fp8Reduce is op of a (rank 0's) and b as a float32 for cuda's rounding.
// float32(x) is exact but for sums of E5M2 numbers more than 2²¹ apart,
// which it rounds to a float32 next to the larger: far from a midpoint of
// two FP8 numbers (2⁻³ of it away), so that FP8 rounds it as it would x.
func fp8Reduce(op Op, a, b float64) float32 {
	var x float64
	switch op {
	case Sum:
		x = a + b
	case Prod:
		x = a * b
	case Max:
		x = math.Max(a, b)
	case Min:
		x = math.Min(a, b)
	case Avg:
		x = (a + b) / 2
	default:
		panic(fmt.Sprint("no reduction ", op))
	}
	return float32(x)
}

// TestCollectivesOnFP8: AllGather, Broadcast and Send/Recv (in a group)
// move all 256 encodings of each FP8 type bit for bit, NaNs and -0
// included; ReduceScatter and Reduce reduce small integers, exact in both
// types.
func TestCollectivesOnFP8(t *testing.T) {
	cs := twoComms(t)
	needFP8(t, cs, false)
	t.Run("E4M3", func(t *testing.T) { collectivesOnFP8(t, cs, e4m3) })
	t.Run("E5M2", func(t *testing.T) { collectivesOnFP8(t, cs, e5m2) })
}

func collectivesOnFP8[F Element](t *testing.T, cs []*Comm, k fp8[F]) {
	const n = 256
	// rank r's element j: every encoding once, in an order of its own.
	code := func(r, j int) uint8 { return uint8(j*(2*r+1) + 77*r) }
	in := make([]*cuda.Slice[F], 2)
	for r, c := range cs {
		host := make([]F, n)
		for j := range host {
			host[j] = k.fromBits(code(r, j))
		}
		in[r] = upload(t, c, host)
	}
	bitsOf := func(c *Comm, s *cuda.Slice[F]) []uint8 {
		must(t, c.Stream().Synchronize())
		host := make([]F, s.Len())
		must(t, s.CopyTo(host))
		out := make([]uint8, len(host))
		for i, x := range host {
			out[i] = k.bits(x)
		}
		return out
	}
	// moved reports whether a move of FP8 may be refused here: by NCCL
	// releases before its newest, where a device is below 9.0.
	moved := func(what string, errs []error) bool {
		for _, err := range errs {
			if err == nil {
				continue
			}
			var e *Error
			if errors.Is(err, nccl.NcclInvalidArgument) && errors.As(err, &e) && e.Func != "(checked before NCCL)" &&
				(cs[0].sh.cc < 90 || cs[1].sh.cc < 90) {
				t.Logf("%s of %s refused by NCCL below compute capability 9.0: %v", what, k.name, err)
				return false
			}
			t.Fatalf("%s of %s: %v", what, k.name, err)
		}
		return true
	}

	gathered := []*cuda.Slice[F]{upload(t, cs[0], make([]F, 2*n)), upload(t, cs[1], make([]F, 2*n))}
	if moved("AllGather", onEachErr(cs, func(c *Comm) error { return AllGather(c, in[c.Rank()], gathered[c.Rank()]) })) {
		for r, c := range cs {
			got := bitsOf(c, gathered[r])
			for q := range 2 {
				for j := range n {
					if want := code(q, j); got[q*n+j] != want {
						t.Fatalf("AllGather: rank %d: element %d of rank %d's part is %#02x, want %#02x", r, j, q, got[q*n+j], want)
					}
				}
			}
		}
	}

	const root = 1
	bcast := []*cuda.Slice[F]{upload(t, cs[0], make([]F, n)), upload(t, cs[1], make([]F, n))}
	if moved("Broadcast", onEachErr(cs, func(c *Comm) error {
		var send *cuda.Slice[F]
		if c.Rank() == root {
			send = in[root]
		}
		return Broadcast(c, send, bcast[c.Rank()], root)
	})) {
		for r, c := range cs {
			for j, g := range bitsOf(c, bcast[r]) {
				if want := code(root, j); g != want {
					t.Fatalf("Broadcast: rank %d element %d is %#02x, want %#02x", r, j, g, want)
				}
			}
		}
	}

	recv := []*cuda.Slice[F]{upload(t, cs[0], make([]F, n)), upload(t, cs[1], make([]F, n))}
	must(t, Group(func() error {
		for r, c := range cs {
			if err := Send(c, in[r], 1-r); err != nil {
				return err
			}
			if err := Recv(c, recv[r], 1-r); err != nil {
				return err
			}
		}
		return nil
	}))
	for r, c := range cs {
		for j, g := range bitsOf(c, recv[r]) {
			if want := code(1-r, j); g != want {
				t.Fatalf("Recv: rank %d element %d is %#02x, want %#02x (rank %d's)", r, j, g, want, 1-r)
			}
		}
	}

	for _, c := range cs {
		if c.sh.cc < 90 {
			t.Logf("no reductions of %s: device %d is below compute capability 9.0", k.name, c.Device())
			return
		}
	}
	// Reductions of 1…4 (value), whose sums and maxima are exact FP8
	// numbers in both types.
	ints := make([]*cuda.Slice[F], 2)
	for r, c := range cs {
		host := make([]F, 2*n)
		for j := range host {
			host[j] = k.round(float32(value(r, j)))
		}
		ints[r] = upload(t, c, host)
	}
	scattered := []*cuda.Slice[F]{upload(t, cs[0], make([]F, n)), upload(t, cs[1], make([]F, n))}
	onEach(t, cs, func(c *Comm) error { return ReduceScatter(c, ints[c.Rank()], scattered[c.Rank()], Sum) })
	for r, c := range cs {
		must(t, c.Stream().Synchronize())
		host := make([]F, n)
		must(t, scattered[r].CopyTo(host))
		for j, g := range host {
			if want := value(0, r*n+j) + value(1, r*n+j); float64(k.value(g)) != want {
				t.Fatalf("ReduceScatter: rank %d element %d is %v, want %v", r, j, g, want)
			}
		}
	}
	const to = 0
	reduced := upload(t, cs[to], make([]F, 2*n))
	onEach(t, cs, func(c *Comm) error {
		var dst *cuda.Slice[F]
		if c.Rank() == to {
			dst = reduced
		}
		return Reduce(c, ints[c.Rank()], dst, Max, to)
	})
	must(t, cs[to].Stream().Synchronize())
	host := make([]F, 2*n)
	must(t, reduced.CopyTo(host))
	for j, g := range host {
		if want := math.Max(value(0, j), value(1, j)); float64(k.value(g)) != want {
			t.Fatalf("Reduce: element %d is %v, want %v", j, g, want)
		}
	}
}

// onEachErr runs fn for every rank, one goroutine each, and returns their
// errors.
func onEachErr(cs []*Comm, fn func(c *Comm) error) []error {
	errs := make([]error, len(cs))
	done := make(chan struct{})
	for i, c := range cs {
		go func() {
			defer func() { done <- struct{}{} }()
			errs[i] = fn(c)
		}()
	}
	for range cs {
		<-done
	}
	return errs
}
