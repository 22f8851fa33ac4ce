//go:build linux && (amd64 || arm64)

package blas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
)

// Plan is the algorithm chosen for one kind of Matmul by timing
// cuBLASLt's candidates: plain data, saved and loaded with SavePlans and
// LoadPlans, and used through LtHandle.Prepare (or, for a ColumnOrder plan,
// by passing &plan.Algo to Run).
type Plan struct {
	Key string // PlanKey of the Matmul it was tuned for
	// Formulation is how the algorithm was timed, and must be run: the
	// algorithm belongs to that problem.
	Formulation Formulation `json:",omitempty"`
	Algo        Algo
	// Config is what Algo is, for reading (cuBLASLt's configuration
	// attributes); Run does not use it.
	Config AlgoConfig `json:",omitzero"`
	// Median is the tuned algorithm's median time per multiply, Default
	// the heuristic's first choice's, in the same run.
	Median, Default time.Duration
	Candidates      int  // algorithms timed
	Searched        int  `json:",omitempty"` // of Candidates, those from the algorithm search (TuneOptions.Search)
	Graph           bool `json:",omitempty"` // timed as CUDA graph replays (TuneOptions.Graph)
}

// AlgoConfig is an algorithm's configuration: cuBLASLt's
// CUBLASLT_ALGO_CONFIG_* attributes, 0 where this cuBLASLt has none.
type AlgoConfig struct {
	ID, Tile, Stages, SplitK, Reduction, Swizzle, Custom uint32
	Cluster, Inner                                       uint16
}

func (c AlgoConfig) String() string {
	return fmt.Sprintf("id=%d tile=%d stages=%d splitk=%d reduction=%d swizzle=%d custom=%d cluster=%d inner=%d",
		c.ID, c.Tile, c.Stages, c.SplitK, c.Reduction, c.Swizzle, c.Custom, c.Cluster, c.Inner)
}

// PlanKey says what a plan is for: the types, shapes, layouts, strides
// and epilogue of mm, not its memory.
func PlanKey(mm Matmul) string {
	m := func(x Matrix) string {
		s := fmt.Sprintf("%dx%d/%d/%d", x.Rows, x.Cols, x.stride(), int(x.Layout))
		if x.count() > 1 {
			s += fmt.Sprintf("*%d/%d", x.count(), x.batchStride())
		}
		return s
	}
	return fmt.Sprintf("A=%v:%s B=%v:%s C=%v:%s epi=%d tf32=%v", mm.AType, m(mm.A), mm.BType, m(mm.B), mm.CType, m(mm.C), int(mm.Epilogue), mm.TF32)
}

// TuneOptions bounds Tune's search.
type TuneOptions struct {
	Candidates int // algorithms asked of the heuristic, per formulation (default 16)
	Runs       int // timed rounds, each one sample per candidate (default 20)
	Batch      int // multiplies per sample, for shapes that take microseconds (default 1)
	// Graph times each sample as one launch of a CUDA graph holding Batch
	// multiplies, so that the GPU runs them back to back: a multiply of a
	// few microseconds is otherwise timed at the rate the host enqueues
	// them (cublasLtMatmul's own host time is several microseconds), which
	// hides the kernel's speed; inference servers replay graphs for the
	// same reason.
	Graph bool
	// Formulations are those tried (ColumnOrder, RowOrder); nil is every
	// one the Matmul allows. The heuristic's first choice in ColumnOrder,
	// what Run uses, is always the default the others must beat.
	Formulations []Formulation
	// Search, when above 0, adds up to Search configurations of cuBLASLt's
	// algorithms beyond the heuristic's (at most MaxSearch): first the
	// neighbours of the heuristic's Neighbors best in each formulation
	// (the same kernel with other split-K factors and reduction schemes,
	// CTA swizzling, custom options and cluster shapes), then every
	// algorithm id for the Matmul's types with the tiles and stages it
	// supports, spread over ids, split-K factors and tiles; each one
	// accepted by cublasLtMatmulAlgoCheck with the handle's workspace.
	// With a search, Tune times every candidate in a short first pass (a
	// quarter of Runs, at least 5) and the heuristic's first choice with
	// the Finalists fastest others in a second pass of Runs.
	Search int
	// Neighbors is how many of the heuristic's candidates, per
	// formulation, the search explores around (default 4).
	Neighbors int
	// Finalists is how many of the first pass's fastest go on to the
	// second (default 8); only with Search.
	Finalists int
	// Final is how many of the fastest are re-timed against the default
	// in a last pass of Runs rounds of their own, which decides (default
	// 3): the lowest of many noisy medians is biased low.
	Final int
}

