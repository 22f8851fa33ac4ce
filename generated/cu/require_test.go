//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// No strconv here: gen's tests expect that name to come only from the
// generated files' import.

// stubVersionEnv tells a child of TestRequireDriver which version its
// stand-in driver reports.
const stubVersionEnv = "GOCUDA_TEST_STUB_VERSION"

// buildVersionStub builds a stand-in driver whose cuDriverGetVersion reports
// version, or fails when version is 0.
func buildVersionStub(t *testing.T, version int) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build the stand-in driver")
	}
	src := fmt.Sprintf(`
int cuDriverGetVersion(int *v) { if (%[1]d == 0) return 3; *v = %[1]d; return 0; }
int cuInit(unsigned int flags) { return 0; }
`, version)
	dir := t.TempDir()
	c, lib := filepath.Join(dir, "stub.c"), filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, c).CombinedOutput(); err != nil {
		t.Fatalf("build stub driver: %v\n%s", err, out)
	}
	return lib
}

func TestRequireDriver(t *testing.T) {
	for _, v := range []int{11040, 12040, 13000, 0} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			lib := buildVersionStub(t, v)
			t.Setenv(stubVersionEnv, fmt.Sprint(v))
			runChild(t, "TestChildRequireDriver", lib)
		})
	}
}

func TestChildRequireDriver(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as a child of TestRequireDriver")
	}
	var installed int
	if _, err := fmt.Sscan(os.Getenv(stubVersionEnv), &installed); err != nil {
		t.Fatal(err)
	}
	for _, required := range []int{11080, 12040, 12050, 13000} {
		err := RequireDriver(required)
		if installed >= required {
			if err != nil {
				t.Errorf("RequireDriver(%d) on a driver for %d: %v", required, installed, err)
			}
			continue
		}
		var tooOld *DriverTooOldError
		if !errors.As(err, &tooOld) || !errors.Is(err, ErrDriverTooOld) || errors.Is(err, ErrNoDriver) {
			t.Fatalf("RequireDriver(%d) on a driver for %d: got %v, want a *DriverTooOldError", required, installed, err)
		}
		if tooOld.Installed != installed || tooOld.Required != required {
			t.Errorf("RequireDriver(%d): error %+v, want Installed %d, Required %d", required, tooOld, installed, required)
		}
		msg := err.Error()
		want := []string{versionString(required) + " or later"}
		if installed > 0 {
			want = append(want, "supports CUDA "+versionString(installed))
		} else {
			want = append(want, "does not report its version")
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("RequireDriver(%d): %q does not say %q", required, msg, w)
			}
		}
		t.Log(err)
	}
	if err := RequireDriver(12); err == nil || errors.Is(err, ErrDriverTooOld) || !strings.Contains(err.Error(), "12040") {
		t.Errorf("RequireDriver(12): got %v, want an error explaining the version's form", err)
	}
}

func TestRequireDriverNoDriver(t *testing.T) {
	runChild(t, "TestChildRequireDriverNoDriver", filepath.Join(t.TempDir(), "libcuda.so.1"))
}

func TestChildRequireDriverNoDriver(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as a child of TestRequireDriverNoDriver")
	}
	err := RequireDriver(11080)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrNoDriver) || errors.Is(err, ErrDriverTooOld) {
		t.Fatalf("RequireDriver without a driver: got %v, want the *LoadError", err)
	}
}

func TestSince(t *testing.T) {
	if v, ok := Since("cuMemAlloc"); !ok || v != 11080 {
		t.Errorf("Since(cuMemAlloc) = %d, %v; want 11080, true", v, ok)
	}
	if v, ok := Since("MemAlloc"); ok {
		t.Errorf("Since of a Go name = %d; want the C name only", v)
	}
	if _, ok := Since("cuNoSuchFunction"); ok {
		t.Error("Since of an unknown name is ok")
	}
	// Every version is one of the matrix, never newer than the header.
	for b := range Bindings() {
		if v, ok := Since(b.API); !ok || v != b.Since || v < 11080 || v > headerVersion || v%10 != 0 {
			t.Errorf("%s: Since = %d, %v; binding says %d, header %d", b.API, v, ok, b.Since, headerVersion)
		}
	}
}

func TestMinDriver(t *testing.T) {
	if v, err := MinDriver(); v != 0 || err != nil {
		t.Errorf("MinDriver() = %d, %v; want 0, nil", v, err)
	}
	newest, newestName := 0, ""
	var all []string
	for b := range Bindings() {
		all = append(all, b.API)
		if b.Since > newest {
			newest, newestName = b.Since, b.API
		}
	}
	if v, err := MinDriver("cuMemAlloc", newestName); err != nil || v != newest {
		t.Errorf("MinDriver(cuMemAlloc, %s) = %d, %v; want %d", newestName, v, err, newest)
	}
	if v, err := MinDriver(all...); err != nil || v != newest {
		t.Errorf("MinDriver(every function) = %d, %v; want %d", v, err, newest)
	}
	if _, err := MinDriver("cuMemAlloc", "cuNoSuchFunction", "cuNorThis"); err == nil ||
		!strings.Contains(err.Error(), "cuNoSuchFunction, cuNorThis") {
		t.Errorf("MinDriver with unknown names: %v, want an error naming them", err)
	}
}

// TestBindings holds Bindings to the generated code: each binding's Go name
// is the function that calls proc with its index.
func TestBindings(t *testing.T) {
	file := fmt.Sprintf("zcu_cuda%05d_funcs.go", headerVersion)
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	byIndex := map[int]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			lit, ok2 := call.Args[0].(*ast.BasicLit)
			if ok && ok2 && id.Name == "proc" && lit.Kind == token.INT {
				var i int
				if _, err := fmt.Sscan(lit.Value, &i); err == nil {
					byIndex[i] = fd.Name.Name
				}
			}
			return true
		})
	}
	i := 0
	for b := range Bindings() {
		if byIndex[i] != b.Name {
			t.Errorf("binding %d (%s): Go name %q, but %s calls proc(%d)", i, b.API, b.Name, byIndex[i], i)
		}
		if b.API != procTable[i].api || b.Symbol != procTable[i].symbol {
			t.Errorf("binding %d: %+v, table %+v", i, b, procTable[i])
		}
		i++
	}
	if i != len(procTable) || len(byIndex) != len(procTable) {
		t.Errorf("%d bindings, %d functions calling proc, %d in the table", i, len(byIndex), len(procTable))
	}
	for range Bindings() {
		break // the runtime panics if Bindings yields after this
	}
	for _, c := range []struct{ api, want string }{
		{"cuMemAlloc", "MemAlloc"}, {"cu_x", "X"}, {"cu2D", "X2D"}, {"cu_", "X_"}, {"cuCtxCreate_v3", "CtxCreate_v3"},
	} {
		if got := bindingName(c.api); got != c.want {
			t.Errorf("bindingName(%s) = %s, want %s", c.api, got, c.want)
		}
	}
}
