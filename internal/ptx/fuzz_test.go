package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzPTX feeds the parser, the compiler and the interpreter mutated PTX:
// each must return (a module, a kernel, a run's end or fault) or an
// error, never crash, and never run past the step bound.
func FuzzPTX(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.ptx")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p){ .reg .b32 %r<3>; $L: add.s32 %r1, %r1, 1; bra $L; }")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		m, err := Parse(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse: an error of type %T: %v", err, err)
			}
			return
		}
		var mem hostMem
		defer mem.free()
		buf := mem.alloc(4096)
		for _, name := range m.Entries() {
			k, err := m.Kernel(name)
			if err != nil {
				continue
			}
			params := make([]byte, k.ParamSize()+64)
			for i := 0; i+8 <= len(params); i += 8 {
				putBytes(params[i:], 8, addrOf(buf))
			}
			l := &Launch{Grid: [3]uint32{2, 1, 1}, Block: [3]uint32{40, 1, 1}, DynamicShared: 256, Params: params, Memory: &mem, MaxSteps: 20000, Cooperative: true}
			if err := k.Run(l); err != nil {
				var fault *Fault
				if !errors.As(err, &fault) {
					t.Fatalf("Run: an error of type %T: %v", err, err)
				}
			}
			if l.ThreadInstructions > 2*40*20000*32 {
				t.Fatalf("%d thread-instructions past the bound", l.ThreadInstructions)
			}
		}
	})
}