// TuneMargin is how much faster than the heuristic's first choice another
// candidate must be for Tune to take it: the median, over the rounds of the
// final pass, of its time divided by the default's in the same round.
const TuneMargin = 0.02

// cand is a candidate of Tune: an algorithm of a formulation.
type cand struct {
	form     Formulation
	algo     Algo
	searched bool
}

// Tune finds the fastest way cuBLASLt has to compute mm: it asks the
// heuristic for candidate algorithms in each formulation (and, with
// opt.Search, searches beyond them), times them on the handle's stream
// with events, interleaved round by round so that drift hits all alike,
// and re-times the fastest against the heuristic's first choice in a last
// pass. It returns the plan of the fastest if its median time, divided by
// the default's of the same round, is at least TuneMargin below 1 in the
// median round and below 1 in three rounds of four; else the plan of the
// heuristic's first choice. It runs mm (overwriting C) many times.
func (lt *LtHandle) Tune(mm Matmul, alpha, beta float32, opt TuneOptions) (*Plan, error) {
	const op = "LtHandle.Tune"
	if err := opt.check(op); err != nil {
		return nil, err
	}
	if err := mm.check(op); err != nil {
		return nil, err
	}
	forms, err := tuneForms(op, &mm, opt.Formulations)
	if err != nil {
		return nil, err
	}
	var cands []cand
	heur := map[Formulation][]Algo{}
	for _, f := range forms {
		algos, err := lt.AlgorithmsFor(mm, f, opt.Candidates)
		if err != nil {
			if f != ColumnOrder && errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) {
				continue
			}
			return nil, err
		}
		heur[f] = algos
		for _, a := range algos {
			cands = append(cands, cand{form: f, algo: a})
		}
	}
	if opt.Search > 0 {
		extra, _, err := lt.search(op, &mm, alpha, beta, forms, heur, opt)
		if err != nil {
			return nil, err
		}
		cands = append(cands, extra...)
	}
	searched := 0
	for _, c := range cands {
		if c.searched {
			searched++
		}
	}
	timed := cands
	if opt.Search > 0 && len(cands) > 1+opt.Finalists {
		first := opt
		first.Runs = max(5, opt.Runs/4)
		times, err := lt.timeCands(op, &mm, alpha, beta, cands, first)
		if err != nil {
			return nil, err
		}
		timed = pick(cands, finalists(medians(times), opt.Finalists))
	}
	if len(timed) > 1 {
		times, err := lt.timeCands(op, &mm, alpha, beta, timed, opt)
		if err != nil {
			return nil, err
		}
		timed = pick(timed, finalists(medians(times), opt.Final))
	}
	// The final pass: the default and the fastest few, in rounds of their
	// own.
	times, err := lt.timeCands(op, &mm, alpha, beta, timed, opt)
	if err != nil {
		return nil, err
	}
	best := choose(times, TuneMargin)
	med := medians(times)
	c := timed[best]
	return &Plan{
		Key: PlanKey(mm), Formulation: c.form, Algo: c.algo, Config: c.algo.Config(),
		Median: med[best], Default: med[0], Candidates: len(cands), Searched: searched, Graph: opt.Graph,
	}, nil
}

