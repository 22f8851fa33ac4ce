package libtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// RealAndFake runs run on the GPU and its library, then again in a child
// process of the test binary on the fake driver and the fake library, and
// returns both results for t to compare. The child is t's own test run
// with childEnv set to the file it writes its result to (as JSON), and the
// driver's and libEnv's paths emptied, so that the package's TestMain,
// seeing childEnv, sets the fakes up. In the child RealAndFake returns
// ok false once it has written; so does the parent where there is no GPU
// (it skips t: the comparison needs the real library). lib names the
// library in messages; fakeActive reports whether the fake is the one
// loaded.
func RealAndFake[R any](t *testing.T, lib, childEnv, libEnv string, fakeActive func() bool, run func(*testing.T) R) (real, fake R, ok bool) {
	t.Helper()
	if path := os.Getenv(childEnv); path != "" {
		if !fakeActive() {
			t.Fatalf("the child process did not load the fake %s", lib)
		}
		data, err := json.Marshal(run(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return real, fake, false
	}
	if cudatest.Active() {
		t.Skipf("compares the fake %s with the real one: needs a GPU and %s", lib, lib)
	}
	real = run(t)
	path := filepath.Join(t.TempDir(), "fake.json")
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+path, "GOCUDA_LIBCUDA=", libEnv+"=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child on the fakes: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fake); err != nil {
		t.Fatal(err)
	}
	return real, fake, true
}
