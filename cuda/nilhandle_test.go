package cuda

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// The handle types, each as a nil pointer and as a pointer to a zero value.
// A new handle type must be added here; TestHandleFunctionsCovered finds
// functions that take one.
func handleValues() []struct {
	name       string
	nilv, zero any
} {
	return []struct {
		name       string
		nilv, zero any
	}{
		{"Context", (*Context)(nil), new(Context)},
		{"Stream", (*Stream)(nil), new(Stream)},
		{"Event", (*Event)(nil), new(Event)},
		{"DeviceMemory", (*DeviceMemory)(nil), new(DeviceMemory)},
		{"HostBuffer", (*HostBuffer[float32])(nil), new(HostBuffer[float32])},
		{"Module", (*Module)(nil), new(Module)},
		{"Kernel", (*Kernel)(nil), new(Kernel)},
		{"Args", (*Args)(nil), new(Args)},
		{"Graph", (*Graph)(nil), new(Graph)},
		{"GraphExec", (*GraphExec)(nil), new(GraphExec)},
		{"MemPool", (*MemPool)(nil), new(MemPool)},
		{"ManagedMemory", (*ManagedMemory)(nil), new(ManagedMemory)},
		{"LibraryObject", (*LibraryObject[uintptr])(nil), new(LibraryObject[uintptr])},
		{"Slice", (*Slice[float32])(nil), new(Slice[float32])},
		{"PhysicalMemory", (*PhysicalMemory)(nil), new(PhysicalMemory)},
		{"AddressRange", (*AddressRange)(nil), new(AddressRange)},
	}
}

var errorType = reflect.TypeFor[error]()

// call calls fn (a method value or function) with zero arguments and
// returns its error results, or the panic it raised.
func call(fn reflect.Value) (errs []error, panicked any) {
	defer func() { panicked = recover() }()
	ft := fn.Type()
	in := make([]reflect.Value, ft.NumIn())
	for i := range in {
		t := ft.In(i)
		if ft.IsVariadic() && i == ft.NumIn()-1 {
			in[i] = reflect.MakeSlice(t, 0, 0)
			continue
		}
		in[i] = reflect.Zero(t)
	}
	var out []reflect.Value
	if ft.IsVariadic() {
		out = fn.CallSlice(in)
	} else {
		out = fn.Call(in)
	}
	for i, v := range out {
		if ft.Out(i) == errorType {
			err, _ := v.Interface().(error)
			errs = append(errs, err)
		}
	}
	return errs, nil
}

// TestNilAndZeroHandles walks every exported method of every handle type,
// on a nil handle and on a zero value: none may panic, and every error it
// returns must match ErrClosed. None reaches the driver.
func TestNilAndZeroHandles(t *testing.T) {
	methods := 0
	for _, h := range handleValues() {
		for _, recv := range []struct {
			how string
			v   any
		}{{"nil", h.nilv}, {"zero", h.zero}} {
			v := reflect.ValueOf(recv.v)
			for i := range v.NumMethod() {
				name := v.Type().Method(i).Name
				errs, p := call(v.Method(i))
				what := fmt.Sprintf("(%s %s).%s", recv.how, h.name, name)
				if p != nil {
					t.Errorf("%s panicked: %v", what, p)
					continue
				}
				methods++
				for _, err := range errs {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("%s = %v, want an error matching ErrClosed", what, err)
					}
					// A nil handle is not a closed one: the error says which.
					if err != nil && recv.how == "nil" && !strings.Contains(err.Error(), "nil") {
						t.Errorf("%s = %v, want an error saying nil", what, err)
					}
				}
			}
		}
	}
	if methods < 100 {
		t.Errorf("only %d methods called: the walk lost its types", methods)
	}
}

