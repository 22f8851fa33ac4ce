package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The concurrency benchmark (gobench -impl concur) prints one CONCURSUM
// line per scenario, worker count and implementation; the inference
// service's load generator (examples/inference/loadgen) one RESULT line
// with a mode= field per implementation and load: open loop at a target
// rate, or closed loop with a number of clients.
// Both become a table here and, with -svg, a plot beside it.

var concurImpls = []string{"c", "go-raw", "go-cuda", "go-cuda-locked"}

type concurPoint struct {
	rate, ratio, ratioMin, ratioMax, p50, p99 float64
}

type concurKey struct {
	scenario, impl string
	n              int
}

type servicePoint struct {
	impl, mode string
	load, rps  float64 // load: the target rate (open loop) or the clients (closed)
	p50, p99   float64 // µs
	batch      float64
}

type extraResults struct {
	scenarios []string
	ns        []int
	concur    map[concurKey]concurPoint
	service   []servicePoint
}

func fields(rest string) map[string]string {
	f := map[string]string{}
	for _, kv := range strings.Fields(rest) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	return f
}

func float(f map[string]string, name, line string) float64 {
	v, err := strconv.ParseFloat(f[name], 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: bad line %q: %s\n", line, name)
		os.Exit(1)
	}
	return v
}

// add takes a CONCURSUM or SERVICE line and reports whether it was one.
func (x *extraResults) add(kind, rest, line string) bool {
	switch kind {
	case "CONCURSUM":
		f := fields(rest)
		n, err := strconv.Atoi(f["n"])
		if err != nil {
			fmt.Fprintf(os.Stderr, "report: bad line %q: n\n", line)
			os.Exit(1)
		}
		if x.concur == nil {
			x.concur = map[concurKey]concurPoint{}
		}
		if !slices.Contains(x.scenarios, f["scenario"]) {
			x.scenarios = append(x.scenarios, f["scenario"])
		}
		if !slices.Contains(x.ns, n) {
			x.ns = append(x.ns, n)
			slices.Sort(x.ns)
		}
		x.concur[concurKey{f["scenario"], f["impl"], n}] = concurPoint{
			rate: float(f, "ops_per_s", line), ratio: float(f, "ratio_c", line),
			ratioMin: float(f, "ratio_min", line), ratioMax: float(f, "ratio_max", line),
			p50: float(f, "p50_ns", line), p99: float(f, "p99_ns", line),
		}
		return true
	case "RESULT":
		f := fields(rest)
		load := "target_rps"
		switch f["mode"] {
		case "":
			return false // a RESULT of bench/run.sh
		case "closed":
			load = "clients"
		}
		x.service = append(x.service, servicePoint{impl: f["impl"], mode: f["mode"], load: float(f, load, line),
			rps: float(f, "rps", line), p50: float(f, "p50_us", line), p99: float(f, "p99_us", line),
			batch: float(f, "mean_batch", line)})
		return true
	}
	return false
}

func (x *extraResults) print(svgDir string) {
	if len(x.concur) > 0 {
		x.concurTable()
	}
	if len(x.service) > 0 {
		x.serviceTable()
	}
	if svgDir == "" {
		return
	}
	if len(x.concur) > 0 {
		cols, charts := x.concurCharts()
		writeSVG(svgDir, "concurrency.svg", cols, charts)
	}
	if len(x.service) > 0 {
		cols, charts := x.serviceCharts()
		writeSVG(svgDir, "service.svg", cols, charts)
	}
}

