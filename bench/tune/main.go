// Command tune measures what autotuning buys on GEMM shapes of the kind
// inference servers run: for each shape, cuda/blas's Tune times cuBLASLt's
// candidate algorithms, interleaved in one process, and the result is the
// tuned algorithm's median against the heuristic's first choice (what a C
// program calling cuBLASLt gets). By default Tune also searches cuBLASLt's
// algorithms beyond the heuristic's (tiles, stages, split-K: -search
// configurations, 0 for the heuristic's alone). It prints one RESULT line
// per shape and a summary; bench/python/tune.py times torch.matmul on the
// same shapes.
//
//	go run ./bench/tune [-runs 30] [-search 96] [-plans plans.json]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
)

// shape is C[M×N] = A[M×K]·Wᵀ with W stored N×K, bfloat16 in and out.
type shape struct{ m, k, n int }

// shapes: decode steps (M of 1 to 16 tokens) against the projections of
// 4k- and 8k-wide models, and square ones.
var shapes = []shape{
	{1, 4096, 4096}, {1, 4096, 14336}, {1, 14336, 4096}, {1, 8192, 8192},
	{4, 4096, 4096}, {4, 4096, 14336}, {8, 4096, 4096}, {8, 8192, 28672},
	{16, 4096, 4096}, {16, 4096, 14336}, {16, 14336, 4096}, {16, 8192, 8192},
	{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
}

func main() {
	runs := flag.Int("runs", 30, "timed rounds per shape (each times every candidate once)")
	candidates := flag.Int("candidates", 16, "algorithms asked of the heuristic")
	search := flag.Int("search", 96, "configurations from cuBLASLt's algorithm search besides the heuristic's (0: none)")
	finalists := flag.Int("finalists", 8, "with -search: candidates re-timed in the second pass besides the default")
	plansOut := flag.String("plans", "", "write the tuned plans here (JSON)")
	flag.Parse()
	log.SetFlags(0)
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		log.Fatalf("tune: no GPU: %v", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	must(err)
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	must(err)
	defer s.Close()
	lt, err := blas.NewLt(s)
	must(err)
	defer lt.Close()
	name, _ := devs[0].Name()
	fmt.Printf("# tune: %s, bfloat16 in and out, float32 accumulate; %d rounds, up to %d candidates from the heuristic and %d from the search\n", name, *runs, *candidates, *search)
	var plans []blas.Plan
	wins, slower := 0, 0
	for _, sh := range shapes {
		alloc := func(n int) *cuda.DeviceMemory {
			m, err := cuda.Alloc(ctx, n*2)
			must(err)
			must(m.MemsetD16(0x3c00)) // small values, no overflow
			return m
		}
		a, w, c := alloc(sh.m*sh.k), alloc(sh.n*sh.k), alloc(sh.m*sh.n)
		mm := blas.Matmul{
			A:     blas.Matrix{Mem: a, Rows: sh.m, Cols: sh.k},
			B:     blas.Matrix{Mem: w, Rows: sh.n, Cols: sh.k}.T(),
			C:     blas.Matrix{Mem: c, Rows: sh.m, Cols: sh.n},
			AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
		}
		// Small shapes take microseconds: time a batch per sample.
		batch := max(1, int(2e9/float64(2*sh.m*sh.k*sh.n)))
		batch = min(batch, 50)
		opt := blas.TuneOptions{Candidates: *candidates, Runs: *runs, Batch: batch, Search: *search, Finalists: *finalists}
		p, err := lt.Tune(mm, 1, 0, opt)
		must(err)
		plans = append(plans, *p)
		// Tune picked the lowest of many noisy medians: time its choice
		// against the default again, in a run of their own.
		algos, err := lt.Algorithms(mm, *candidates)
		must(err)
		fromSearch := true // the tuned algorithm is none of the heuristic's
		for _, a := range algos {
			if a.Data == p.Algo.Data {
				fromSearch = false
			}
		}
		med, err := lt.Time(mm, 1, 0, []blas.Algo{algos[0], p.Algo}, opt)
		must(err)
		ratio := float64(med[0]) / float64(med[1])
		if ratio >= 1.03 {
			wins++
		}
		if ratio < 0.97 {
			slower++
		}
		flops := 2 * float64(sh.m) * float64(sh.k) * float64(sh.n)
		fmt.Printf("RESULT impl=go-tuned op=gemm_bf16_m%d_k%d_n%d value=%.3f unit=us default_us=%.3f speedup=%.4f candidates=%d searched=%d tuned_tflops=%.1f default_tflops=%.1f same_algo=%v from_search=%v\n",
			sh.m, sh.k, sh.n, med[1].Seconds()*1e6, med[0].Seconds()*1e6, ratio, p.Candidates, p.Searched,
			flops/med[1].Seconds()/1e12, flops/med[0].Seconds()/1e12, p.Algo.Data == algos[0].Data, fromSearch)
		for _, m := range []*cuda.DeviceMemory{a, w, c} {
			must(m.Close())
		}
	}
	fmt.Printf("# re-timed against the default: tuned ≥ 3%% faster on %d of %d shapes, ≥ 3%% slower on %d\n", wins, len(shapes), slower)
	if *plansOut != "" {
		f, err := os.Create(*plansOut)
		must(err)
		must(blas.SavePlans(f, plans))
		must(f.Close())
	}
}

func must(err error) {
	if err != nil {
		log.Fatalf("tune: %v", err)
	}
}