// tuneForms are the formulations Tune tries for mm: want, or every one mm
// allows; ColumnOrder, the default's, first and always.
func tuneForms(op string, mm *Matmul, want []Formulation) ([]Formulation, error) {
	forms := []Formulation{ColumnOrder}
	if want == nil {
		if RowOrder.check(op, mm) == nil {
			forms = append(forms, RowOrder)
		}
		return forms, nil
	}
	for _, f := range want {
		if err := f.check(op, mm); err != nil {
			return nil, err
		}
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms, nil
}

// pick returns cands[i] for each of idx.
func pick(cands []cand, idx []int) []cand {
	out := make([]cand, len(idx))
	for j, i := range idx {
		out[j] = cands[i]
	}
	return out
}

// medians returns the median of each candidate's samples.
func medians(times [][]time.Duration) []time.Duration {
	out := make([]time.Duration, len(times))
	for i, ts := range times {
		s := slices.Clone(ts)
		slices.Sort(s)
		out[i] = s[len(s)/2]
	}
	return out
}

// choose returns the candidate of times (0 the default, each with one
// sample per round) with the lowest median ratio to the default's sample
// of the same round, if that median is at most 1-margin, the ratio's
// upper quartile is below 1 and the candidate's median time is below the
// default's (which noisy rounds can make disagree with the ratios: the
// plan would then report a tuned time above the default's); else 0.
func choose(times [][]time.Duration, margin float64) int {
	best, bestRatio := 0, 1-margin
	med := medians(times)
	for i := 1; i < len(times); i++ {
		if med[i] >= med[0] {
			continue
		}
		n := min(len(times[i]), len(times[0]))
		if n == 0 {
			continue
		}
		ratios := make([]float64, n)
		for r := range n {
			ratios[r] = float64(times[i][r]) / float64(max(times[0][r], 1))
		}
		slices.Sort(ratios)
		mid, q3 := ratios[n/2], ratios[min(n-1, (3*n)/4)]
		if mid <= bestRatio && q3 < 1 {
			best, bestRatio = i, mid
		}
	}
	return best
}

// Time runs mm with each of algos (ColumnOrder), interleaved round by
// round on the handle's stream, and returns each one's median time per
// multiply (opt.Candidates is not used). Timing the plan Tune chose
// against the default in a run of their own says what tuning buys without
// the bias of having picked the fastest of many noisy medians.
func (lt *LtHandle) Time(mm Matmul, alpha, beta float32, algos []Algo, opt TuneOptions) ([]time.Duration, error) {
	cands := make([]cand, len(algos))
	for i, a := range algos {
		cands[i] = cand{form: ColumnOrder, algo: a}
	}
	times, err := lt.timeCands("LtHandle.Time", &mm, alpha, beta, cands, opt)
	if err != nil {
		return nil, err
	}
	return medians(times), nil
}

// TimePlans is Time for plans of mm, each in its formulation: it returns
// every plan's samples, one per round (times[i][r] is plan i's in round r),
// so that two plans can be compared round by round.
func (lt *LtHandle) TimePlans(mm Matmul, alpha, beta float32, plans []Plan, opt TuneOptions) ([][]time.Duration, error) {
	const op = "LtHandle.TimePlans"
	key := PlanKey(mm)
	cands := make([]cand, len(plans))
	for i, p := range plans {
		if p.Key != key {
			return nil, fmt.Errorf("blas: %s: plan %d is for %s, the Matmul is %s", op, i, p.Key, key)
		}
		cands[i] = cand{form: p.Formulation, algo: p.Algo}
	}
	return lt.timeCands(op, &mm, alpha, beta, cands, opt)
}

// DefaultPlan is the plan of the heuristic's first choice for mm, what
// Run uses: the one Tune's choice is measured against.
func (lt *LtHandle) DefaultPlan(mm Matmul) (*Plan, error) {
	algos, err := lt.Algorithms(mm, 1)
	if err != nil {
		return nil, err
	}
	return &Plan{Key: PlanKey(mm), Algo: algos[0], Config: algos[0].Config(), Candidates: 1}, nil
}

// timeCands times cands on mm, opt.Runs rounds of one sample each,
// interleaved (round r starts at candidate r), after one untimed multiply
// of each (the first call of a kernel loads it). A sample is opt.Batch
// multiplies, enqueued one by one or, with opt.Graph, captured into a
// CUDA graph launched once.
func (lt *LtHandle) timeCands(op string, mm *Matmul, alpha, beta float32, cands []cand, opt TuneOptions) ([][]time.Duration, error) {
	if opt.Runs <= 0 {
		opt.Runs = 20
	}
	if opt.Batch <= 0 {
		opt.Batch = 1
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("blas: %s: no algorithms", op)
	}
	if err := mm.check(op); err != nil {
		return nil, err
	}
	for _, c := range cands {
		if err := c.form.check(op, mm); err != nil {
			return nil, err
		}
	}
	s := lt.Stream()
	if s == nil {
		return nil, fmt.Errorf("blas: %s: %w", op, cuda.ErrClosed)
	}
	start, err := cuda.NewEvent(s.Context(), cuda.WithTiming())
	if err != nil {
		return nil, err
	}
	defer start.Close()
	end, err := cuda.NewEvent(s.Context(), cuda.WithTiming())
	if err != nil {
		return nil, err
	}
	defer end.Close()
	raw := rawAddrs(mm)
	es, ee := start.Raw(), end.Raw()
	hold := mm.holders(start, end)
	// The descriptors of each formulation, kept across the calls below:
	// they belong to no handle.
	ds := map[Formulation]*descs{}
	defer func() {
		for _, d := range ds {
			d.destroy()
		}
	}()
	run := func(st ltState, c *cand, stream cu.CUstream) error {
		d := ds[c.form]
		pa, pb, pc, _ := operands(raw, d.g.swap)
		return matmul(op, st, d, &c.algo, alpha, beta, pa, pb, pc, stream)
	}
	err = lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		for i := range cands {
			f := cands[i].form
			if ds[f] == nil {
				d, err := describe(op, mm, raw, f)
				if err != nil {
					return err
				}
				ds[f] = d
			}
			if err := run(st, &cands[i], stream); err != nil {
				return fmt.Errorf("algorithm %d: %w", i, err)
			}
		}
		return nil
	}, hold...)
	if err != nil {
		return nil, err
	}
	var execs []*cuda.GraphExec
	defer func() {
		for _, e := range execs {
			_ = e.Close()
		}
	}()
	if opt.Graph {
		for i := range cands {
			g, err := s.Capture(cuda.CaptureThreadLocal, func() error {
				return lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
					for range opt.Batch {
						if err := run(st, &cands[i], stream); err != nil {
							return err
						}
					}
					return nil
				}, hold...)
			})
			if err != nil {
				return nil, fmt.Errorf("algorithm %d: %w", i, err)
			}
			e, err := g.Instantiate()
			_ = g.Close()
			if err != nil {
				return nil, err
			}
			execs = append(execs, e)
			if err := e.Launch(s); err != nil { // uploads the graph
				return nil, err
			}
		}
	}
	times := make([][]time.Duration, len(cands))
	err = lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		for r := range opt.Runs {
			for j := range cands {
				i := (j + r) % len(cands)
				if err := cu.EventRecord(es, stream); err != nil {
					return check(op, "cuEventRecord", err)
				}
				if opt.Graph {
					if err := cu.GraphLaunch(execs[i].Raw(), stream); err != nil {
						return check(op, "cuGraphLaunch", err)
					}
				} else {
					for range opt.Batch {
						if err := run(st, &cands[i], stream); err != nil {
							return err
						}
					}
				}
				if err := cu.EventRecord(ee, stream); err != nil {
					return check(op, "cuEventRecord", err)
				}
				if err := cu.EventSynchronize(ee); err != nil {
					return check(op, "cuEventSynchronize", err)
				}
				var ms float32
				if err := cu.EventElapsedTime(&ms, es, ee); err != nil {
					return check(op, "cuEventElapsedTime", err)
				}
				times[i] = append(times[i], time.Duration(float64(ms)*1e6/float64(opt.Batch)))
			}
		}
		return nil
	}, hold...)
	if err != nil {
		return nil, err
	}
	return times, nil
}

