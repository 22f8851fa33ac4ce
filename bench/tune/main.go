// Command tune measures what autotuning buys on GEMM shapes of the kind
// inference servers run: for each shape, cuda/blas's Tune times cuBLASLt's
// candidates (the heuristic's, in column and row order, and by default
// those of the search: split-K, reduction, swizzling, custom option and
// cluster neighbours of the heuristic's best, then other algorithm ids),
// interleaved in one process; the chosen plan is then re-timed against the
// heuristic's first choice (what a C program calling cuBLASLt gets) in a
// run of their own, paired round by round.
//
// By default each sample is a CUDA graph of a batch of multiplies, so that
// the GPU runs them back to back, as in an inference server's decode step:
// enqueued one by one, a multiply of a few microseconds is timed at the
// rate the host enqueues them (-graph=false does that, as earlier runs
// did).
//
// It prints, per shape, a RESULT line (default and tuned medians, their
// ratio, what won, torch.matmul's median from -torch) and, per shape, the
// host time to enqueue one multiply through LtHandle.Run and through a
// prepared LtPlan; then a table. bench/python/tune.py times torch.matmul
// on the same shapes, the same way: run it first and give its output to
// -torch.
//
//	/opt/torch/.venv/bin/python bench/python/tune.py > torch.txt
//	tune [-runs 30] [-search 256] [-graph=true] [-torch torch.txt] [-plans plans.json]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
)

// shape is C[M×N] = A[M×K]·Wᵀ with W stored N×K, bfloat16 in and out.
type shape struct{ m, k, n int }

func (s shape) op() string { return fmt.Sprintf("gemm_bf16_m%d_k%d_n%d", s.m, s.k, s.n) }

// shapes: decode steps (M of 1 to 16 tokens) against the projections of
// 4k- and 8k-wide models, and square ones.
var shapes = []shape{
	{1, 4096, 4096}, {1, 4096, 14336}, {1, 14336, 4096}, {1, 8192, 8192},
	{4, 4096, 4096}, {4, 4096, 14336}, {8, 4096, 4096}, {8, 8192, 28672},
	{16, 4096, 4096}, {16, 4096, 14336}, {16, 14336, 4096}, {16, 8192, 8192},
	{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
}

func main() {
	runs := flag.Int("runs", 30, "timed rounds per pass (each times every candidate once)")
	candidates := flag.Int("candidates", 16, "algorithms asked of the heuristic, per formulation")
	search := flag.Int("search", 256, "configurations from the search besides the heuristic's (0: none)")
	neighbors := flag.Int("neighbors", 4, "with -search: heuristic candidates per formulation whose neighbours are searched")
	finalists := flag.Int("finalists", 8, "with -search: candidates re-timed in the second pass besides the default")
	final := flag.Int("final", 3, "candidates re-timed against the default in the final pass")
	graph := flag.Bool("graph", true, "time each sample as one CUDA graph of a batch of multiplies")
	forms := flag.String("formulations", "col,row", "formulations tried: col, row")
	plansOut := flag.String("plans", "", "write the tuned plans here (JSON)")
	torchFile := flag.String("torch", "", "RESULT lines of bench/python/tune.py, printed beside")
	flag.Parse()
	log.SetFlags(0)
	torch := readTorch(*torchFile)
	var formulations []blas.Formulation
	for _, f := range strings.Split(*forms, ",") {
		switch strings.TrimSpace(f) {
		case "col":
			formulations = append(formulations, blas.ColumnOrder)
		case "row":
			formulations = append(formulations, blas.RowOrder)
		default:
			log.Fatalf("tune: unknown formulation %q", f)
		}
	}
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
	fmt.Printf("# tune: %s, bfloat16 in and out, float32 accumulate; %d rounds, %d candidates per formulation (%s) from the heuristic, %d from the search, graph=%v, workspace %d MiB for default and candidates alike\n",
		name, *runs, *candidates, *forms, *search, *graph, blas.LtWorkspace>>20)
	type row struct {
		sh                shape
		def, tuned, ratio float64
		won               string
		torch             float64
		hostRun, hostPlan float64
	}
	var rows []row
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
		opt := blas.TuneOptions{Candidates: *candidates, Runs: *runs, Batch: batch, Graph: *graph, Formulations: formulations,
			Search: *search, Neighbors: *neighbors, Finalists: *finalists, Final: *final}
		p, err := lt.Tune(mm, 1, 0, opt)
		must(err)
		plans = append(plans, *p)
		// Tune picked the fastest of many noisy medians: time its choice
		// against the default again, in a run of their own.
		def, err := lt.DefaultPlan(mm)
		must(err)
		algos, err := lt.AlgorithmsFor(mm, p.Formulation, *candidates)
		must(err)
		fromSearch := !slices.ContainsFunc(algos, func(a blas.Algo) bool { return a.Data == p.Algo.Data })
		times, err := lt.TimePlans(mm, 1, 0, []blas.Plan{*def, *p}, opt)
		must(err)
		dmed, tmed := median(times[0]), median(times[1])
		paired := make([]float64, len(times[0]))
		for r := range paired {
			paired[r] = float64(times[0][r]) / float64(times[1][r])
		}
		slices.Sort(paired)
		ratio := paired[len(paired)/2]
		if ratio >= 1.03 {
			wins++
		}
		if ratio < 0.97 {
			slower++
		}
		same := p.Algo.Data == def.Algo.Data && p.Formulation == def.Formulation
		won := "default"
		if !same {
			origin := "heuristic"
			if fromSearch {
				origin = "search"
			}
			won = fmt.Sprintf("%v/%s %v", p.Formulation, origin, p.Config)
		}
		hostRun, hostPlan := hostCost(lt, mm, p)
		flops := 2 * float64(sh.m) * float64(sh.k) * float64(sh.n)
		tu, ok := torch[sh.op()]
		torchStr := "n/a"
		if ok {
			torchStr = fmt.Sprintf("%.3f", tu)
		}
		fmt.Printf("RESULT impl=go-tuned op=%s value=%.3f unit=us default_us=%.3f speedup=%.4f paired_speedup=%.4f torch_us=%s candidates=%d searched=%d tuned_tflops=%.1f default_tflops=%.1f same_algo=%v formulation=%v from_search=%v config=%q\n",
			sh.op(), us(tmed), us(dmed), float64(dmed)/float64(tmed), ratio, torchStr, p.Candidates, p.Searched,
			flops/tmed.Seconds()/1e12, flops/dmed.Seconds()/1e12, same, p.Formulation, fromSearch, p.Config.String())
		fmt.Printf("INFO op=%s host_us_per_gemm_run=%.2f host_us_per_gemm_plan=%.2f gpu_us_per_gemm=%.2f\n", sh.op(), hostRun, hostPlan, us(tmed))
		rows = append(rows, row{sh, us(dmed), us(tmed), ratio, won, tu, hostRun, hostPlan})
		for _, m := range []*cuda.DeviceMemory{a, w, c} {
			must(m.Close())
		}
	}
	fmt.Printf("# re-timed against the default (median of per-round ratios): tuned ≥ 3%% faster on %d of %d shapes, ≥ 3%% slower on %d\n", wins, len(shapes), slower)
	fmt.Println("#")
	fmt.Println("# | M×K×N | default µs | tuned µs | default/tuned (paired) | won | torch µs | host µs Run / LtPlan |")
	fmt.Println("# |---|---|---|---|---|---|---|")
	for _, r := range rows {
		t := "n/a"
		if r.torch > 0 {
			t = fmt.Sprintf("%.2f", r.torch)
		}
		fmt.Printf("# | %d×%d×%d | %.2f | %.2f | %.3f | %s | %s | %.2f / %.2f |\n", r.sh.m, r.sh.k, r.sh.n, r.def, r.tuned, r.ratio, r.won, t, r.hostRun, r.hostPlan)
	}
	if *plansOut != "" {
		f, err := os.Create(*plansOut)
		must(err)
		must(blas.SavePlans(f, plans))
		must(f.Close())
	}
}

