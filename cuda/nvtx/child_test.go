package nvtx_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

// scenarios are what child processes run with a tool attached (or one
// that fails to attach); each prints what the Go side saw, one line per
// fact, for the parent to compare with the tool's log.
var scenarios = map[string]func(){
	"attach":     scenarioAttach,
	"record":     scenarioRecord,
	"coreonly":   scenarioDomainsWithoutCore2,
	"core2only":  scenarioDefaultDomainThroughCore2,
	"concurrent": scenarioConcurrent,
	"allocs":     scenarioAllocs,
}

func printAttach() {
	fmt.Printf("enabled=%v\n", nvtx.Enabled())
	var ae *nvtx.AttachError
	switch err := nvtx.AttachFailure(); {
	case err == nil:
		fmt.Println("failure=none")
	case errors.As(err, &ae):
		fmt.Printf("failure=%s path=%s\n", ae.Stage, ae.Path)
	default:
		fmt.Printf("failure=%T %v\n", err, err)
	}
}

// scenarioAttach reports whether the tool attached, then makes calls of
// every kind, which must all be harmless where it did not.
func scenarioAttach() {
	printAttach()
	nvtx.Mark("after attach")
	r := nvtx.Start("range")
	r.End()
	nvtx.Range("closure")()
	fmt.Printf("push=%d pop=%d\n", nvtx.Push("pushed"), nvtx.Pop())
	d := nvtx.NewDomain("lib")
	d.NameCategory(1, "cat")
	d.MarkWith(nvtx.Attributes{Registered: d.RegisterString("reg")})
	d.Start("domain range").End()
	nvtx.NameCategory(2, "global")
}

func scenarioRecord() {
	printAttach()
	nvtx.Mark("hello")
	outer := nvtx.Start("outer")
	nvtx.MarkWith(nvtx.Attributes{Message: "colored", Color: nvtx.RGB(1, 2, 3), Category: 7, Payload: nvtx.Int64(-5)})
	nvtx.NameCategory(7, "io")
	end := nvtx.Range("inner")
	end()
	outer.End()
	fmt.Printf("outer id=%d\n", outer.ID())

	// Push and pop on one thread, as their documentation asks.
	runtime.LockOSThread()
	p1 := nvtx.Push("p1")
	p2 := nvtx.PushWith(nvtx.Attributes{Message: "p2", Payload: nvtx.Float64(2.5)})
	fmt.Printf("push %d %d pop %d %d %d\n", p1, p2, nvtx.Pop(), nvtx.Pop(), nvtx.Pop())

	d := nvtx.NewDomain("myapp")
	fmt.Printf("same domain=%v name=%s\n", nvtx.NewDomain("myapp") == d, d.Name())
	d.NameCategory(1, "decode")
	frame := d.RegisterString("frame")
	d.Mark("dm")
	dr := d.StartWith(nvtx.Attributes{Registered: frame, Color: nvtx.Blue, Payload: nvtx.Uint32(9)})
	dp := d.Push("dp")
	fmt.Printf("domain push %d pop %d\n", dp, d.Pop())
	dr.End()
	fmt.Printf("domain range id=%d\n", dr.ID())
	d.MarkWith(nvtx.Attributes{Registered: d.RegisterString("frame")})
	runtime.UnlockOSThread()

	// A registered string outside its domain is sent as text.
	nvtx.MarkWith(nvtx.Attributes{Registered: frame})
	nvtx.NewDomain("other").MarkWith(nvtx.Attributes{Registered: frame})

	nvtx.Mark(strings.Repeat("x", 300))
	nvtx.Mark("")
	nvtx.MarkWith(nvtx.Attributes{Message: "u64", Payload: nvtx.Uint64(1<<64 - 1)})
	nvtx.MarkWith(nvtx.Attributes{Message: "i32", Payload: nvtx.Int32(-7)})
	nvtx.MarkWith(nvtx.Attributes{Message: "f32", Payload: nvtx.Float32(0.25), Color: nvtx.ARGB(0x80, 0xff, 0, 0x10)})
	nvtx.RangeWith(nvtx.Attributes{Message: "with", Category: 3})()
	nvtx.StartWith(nvtx.Attributes{Message: "started with"}).End()
}

// scenarioDomainsWithoutCore2 runs with a tool that fills only the CORE
// module: the named domain's events have nowhere to go.
func scenarioDomainsWithoutCore2() {
	printAttach()
	nvtx.Mark("a")
	d := nvtx.NewDomain("lib")
	d.Mark("b")
	d.Start("c").End()
	d.NameCategory(1, "cat")
	fmt.Printf("domain push=%d pop=%d\n", d.Push("d"), d.Pop())
	nvtx.Mark("z")
}

// scenarioDefaultDomainThroughCore2 runs with a tool that fills only the
// CORE2 module: the default domain's events take its functions, with the
// NULL domain.
func scenarioDefaultDomainThroughCore2() {
	printAttach()
	nvtx.Mark("a")
	r := nvtx.Start("b")
	r.End()
	nvtx.NameCategory(4, "four")
	runtime.LockOSThread()
	fmt.Printf("push=%d pop=%d\n", nvtx.Push("c"), nvtx.Pop())
	runtime.UnlockOSThread()
}

const (
	concurrentGoroutines = 8
	concurrentRounds     = 100
)

// scenarioConcurrent starts and ends ranges from many goroutines at once,
// in two domains, with domains and strings first used concurrently.
func scenarioConcurrent() {
	printAttach()
	var wg sync.WaitGroup
	for g := range concurrentGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := nvtx.NewDomain("shared")
			s := d.RegisterString("work")
			for i := range concurrentRounds {
				r := nvtx.Start(fmt.Sprintf("g%d-%d", g, i))
				dr := d.StartWith(nvtx.Attributes{Registered: s, Payload: nvtx.Int64(int64(i))})
				nvtx.Mark("m")
				runtime.Gosched() // let the goroutine move between threads
				dr.End()
				r.End()
			}
		}()
	}
	wg.Wait()
}

// scenarioAllocs counts the allocations of events with a tool attached,
// with names built on the stack.
func scenarioAllocs() {
	printAttach()
	d := nvtx.NewDomain("allocs")
	a := nvtx.Attributes{Registered: d.RegisterString("r"), Color: nvtx.Red, Payload: nvtx.Int64(1)}
	d.MarkWith(a) // the domain and the string reach the tool here
	var buf [8]byte
	i := 0
	runtime.LockOSThread()
	allocs := testing.AllocsPerRun(50, func() {
		i++
		copy(buf[:], "name")
		buf[4] = byte('a' + i%26)
		name := string(buf[:5])
		nvtx.Start(name).End()
		nvtx.Mark(name)
		nvtx.MarkWith(nvtx.Attributes{Message: name, Category: 1})
		d.StartWith(a).End()
		d.MarkWith(a)
		nvtx.Push(name)
		nvtx.Pop()
	})
	runtime.UnlockOSThread()
	fmt.Printf("allocs=%v\n", allocs)
}