// Config reads a's configuration from cuBLASLt; the zero AlgoConfig where
// the library is missing.
func (a Algo) Config() AlgoConfig {
	raw := cublaslt.CublasLtMatmulAlgo_t{Data: a.Data}
	return configOf(&raw)
}

// planFile is the format SavePlans writes. Version 1 was a bare JSON array
// of plans, all ColumnOrder; version 2 adds the formulation, which a
// reader of version 1 would ignore and run the algorithm on the wrong
// problem, so it is an object that such a reader refuses.
type planFile struct {
	Version int
	Plans   []Plan
}

// PlanVersion is the version of the format SavePlans writes.
const PlanVersion = 2

// SavePlans writes plans as JSON, for LoadPlans.
func SavePlans(w io.Writer, plans []Plan) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	if plans == nil {
		plans = []Plan{}
	}
	return e.Encode(planFile{Version: PlanVersion, Plans: plans})
}

// LoadPlans reads what SavePlans wrote, of this version or an earlier one,
// keyed by Plan.Key. A plan is only as good as the GPU and cuBLAS version it
// was tuned on: tune again after changing either.
func LoadPlans(r io.Reader) (map[string]Plan, error) {
	var raw json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("blas: LoadPlans: %w", err)
	}
	var plans []Plan
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(raw, &plans); err != nil {
			return nil, fmt.Errorf("blas: LoadPlans: %w", err)
		}
		for _, p := range plans {
			if p.Formulation != ColumnOrder {
				return nil, fmt.Errorf("blas: LoadPlans: a version 1 plan with formulation %v", p.Formulation)
			}
		}
	} else {
		var f planFile
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("blas: LoadPlans: %w", err)
		}
		if f.Version < 2 || f.Version > PlanVersion {
			return nil, fmt.Errorf("blas: LoadPlans: plans of version %d; this package reads 1 to %d", f.Version, PlanVersion)
		}
		plans = f.Plans
	}
	m := make(map[string]Plan, len(plans))
	for _, p := range plans {
		if p.Key == "" {
			return nil, fmt.Errorf("blas: LoadPlans: a plan without a key")
		}
		if p.Formulation != ColumnOrder && p.Formulation != RowOrder {
			return nil, fmt.Errorf("blas: LoadPlans: plan %s has an unknown formulation %d", p.Key, int(p.Formulation))
		}
		m[p.Key] = p
	}
	return m, nil
}
