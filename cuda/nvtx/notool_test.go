package nvtx_test

import (
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

// With no tool named, the package is disabled without a failure, and
// every call returns what NVTX returns with no tool: range id 0, and
// NotTracked for Push and Pop.
func TestNoToolIsDisabledAndCallsReturnNVTXsNoToolValues(t *testing.T) {
	needNoTool(t)
	if nvtx.Enabled() {
		t.Fatal("Enabled with no tool named")
	}
	if err := nvtx.AttachFailure(); err != nil {
		t.Fatalf("AttachFailure with no tool named: %v", err)
	}
	r := nvtx.Start("r")
	if r.ID() != 0 {
		t.Errorf("range id %d with no tool", r.ID())
	}
	r.End()
	if got := nvtx.Push("p"); got != nvtx.NotTracked {
		t.Errorf("Push = %d, want %d", got, nvtx.NotTracked)
	}
	if got := nvtx.Pop(); got != nvtx.NotTracked {
		t.Errorf("Pop = %d, want %d", got, nvtx.NotTracked)
	}
	d := nvtx.NewDomain("notool")
	if got := d.PushWith(nvtx.Attributes{Message: "p"}); got != nvtx.NotTracked {
		t.Errorf("Domain.PushWith = %d, want %d", got, nvtx.NotTracked)
	}
	if got := d.Pop(); got != nvtx.NotTracked {
		t.Errorf("Domain.Pop = %d, want %d", got, nvtx.NotTracked)
	}
	if id := d.StartWith(nvtx.Attributes{Registered: d.RegisterString("s")}).ID(); id != 0 {
		t.Errorf("domain range id %d with no tool", id)
	}
	end := nvtx.Range("x")
	if end == nil {
		t.Fatal("Range returned nil")
	}
	end()
}

// The disabled path allocates nothing, so calls can stay in hot code.
func TestNoToolCallsDoNotAllocate(t *testing.T) {
	needNoTool(t)
	d := nvtx.NewDomain("alloc")
	s := d.RegisterString("s")
	a := nvtx.Attributes{Message: "m", Color: nvtx.Red, Payload: nvtx.Int64(1), Registered: s}
	allocs := testing.AllocsPerRun(100, func() {
		nvtx.Start("a").End()
		nvtx.Range("b")()
		nvtx.RangeWith(a)()
		nvtx.Mark("c")
		nvtx.MarkWith(a)
		nvtx.Push("d")
		nvtx.Pop()
		d.Start("e").End()
		d.Range("f")()
		d.MarkWith(a)
		nvtx.NameCategory(1, "g")
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round with no tool", allocs)
	}
}

// NewDomain gives one *Domain per name, the default domain for "", and
// RegisterString one *String per text in a domain.
func TestDomainsAndStringsAreOnePerName(t *testing.T) {
	if d := nvtx.NewDomain(""); d != nil {
		t.Errorf("NewDomain(\"\") = %p, want the default domain (nil)", d)
	}
	a, b := nvtx.NewDomain("one"), nvtx.NewDomain("two")
	if a == b || nvtx.NewDomain("one") != a || a.Name() != "one" || b.Name() != "two" {
		t.Errorf("domains one=%p %q, two=%p %q, one again=%p", a, a.Name(), b, b.Name(), nvtx.NewDomain("one"))
	}
	if (*nvtx.Domain)(nil).Name() != "" {
		t.Errorf("the default domain's name is %q", (*nvtx.Domain)(nil).Name())
	}
	s := a.RegisterString("text")
	if a.RegisterString("text") != s || b.RegisterString("text") == s || s.String() != "text" {
		t.Errorf("registered strings: %p, again %p, other domain %p, text %q", s, a.RegisterString("text"), b.RegisterString("text"), s.String())
	}
}

// Colors and payload constructors put their values where NVTX reads them.
func TestColorsAreARGB(t *testing.T) {
	for _, c := range []struct {
		got, want nvtx.Color
	}{
		{nvtx.RGB(0x12, 0x34, 0x56), 0xff123456},
		{nvtx.ARGB(0x01, 0x02, 0x03, 0x04), 0x01020304},
		{nvtx.Red, nvtx.RGB(0xff, 0, 0)},
		{nvtx.Green, nvtx.RGB(0, 0xff, 0)},
		{nvtx.Blue, nvtx.RGB(0, 0, 0xff)},
	} {
		if c.got != c.want {
			t.Errorf("color %08x, want %08x", uint32(c.got), uint32(c.want))
		}
	}
}

// Many goroutines using every call at once with no tool: the race
// detector checks the one-time attach and the domain and string caches.
func TestNoToolConcurrentUse(t *testing.T) {
	needNoTool(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	domains := map[*nvtx.Domain]bool{}
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := nvtx.NewDomain("concurrent")
			mu.Lock()
			domains[d] = true
			mu.Unlock()
			s := d.RegisterString("s")
			for i := range 100 {
				r := d.StartWith(nvtx.Attributes{Registered: s, Payload: nvtx.Int64(int64(i))})
				nvtx.Mark("m")
				nvtx.Range("r")()
				r.End()
			}
			if nvtx.Enabled() {
				t.Errorf("goroutine %d: Enabled with no tool", g)
			}
		}()
	}
	wg.Wait()
	if len(domains) != 1 {
		t.Errorf("%d domains for one name", len(domains))
	}
}
