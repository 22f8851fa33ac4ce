package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
)

// TestMain picks the driver as package cuda's tests do
// (GOCUDA_TEST_DRIVER): fake for the fake driver, which interprets the
// kernels' PTX and has a fake cuBLASLt; real for the GPU's; unset, the
// GPU's where there is one, else the fake.
func TestMain(m *testing.M) {
	switch os.Getenv("GOCUDA_TEST_DRIVER") {
	case "fake":
		if _, err := cudatest.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, "inference tests:", err)
			os.Exit(2)
		}
	case "real", "none":
	default:
		cudatest.SetupIfNoDriver()
	}
	useCachedNVRTC()
	code := m.Run()
	// With FAKECUDA_RACE=1 the fake driver checks the device work for
	// races between streams and the host.
	if n := cudatest.ReportRaces(os.Stderr); n > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d CUDA data race(s)\n", n)
		code = 1
	}
	os.Exit(code)
}

// useCachedNVRTC points GOCUDA_LIBNVRTC, unless it is set, at the NVRTC
// library of the bindings' major version that make headers caches, where
// there is one: on a machine without a toolkit, the kernels compile with it.
func useCachedNVRTC() {
	if os.Getenv(rawnvrtc.LibraryEnv) != "" {
		return
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return
	}
	major := rawnvrtc.HeaderVersion() / 1000
	libs, _ := filepath.Glob(filepath.Join(home, ".cache/gocuda/headers/*/lib/libnvrtc.so."+strconv.Itoa(major)))
	if len(libs) > 0 {
		os.Setenv(rawnvrtc.LibraryEnv, libs[len(libs)-1])
	}
}

// testConfig is the model the tests run: the service's default shape on a
// GPU, a small one on the fake driver, which multiplies on the host and
// interprets the kernels.
func testConfig(t *testing.T) Config {
	t.Helper()
	if err := cu.Init(0); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if err := rawnvrtc.Load(); err != nil {
		if os.Getenv("GOCUDA_TEST_NVRTC") == "required" {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: no NVRTC library: %v", err)
		}
		t.Skipf("no NVRTC library to compile the kernels (set %s): %v", rawnvrtc.LibraryEnv, err)
	}
	if cudatest.Active() {
		return Config{D: 64, Layers: 2, MaxBatch: 4, Seed: 7}
	}
	return Config{D: 1024, Layers: 4, MaxBatch: 32, Seed: 7}
}

func newTestModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	m, err := NewModel(0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// bf rounds to bfloat16, as the GPU stores.
func bf(v float64) float64 { return float64(cuda.ToBFloat16(float32(v)).Float32()) }

func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// reference is the model's output for in, computed on the CPU in float64
// with the GPU's roundings to bfloat16.
func reference(layers []Layer, in []float32) []float32 {
	d := len(in)
	x := make([]float64, d)
	for j, v := range in {
		x[j] = bf(float64(v))
	}
	h, y := make([]float64, 4*d), make([]float64, d)
	for _, l := range layers {
		matvec(h, x, l.W1)
		for c := range h {
			h[c] = bf(gelu(h[c] + float64(l.B1[c].Float32())))
		}
		matvec(y, h, l.W2)
		var mean, sq float64
		for c := range y {
			y[c] = x[c] + bf(y[c]+float64(l.B2[c].Float32()))
			mean += y[c]
		}
		mean /= float64(d)
		for _, v := range y {
			sq += (v - mean) * (v - mean)
		}
		rstd := 1 / math.Sqrt(sq/float64(d)+Eps)
		for c, v := range y {
			x[c] = bf((v-mean)*rstd*float64(l.Gamma[c]) + float64(l.Beta[c]))
		}
	}
	out := make([]float32, d)
	for j, v := range x {
		out[j] = float32(v)
	}
	return out
}

// matvec sets out to v·w, w row-major with len(v) rows.
func matvec(out, v []float64, w []cuda.BFloat16) {
	clear(out)
	for k, a := range v {
		row := w[k*len(out) : (k+1)*len(out)]
		for c, b := range row {
			out[c] += a * float64(b.Float32())
		}
	}
}

// inputs returns n different requests of d floats.
func inputs(n, d int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	in := make([][]float32, n)
	for i := range in {
		in[i] = make([]float32, d)
		for j := range in[i] {
			in[i][j] = float32(r.NormFloat64())
		}
	}
	return in
}

// checkRow fails t unless got is want within bfloat16's rounding, which
// a few layers spread: elements of the output are of order 1, and a
// bfloat16 holds 8 bits of one.
func checkRow(t *testing.T, what string, got, want []float32) float64 {
	t.Helper()
	var worst, sum float64
	for j := range want {
		e := math.Abs(float64(got[j] - want[j]))
		if !(e <= 0.05+0.02*math.Abs(float64(want[j]))) {
			t.Errorf("%s: element %d is %v, the CPU's %v", what, j, got[j], want[j])
			return e
		}
		worst, sum = max(worst, e), sum+e
	}
	if mean := sum / float64(len(want)); mean > 0.01 {
		t.Errorf("%s: mean error %.3g against the CPU (largest %.3g)", what, mean, worst)
	}
	return worst
}

func TestModelMatchesCPUReference(t *testing.T) {
	cfg := testConfig(t)
	m := newTestModel(t, cfg)
	in := inputs(cfg.MaxBatch, cfg.D, 1)
	want := make([][]float32, len(in))
	for i := range in {
		want[i] = reference(m.Layers, in[i])
	}
	// Batches of 1, 3 and the most: each row must get its own input's
	// output, whatever its batch.
	var worst float64
	for _, rows := range [][]int{{2}, {0, 1, 2}, nil} {
		var bin, bout [][]float32
		var which []int
		for i := range in {
			if rows == nil || contains(rows, i) {
				bin, bout, which = append(bin, in[i]), append(bout, make([]float32, cfg.D)), append(which, i)
			}
		}
		if err := m.Forward(bin, bout); err != nil {
			t.Fatal(err)
		}
		for r, i := range which {
			worst = max(worst, checkRow(t, fmt.Sprintf("batch of %d, row %d (input %d)", len(bin), r, i), bout[r], want[i]))
		}
	}
	t.Logf("width %d, %d layers: largest difference from the CPU %.3g", cfg.D, cfg.Layers, worst)
	if err := m.Forward(nil, nil); err == nil {
		t.Error("an empty batch ran")
	}
	if err := m.Forward(in[:1], [][]float32{make([]float32, cfg.D-1)}); err == nil {
		t.Error("a batch with a short output row ran")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Forward(in[:1], [][]float32{make([]float32, cfg.D)}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Forward after Close: %v, want ErrClosed", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestServiceAnswersEachRequestItsOwnRow sends concurrent requests
// through the HTTP handler and the batcher to the model.
func TestServiceAnswersEachRequestItsOwnRow(t *testing.T) {
	cfg := testConfig(t)
	m := newTestModel(t, cfg)
	b := NewBatcher(cfg.MaxBatch, 200*time.Millisecond, m.Forward)
	start(t, b)
	srv := httptest.NewServer(Handler(b, cfg.D))
	defer srv.Close()

	n := 2 * cfg.MaxBatch
	in := inputs(n, cfg.D, 2)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body, _ := binary.Append(nil, binary.LittleEndian, in[i])
			resp, err := http.Post(srv.URL+"/infer", "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK || len(raw) != 4*cfg.D {
				t.Errorf("request %d: %s, %d bytes (%v)", i, resp.Status, len(raw), err)
				return
			}
			got := make([]float32, cfg.D)
			binary.Decode(raw, binary.LittleEndian, got)
			checkRow(t, fmt.Sprintf("request %d", i), got, reference(m.Layers, in[i]))
		})
	}
	wg.Wait()

	var stats struct{ Requests, Batches int64 }
	getJSON(t, srv.URL+"/stats", &stats)
	if stats.Requests != int64(n) || stats.Batches < 2 || stats.Batches >= int64(n) {
		t.Errorf("stats %+v: want %d requests in fewer batches, at least 2", stats, n)
	}
	resp, err := http.Post(srv.URL+"/infer", "application/octet-stream", bytes.NewReader(make([]byte, 4*cfg.D-4)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a short body: %s, want 400", resp.Status)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(errors.Join(fmt.Errorf("%s: %s", url, resp.Status), err))
	}
}
