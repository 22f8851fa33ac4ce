package cudatest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
	"github.com/gocuda/gocuda/internal/ptx"
)

// ptxModules are the modules parsed so far, by the fake's id of their
// text (one per module load), so that each load has its own variables,
// as a module on a GPU has. The table is bounded: a module evicted and
// launched again is parsed again, with fresh variables.
var ptxModules struct {
	sync.Mutex
	m     map[uint64]*ptxModule
	order []uint64
}

const maxPTXModules = 512

type ptxModule struct {
	once sync.Once
	mod  *ptx.Module
	err  error
}

func ptxModuleOf(id uint64, text string) (*ptx.Module, error) {
	ptxModules.Lock()
	if ptxModules.m == nil {
		ptxModules.m = map[uint64]*ptxModule{}
	}
	pm := ptxModules.m[id]
	if pm == nil {
		pm = &ptxModule{}
		ptxModules.m[id] = pm
		ptxModules.order = append(ptxModules.order, id)
		if len(ptxModules.order) > maxPTXModules {
			delete(ptxModules.m, ptxModules.order[0])
			ptxModules.order = ptxModules.order[1:]
		}
	}
	ptxModules.Unlock()
	pm.once.Do(func() { pm.mod, pm.err = ptx.Parse(strings.Clone(text)) })
	return pm.mod, pm.err
}

var printfOut struct {
	sync.Mutex
	w io.Writer
}

// SetPrintfOutput makes w receive what kernels run from PTX print with
// printf (os.Stdout until then), each launch's output as a whole, after
// the launch, in the order of the blocks and of the threads within them.
// It returns the writer it replaces.
func SetPrintfOutput(w io.Writer) io.Writer {
	printfOut.Lock()
	defer printfOut.Unlock()
	old := printfOut.w
	if old == nil {
		old = os.Stdout
	}
	printfOut.w = w
	return old
}

type lockedWriter struct{}

func (lockedWriter) Write(p []byte) (int, error) {
	printfOut.Lock()
	defer printfOut.Unlock()
	w := printfOut.w
	if w == nil {
		w = os.Stdout
	}
	return w.Write(p)
}

// pinned is the fake's allocations as the interpreter reaches them: each
// allocation found is kept mapped until the launch ends.
type pinned struct {
	lib *fakecuda.Lib
	op  *fakecuda.KernelCall
	mu  sync.Mutex
}

func (p *pinned) Find(addr, n uint64) (base, size uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lib.Pin(p.op.Op, addr, n)
}

// SharedRace is a race between two threads of a block on shared memory
// of a kernel run from PTX: both touched the same bytes, one of them
// writing, with no barrier (__syncthreads, or __syncwarp between threads
// of one warp) between them, as compute-sanitizer's racecheck reports.
type SharedRace struct {
	Kernel string
	ptx.SharedHazard
}

func (r SharedRace) String() string {
	return fmt.Sprintf("kernel %s: %s\n", r.Kernel, r.SharedHazard)
}

var sharedRaces struct {
	sync.Mutex
	r []SharedRace
}

// TakeSharedRaces returns the shared-memory races found since the last
// call, after waiting for the work queued so far to run. Without the race
// detector (WithRaceDetector) none are looked for.
func TakeSharedRaces() []SharedRace {
	if l := driver(); l != nil {
		l.Quiesce(quiesceWait)
	}
	sharedRaces.Lock()
	defer sharedRaces.Unlock()
	r := sharedRaces.r
	sharedRaces.r = nil
	return r
}

// checkPTX is the fake driver's PTX checker. At a module's load it
// parses the text, refusing malformed PTX with CUDA_ERROR_INVALID_PTX as
// the driver does; text that is valid but that the interpreter does not
// read loads, and fails the launches of its entries. Before an entry's
// first launch it compiles the entry: one the interpreter cannot run (or
// an entry of such a module) fails the launch with
// CUDA_ERROR_NOT_SUPPORTED, and LastKernelError says why and where, while
// the context and the module's other entries stay usable.
func checkPTX(c *fakecuda.PTXCheck) int {
	mod, err := ptxModuleOf(c.PTXID, c.PTX)
	if c.Entry == "" {
		var pe *ptx.Error
		if err != nil && !(errors.As(err, &pe) && pe.Unsupported) {
			fmt.Fprintf(os.Stderr, "cudatest: module load: %v (CUDA_ERROR_INVALID_PTX)\n", err)
			return int(cu.CUDA_ERROR_INVALID_PTX)
		}
		return 0
	}
	kmu.RLock()
	reg := kernels[c.Entry]
	kmu.RUnlock()
	if reg != nil { // a Go kernel runs instead
		return 0
	}
	if err == nil {
		_, err = mod.Kernel(c.Entry)
	}
	if err == nil {
		return 0
	}
	e := &KernelError{Kernel: strings.Clone(c.Entry), Result: cu.CUDA_ERROR_NOT_SUPPORTED, Msg: err.Error()}
	var pe *ptx.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		e.Line, e.Instruction = pe.Line, pe.Inst
		e.Msg = strings.TrimPrefix(pe.Msg, pe.Inst+": ")
	}
	kerrMu.Lock()
	lastErr = e
	kerrMu.Unlock()
	fmt.Fprintln(os.Stderr, e)
	return int(e.Result)
}

// runPTX runs a launch of an entry with no Go kernel from its module's PTX.
func runPTX(c *fakecuda.KernelCall, lib *fakecuda.Lib, race bool) int {
	fail := func(res cu.CUresult, msg string) int {
		e := &KernelError{Kernel: strings.Clone(c.Name), Result: res, Msg: msg}
		kerrMu.Lock()
		lastErr = e
		kerrMu.Unlock()
		fmt.Fprintln(os.Stderr, e)
		return int(res)
	}
	mod, err := ptxModuleOf(c.PTXID, c.PTX)
	if err != nil {
		return fail(cu.CUDA_ERROR_INVALID_PTX, err.Error())
	}
	k, err := mod.Kernel(c.Name)
	if err != nil {
		return fail(cu.CUDA_ERROR_NOT_SUPPORTED, err.Error())
	}
	name := strings.Clone(c.Name)
	l := &ptx.Launch{
		Grid:          c.Grid,
		Block:         c.Block,
		DynamicShared: c.SharedMemBytes,
		Params:        c.Params,
		Memory:        &pinned{lib: lib, op: c},
		Printf:        lockedWriter{},
		Cooperative:   c.Cooperative,
	}
	if race {
		l.Accesses = func(acc []ptx.Access) {
			for _, a := range acc {
				lib.NoteAccess(c.Op, a.Addr, a.Size, a.Write)
			}
		}
		l.SharedRace = func(h ptx.SharedHazard) {
			sharedRaces.Lock()
			sharedRaces.r = append(sharedRaces.r, SharedRace{Kernel: name, SharedHazard: h})
			sharedRaces.Unlock()
		}
	}
	if err := k.Run(l); err != nil {
		f, ok := err.(*ptx.Fault)
		if !ok {
			return fail(cu.CUDA_ERROR_LAUNCH_FAILED, err.Error())
		}
		e := &KernelError{Kernel: name, Result: cu.CUresult(f.Result), Msg: f.Msg, PerThread: true,
			Block: Dim3{f.Block[0], f.Block[1], f.Block[2]}, Thread: Dim3{f.Thread[0], f.Thread[1], f.Thread[2]},
			Line: f.Line, Instruction: f.Inst}
		kerrMu.Lock()
		lastErr = e
		kerrMu.Unlock()
		fmt.Fprintln(os.Stderr, e)
		return f.Result
	}
	return 0
}
