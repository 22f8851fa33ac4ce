package testkernels

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyMatchesBench keeps Empty the same text as the file the C and
// Python benchmarks load, so every column measures the same kernels.
func TestEmptyMatchesBench(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "bench", "kernels", "empty.ptx"))
	if err != nil {
		t.Skipf("bench kernels not found: %v", err)
	}
	if string(b) != Empty {
		t.Fatal("Empty differs from bench/kernels/empty.ptx")
	}
}

// TestPTXAssembles runs NVIDIA's PTX assembler, where one is installed (in
// PATH or named by $PTXAS; it needs no GPU), on every kernel for the oldest
// target and for the H200's: the good kernels must assemble and Bad must not.
func TestPTXAssembles(t *testing.T) {
	ptxas := os.Getenv("PTXAS")
	if ptxas == "" {
		var err error
		if ptxas, err = exec.LookPath("ptxas"); err != nil {
			t.Skip("no ptxas in PATH and PTXAS unset: the PTX is checked by the driver's JIT in the GPU tests")
		}
	}
	dir := t.TempDir()
	for _, k := range []struct {
		name, ptx string
		ok        bool
	}{{"vadd", VectorAdd, true}, {"empty", Empty, true}, {"bad", Bad, false}} {
		src := filepath.Join(dir, k.name+".ptx")
		if err := os.WriteFile(src, []byte(k.ptx), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, arch := range []string{"sm_75", "sm_90"} {
			out, err := exec.Command(ptxas, "-arch="+arch, "-o", filepath.Join(dir, k.name+"."+arch+".cubin"), src).CombinedOutput()
			switch {
			case k.ok && err != nil:
				t.Errorf("ptxas -arch=%s %s: %v\n%s", arch, k.name, err, out)
			case !k.ok && err == nil:
				t.Errorf("ptxas -arch=%s accepted %s", arch, k.name)
			case !k.ok && !strings.Contains(string(out), "undeclared"):
				t.Logf("ptxas -arch=%s %s: %s", arch, k.name, out)
			}
		}
	}
}