func writeSVG(dir, name string, cols int, charts []chart) {
	p := filepath.Join(dir, name)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(svgGrid(cols, charts)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, p); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func (x *extraResults) concurTable() {
	fmt.Println()
	fmt.Println("| scenario | N | C ops/s | Go raw ops/s | Go cuda/ ops/s | raw / C | cuda/ / C | cuda/ / raw | p50 C / raw / cuda/ | p99 C / raw / cuda/ |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, sc := range x.scenarios {
		for _, n := range x.ns {
			c, okC := x.concur[concurKey{sc, "c", n}]
			if !okC {
				continue
			}
			raw, okR := x.concur[concurKey{sc, "go-raw", n}]
			cu, okU := x.concur[concurKey{sc, "go-cuda", n}]
			cell := func(p concurPoint, ok bool, v func(concurPoint) string) string {
				if !ok {
					return "–"
				}
				return v(p)
			}
			rate := func(p concurPoint) string { return short(p.rate) }
			ratio := func(p concurPoint) string { return fmt.Sprintf("%.2f (%.2f–%.2f)", p.ratio, p.ratioMin, p.ratioMax) }
			lat := func(q func(concurPoint) float64) string {
				return fmt.Sprintf("%s / %s / %s", ns(q(c)), cell(raw, okR, func(p concurPoint) string { return ns(q(p)) }), cell(cu, okU, func(p concurPoint) string { return ns(q(p)) }))
			}
			cr := "–"
			if okR && okU {
				cr = fmt.Sprintf("%.2f", cu.rate/raw.rate)
			}
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", sc, n, rate(c), cell(raw, okR, rate), cell(cu, okU, rate),
				cell(raw, okR, ratio), cell(cu, okU, ratio), cr,
				lat(func(p concurPoint) float64 { return p.p50 }), lat(func(p concurPoint) float64 { return p.p99 }))
		}
	}
	x.lockedTable()
	fmt.Println()
	fmt.Println("Rates are operations per second over all workers, the median of the rounds; \"/ C\" is the median over rounds of the ratio to C's run of the same round (min–max). Latencies are per operation (completion: from enqueue to delivery), the median over rounds of each run's percentile.")
}

// lockedTable lists package cuda's workers locked to their threads
// (gobench -concur-locked), where the run has them.
func (x *extraResults) lockedTable() {
	first := true
	for _, sc := range x.scenarios {
		for _, n := range x.ns {
			l, ok := x.concur[concurKey{sc, "go-cuda-locked", n}]
			if !ok {
				continue
			}
			if first {
				fmt.Println()
				fmt.Println("| scenario | N | cuda/, locked to threads, ops/s | locked / C | p50 | p99 |")
				fmt.Println("|---|---|---|---|---|---|")
				first = false
			}
			fmt.Printf("| %s | %d | %s | %.2f (%.2f–%.2f) | %s | %s |\n", sc, n, short(l.rate), l.ratio, l.ratioMin, l.ratioMax, ns(l.p50), ns(l.p99))
		}
	}
}

func ns(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1f ms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

func (x *extraResults) concurCharts() (int, []chart) {
	var charts []chart
	names := map[string]string{"c": "C", "go-raw": "Go raw", "go-cuda": "Go cuda/", "go-cuda-locked": "cuda/, locked"}
	for _, sc := range x.scenarios {
		c := chart{title: sc, xLabel: "workers (pthreads or goroutines)", yLabel: "operations per second", logX: true}
		for i, impl := range concurImpls {
			s := series{name: names[impl], colour: i}
			for _, n := range x.ns {
				if p, ok := x.concur[concurKey{sc, impl, n}]; ok {
					s.x, s.y = append(s.x, float64(n)), append(s.y, p.rate)
				}
			}
			if len(s.x) > 0 {
				c.lines = append(c.lines, s)
			}
		}
		charts = append(charts, c)
	}
	return 3, charts
}

func (x *extraResults) serviceTable() {
	fmt.Println()
	fmt.Println("| service | load | served (req/s) | p50 | p99 | mean batch |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, p := range x.service {
		load := short(p.load) + " req/s"
		if p.mode == "closed" {
			load = fmt.Sprintf("%.0f clients", p.load)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.1f |\n", p.impl, load, short(p.rps), ns(p.p50*1e3), ns(p.p99*1e3), p.batch)
	}
}

func (x *extraResults) serviceCharts() (int, []chart) {
	var impls []string
	for _, p := range x.service {
		if !slices.Contains(impls, p.impl) {
			impls = append(impls, p.impl)
		}
	}
	lat := chart{title: "p99, open loop", xLabel: "offered load (requests per second)", yLabel: "p99 latency (ms)", logX: true, logY: true}
	thr := chart{title: "served, closed loop", xLabel: "clients", yLabel: "served (requests per second)", logX: true, logY: true}
	for i, impl := range impls {
		l, t := series{name: impl, colour: i}, series{name: impl, colour: i}
		for _, p := range x.service {
			switch {
			case p.impl != impl:
			case p.mode == "closed":
				t.x, t.y = append(t.x, p.load), append(t.y, p.rps)
			default:
				l.x, l.y = append(l.x, p.load), append(l.y, p.p99/1e3)
			}
		}
		if len(l.x) > 0 {
			lat.lines = append(lat.lines, l)
		}
		if len(t.x) > 0 {
			thr.lines = append(thr.lines, t)
		}
	}
	return 2, []chart{lat, thr}
}