// hostCost is the host time, in µs, to enqueue one multiply through
// LtHandle.Run (heuristic's choice, cached after its first call) and
// through an LtPlan of p: the least of three bursts of 8 on an idle
// stream, so that the queue never fills.
func hostCost(lt *blas.LtHandle, mm blas.Matmul, p *blas.Plan) (run, plan float64) {
	lp, err := lt.Prepare(mm, p)
	must(err)
	defer lp.Close()
	s := lt.Stream()
	burst := func(f func() error) float64 {
		best := time.Duration(1 << 62)
		for range 3 {
			must(s.Synchronize())
			t0 := time.Now()
			for range 8 {
				must(f())
			}
			best = min(best, time.Since(t0))
		}
		must(s.Synchronize())
		return us(best) / 8
	}
	must(lt.Run(mm, 1, 0, nil)) // fills Run's cache
	must(lp.Run(mm, 1, 0))
	run = burst(func() error { return lt.Run(mm, 1, 0, nil) })
	plan = burst(func() error { return lp.Run(mm, 1, 0) })
	return run, plan
}

// readTorch reads the RESULT lines of bench/python/tune.py: op → µs.
func readTorch(path string) map[string]float64 {
	out := map[string]float64{}
	if path == "" {
		return out
	}
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "RESULT" {
			continue
		}
		kv := map[string]string{}
		for _, fld := range fields[1:] {
			if k, v, ok := strings.Cut(fld, "="); ok {
				kv[k] = v
			}
		}
		if v, err := strconv.ParseFloat(kv["value"], 64); err == nil && kv["impl"] == "torch" {
			out[kv["op"]] = v
		}
	}
	must(sc.Err())
	return out
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) float64 { return d.Seconds() * 1e6 }

func must(err error) {
	if err != nil {
		log.Fatalf("tune: %v", err)
	}
}