// handleFuncCalls calls every exported function that takes a handle, with
// nil handles and zero handles and otherwise valid arguments.
func handleFuncCalls(t *testing.T) map[string][]error {
	file := filepath.Join(t.TempDir(), "m.ptx")
	must(t, os.WriteFile(file, []byte("x"), 0o600))
	f, err := os.Open(file)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	calls := map[string][]error{}
	add := func(name string, errs ...error) { calls[name] = append(calls[name], errs...) }
	second := func(_ any, err error) error { return err }
	for _, z := range []struct {
		ctx  *Context
		s    *Stream
		e    *Event
		m    *DeviceMemory
		h    *HostBuffer[float32]
		args *Args
		pool *MemPool
		mm   *ManagedMemory
		sl   *Slice[float32]
	}{
		{},
		{new(Context), new(Stream), new(Event), new(DeviceMemory), new(HostBuffer[float32]), new(Args), new(MemPool), new(ManagedMemory), new(Slice[float32])},
	} {
		add("NewStream", second(NewStream(z.ctx)))
		add("NewStreamWithPriority", second(NewStreamWithPriority(z.ctx, 0)))
		add("WrapStream", second(WrapStream(z.ctx, cu.CUstream(0x1000))))
		add("NewEvent", second(NewEvent(z.ctx)))
		add("Elapsed", second(Elapsed(z.e, z.e)))
		add("Alloc", second(Alloc(z.ctx, 16)))
		add("AllocFrom", second(AllocFrom(z.ctx, []float32{1})))
		add("AllocAsync", second(AllocAsync(z.s, 16)))
		add("AllocHost", second(AllocHost[float32](z.ctx, 16)))
		add("RegisterHost", second(RegisterHost(z.ctx, []float32{1})))
		add("CopyToDevice", CopyToDevice(z.m, []float32{1}))
		add("CopyFromDevice", CopyFromDevice([]float32{1}, z.m))
		add("CopyToDeviceAsync", CopyToDeviceAsync(z.s, z.m, z.h))
		add("CopyFromDeviceAsync", CopyFromDeviceAsync(z.s, z.h, z.m))
		add("CopyDevice", CopyDevice(z.m, z.m))
		add("CopyDeviceAsync", CopyDeviceAsync(z.s, z.m, z.m))
		add("LoadModule", second(LoadModule(z.ctx, []byte("x"))))
		add("LoadModuleFile", second(LoadModuleFile(z.ctx, file)))
		add("EnablePeerAccess", EnablePeerAccess(z.ctx, z.ctx))
		add("DisablePeerAccess", DisablePeerAccess(z.ctx, z.ctx))
		add("SetArg", SetArg(z.args, 0, int32(1)))
		add("AllocFromPool", second(AllocFromPool(z.s, z.pool, 16)))
		add("AllocManaged", second(AllocManaged(z.ctx, 16, AttachGlobal)))
		add("AllocManagedOf", second(AllocManagedOf[float32](z.ctx, 4, AttachGlobal)))
		add("ManagedSlice", second(ManagedSlice[float32](z.mm)))
		add("AccessManaged", AccessManaged(z.mm, func([]float32) error { return nil }))
		add("SliceOf", second(SliceOf[float32](z.m)))
		add("AllocSlice", second(AllocSlice[float32](z.ctx, 16)))
		add("AllocSliceFrom", second(AllocSliceFrom(z.ctx, []float32{1})))
		add("CopySlice", CopySlice(z.sl, z.sl))
		add("CopySliceAsync", CopySliceAsync(z.s, z.sl, z.sl))
		zg := (*Graph)(nil)
		if z.ctx != nil {
			zg = new(Graph)
		}
		add("NewGraph", second(NewGraph(z.ctx)))
		add("AddFill", second(AddFill(zg, nil, z.sl, 1)))
		_, _, err := AddMemAlloc[float32](zg, nil, 4)
		add("AddMemAlloc", err)
		add("AddMemFree", second(AddMemFree(zg, nil, z.sl)))
		add("CopyPeer", CopyPeer(z.m, z.m))
		add("CopyPeerAsync", CopyPeerAsync(z.s, z.m, z.m))
		add("CopySlicePeer", CopySlicePeer(z.sl, z.sl))
		add("CopySlicePeerAsync", CopySlicePeerAsync(z.s, z.sl, z.sl))
		add("NewLibraryObject", second(NewLibraryObject(z.s,
			func() (uintptr, error) { return 1, nil }, func(uintptr) error { return nil })))
		add("ImportIPC", second(ImportIPC(z.ctx, IPCMemHandle{})))
		add("ImportIPCSlice", second(ImportIPCSlice[float32](z.ctx, IPCMemHandle{})))
		add("ImportIPCEvent", second(ImportIPCEvent(z.ctx, IPCEventHandle{})))
		add("ImportMemPool", second(ImportMemPool(z.ctx, f)))
		add("ImportPoolPointer", second(ImportPoolPointer(z.ctx, z.pool, PoolPointer{})))
		add("NewPhysicalMemory", second(NewPhysicalMemory(z.ctx, 1<<21)))
		add("ImportPhysicalMemory", second(ImportPhysicalMemory(z.ctx, f, 1<<21)))
		add("ReserveAddressRange", second(ReserveAddressRange(z.ctx, 1<<21, 0)))
		add("NewGrowableSlice", second(NewGrowableSlice[float32](z.ctx, 16)))
	}
	for _, r := range []*AddressRange{nil, new(AddressRange)} {
		add("RangeSlice", second(RangeSlice[float32](r, 0, 1)))
	}
	return calls
}

// TestHandleFunctionsCovered finds, in the package's source, every exported
// function that takes a handle, so that a new one cannot be left out of
// handleFuncCalls; each must return ErrClosed for nil and zero handles.
func TestHandleFunctionsCovered(t *testing.T) {
	var typeNames []string
	for _, h := range handleValues() {
		typeNames = append(typeNames, h.name)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	must(t, err)
	var takers []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		must(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !fd.Name.IsExported() {
				continue
			}
			for _, p := range fd.Type.Params.List {
				ts := types.ExprString(p.Type)
				if slices.ContainsFunc(typeNames, func(n string) bool {
					return strings.HasPrefix(ts, "*"+n) && (len(ts) == len(n)+1 || ts[len(n)+1] == '[')
				}) {
					takers = append(takers, fd.Name.Name)
					break
				}
			}
		}
	}
	calls := handleFuncCalls(t)
	for _, name := range takers {
		errs, ok := calls[name]
		if !ok {
			t.Errorf("%s takes a handle but is not called with nil and zero handles in handleFuncCalls", name)
			continue
		}
		for i, err := range errs {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s with %s handles = %v, want an error matching ErrClosed", name, []string{"nil", "zero"}[i], err)
			}
			if i == 0 && err != nil && !strings.Contains(err.Error(), "nil") {
				t.Errorf("%s with nil handles = %v, want an error saying nil", name, err)
			}
		}
	}
	if len(takers) < 15 {
		t.Errorf("found only %d functions taking handles: %v", len(takers), takers)
	}
}
