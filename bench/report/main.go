// Command report reads the RESULT lines of bench/run.sh and prints, per
// operation, the median and spread of each implementation and the ratios
// the project tracks; for the NVRTC compile, also the ratios gobench -impl
// nvrtc measured paired with C inside each process; for the GEMMs (ops
// gemm_*, TFLOP/s: gobench -impl gemm and bench/python/gemm.py), a table
// of their own with the ratios gobench -impl gemm measured paired with C.
//
// CONCURSUM lines (gobench -impl concur) and SERVICE lines (the inference
// service's load generator) get tables of their own, and with -svg DIR
// plots, concurrency.svg and service.svg, written into DIR.
//
//	go run ./bench/report < results.txt
//	go run ./bench/report -svg bench/results < results.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var (
	impls = []string{"c", "go-raw", "go-cuda", "python"}
	ops   = []string{"ctx_get_current", "event_record", "event_query", "launch_1arg", "launch_16arg",
		"launch_sync", "stream_create_destroy", "alloc_free_1mib", "h2d_64mib", "d2h_64mib", "nvrtc_compile"}
)

// gemmImpls are the GEMM table's columns, in order; an implementation
// gobench -impl gemm adds shows as a column after them.
var gemmImpls = []string{"c", "go-raw", "go-cuda", "torch"}

type key struct{ impl, op string }

var svgDir = flag.String("svg", "", "write the plots of the concurrency and service results into this directory")

func main() {
	flag.Parse()
	var extra extraResults
	defer func() { extra.print(*svgDir) }()
	samples := map[key][]float64{}
	units := map[string]string{}
	paired := map[string][]float64{} // impl: one NVRTC compile ratio to C per process

	var gemmOps []string              // in order of appearance
	gemmPaired := map[key][]float64{} // impl and op: one GEMM throughput ratio to C per process
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			fmt.Println(line)
		}
		kind, rest, _ := strings.Cut(line, " ")
		if extra.add(kind, rest, line) {
			continue
		}
		if kind != "RESULT" && kind != "NVRTC" && kind != "GEMM" {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		value := func(name string) float64 {
			v, err := strconv.ParseFloat(f[name], 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "report: bad line %q\n", line)
				os.Exit(1)
			}
			return v
		}
		if kind == "NVRTC" {
			// gobench -impl nvrtc: the medians of its per-round ratios.
			paired["go-raw"] = append(paired["go-raw"], value("raw_ratio"))
			paired["go-cuda"] = append(paired["go-cuda"], value("cuda_ratio"))
			continue
		}
		if kind == "GEMM" {
			// gobench -impl gemm: the median of its per-sample ratios to C.
			k := key{f["impl"], f["op"]}
			gemmPaired[k] = append(gemmPaired[k], value("ratio"))
			continue
		}
		k := key{f["impl"], f["op"]}
		if strings.HasPrefix(k.op, "gemm_") {
			if !slices.Contains(gemmOps, k.op) {
				gemmOps = append(gemmOps, k.op)
			}
			if !slices.Contains(gemmImpls, k.impl) {
				gemmImpls = append(gemmImpls, k.impl)
			}
		}
		samples[k] = append(samples[k], value("value"))
		units[f["op"]] = f["unit"]
	}
	if len(samples) == 0 && len(paired) == 0 && len(gemmPaired) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("| operation | unit | C | Go raw | Go cuda/ | Python | Go raw / C | cuda/ / raw | cuda/ / C | Python / Go raw | raw − C | cuda/ − raw |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, op := range ops {
		row := []string{op, units[op]}
		med := map[string]float64{}
		for _, impl := range impls {
			s := samples[key{impl, op}]
			if len(s) == 0 {
				row = append(row, "–")
				continue
			}
			m, lo, hi := stats(s)
			med[impl] = m
			row = append(row, fmt.Sprintf("%s (%s–%s, n=%d)", num(m), num(lo), num(hi), len(s)))
		}
		// Ratios read as "how many times the cost": for bandwidth, invert.
		ratio := func(a, b string) string {
			x, y := med[a], med[b]
			if x == 0 || y == 0 {
				return "–"
			}
			if units[op] == "GB/s" {
				x, y = 1/x, 1/y
			}
			return fmt.Sprintf("%.2f", x/y)
		}
		diff := func(a, b string) string {
			if med[a] == 0 || med[b] == 0 || units[op] != "ns/op" {
				return "–"
			}
			return fmt.Sprintf("%+.0f ns", med[a]-med[b])
		}
		row = append(row, ratio("go-raw", "c"), ratio("go-cuda", "go-raw"), ratio("go-cuda", "c"), ratio("python", "go-raw"), diff("go-raw", "c"), diff("go-cuda", "go-raw"))
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
	fmt.Println()
	fmt.Println("Cells: median (min–max, number of runs). Ratios compare medians as cost (time per operation; for GB/s, its inverse): below 1 means cheaper than the reference.")
	if r, c := paired["go-raw"], paired["go-cuda"]; len(r) > 0 {
		rm, rlo, rhi := stats(r)
		cm, clo, chi := stats(c)
		fmt.Println()
		fmt.Printf("nvrtc_compile paired with C in one process (per process, the median over rounds of Go/C): Go raw / C %.3f (%.3f–%.3f, n=%d), cuda/ / C %.3f (%.3f–%.3f, n=%d).\n",
			rm, rlo, rhi, len(r), cm, clo, chi, len(c))
	}
	if len(gemmOps) > 0 {
		gemmTable(gemmOps, samples, gemmPaired)
	}
}

// gemmTable prints the GEMM throughputs (TFLOP/s, higher is faster) of
// every implementation, each one's throughput over C's from the medians of
// separate processes, and, where gobench -impl gemm paired it with C
// sample by sample in one process, the median over processes of those
// paired ratios: the figure to read for Go against C.
func gemmTable(ops []string, samples map[key][]float64, paired map[key][]float64) {
	names := map[string]string{"c": "C", "go-raw": "Go raw", "go-cuda": "Go cuda/", "torch": "torch"}
	name := func(impl string) string {
		if n, ok := names[impl]; ok {
			return n
		}
		return impl
	}
	var impls, others, pairedImpls []string
	for _, impl := range gemmImpls {
		for _, op := range ops {
			if len(samples[key{impl, op}]) > 0 {
				impls = append(impls, impl)
				if impl != "c" {
					others = append(others, impl)
				}
				break
			}
		}
		for _, op := range ops {
			if len(paired[key{impl, op}]) > 0 {
				pairedImpls = append(pairedImpls, impl)
				break
			}
		}
	}
	head := []string{"GEMM", "unit"}
	for _, impl := range impls {
		head = append(head, name(impl))
	}
	for _, impl := range others {
		head = append(head, name(impl)+" / C")
	}
	for _, impl := range pairedImpls {
		head = append(head, name(impl)+" / C, paired")
	}
	fmt.Println()
	fmt.Println("| " + strings.Join(head, " | ") + " |")
	fmt.Println("|" + strings.Repeat("---|", len(head)))
	for _, op := range ops {
		row := []string{op, "TFLOP/s"}
		med := map[string]float64{}
		for _, impl := range impls {
			s := samples[key{impl, op}]
			if len(s) == 0 {
				row = append(row, "–")
				continue
			}
			m, lo, hi := stats(s)
			med[impl] = m
			row = append(row, fmt.Sprintf("%s (%s–%s, n=%d)", num(m), num(lo), num(hi), len(s)))
		}
		for _, impl := range others {
			if med[impl] == 0 || med["c"] == 0 {
				row = append(row, "–")
				continue
			}
			row = append(row, fmt.Sprintf("%.3f", med[impl]/med["c"]))
		}
		for _, impl := range pairedImpls {
			p := paired[key{impl, op}]
			if len(p) == 0 {
				row = append(row, "–")
				continue
			}
			m, lo, hi := stats(p)
			row = append(row, fmt.Sprintf("%.4f (%.4f–%.4f, n=%d)", m, lo, hi, len(p)))
		}
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
	fmt.Println()
	fmt.Println("GEMM cells: median TFLOP/s over processes (min–max, number of processes); ops are gemm_<type>_<M=N=K>. Ratios are throughput over C's (above 1: faster than C). \"/ C\" divides medians of separate processes; \"/ C, paired\" is, per process, the median of the ratios of samples taken alternately in that process (gobench -impl gemm), then the median (min–max) over processes. C is cublasSgemm (f32, tf32) or cublasGemmEx (bf16, where Go cuda/ calls cuBLASLt), and cublasLtMatmul for bf16lt and fp8, as Go raw and Go cuda/ then are; torch's fp8 is torch._scaled_mm.")
}

func stats(s []float64) (median, lo, hi float64) {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	n := len(c)
	median = c[n/2]
	if n%2 == 0 {
		median = (c[n/2-1] + c[n/2]) / 2
	}
	return median, c[0], c[n-1]
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
