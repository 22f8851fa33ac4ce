//go:build linux && (amd64 || arm64)

package blas

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// Plan is the algorithm chosen for one kind of Matmul by timing the
// heuristic's candidates: plain data, saved and loaded with SavePlans and
// LoadPlans, and used by passing &plan.Algo to Run.
type Plan struct {
	Key  string // PlanKey of the Matmul it was tuned for
	Algo Algo
	// Median is the tuned algorithm's median time per multiply, Default
	// the heuristic's first choice's, in the same run.
	Median, Default time.Duration
	Candidates      int // algorithms timed
	Searched        int `json:",omitempty"` // of Candidates, those from the algorithm search (TuneOptions.Search)
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
	Candidates int // algorithms asked of the heuristic (default 16)
	Runs       int // timed rounds, each one multiply per candidate (default 20)
	Batch      int // multiplies per timing, for shapes that take microseconds (default 1)
	// Search, when above 0, adds up to Search configurations of cuBLASLt's
	// algorithms beyond the heuristic's (at most MaxSearch): every
	// algorithm id for the Matmul's types, with the tiles and stages it
	// supports and split-K factors 1 to 16 where it supports split-K, those
	// cublasLtMatmulAlgoCheck accepts with the handle's workspace, chosen
	// deterministically spread over ids, split-K factors and tiles. With a
	// search, Tune times every candidate in a short first pass (a quarter
	// of Runs, at least 5) and the heuristic's first choice with the
	// Finalists fastest others in a second pass of Runs.
	Search int
	// Finalists is how many of the first pass's fastest go on to the
	// second (default 8); only with Search.
	Finalists int
}

// TuneMargin is how much faster than the heuristic's first choice (by
// median) another candidate must be for Tune to take it.
const TuneMargin = 0.02

// Tune asks cuBLASLt's heuristic for candidate algorithms for mm, times
// each on the handle's stream with events, interleaved round by round so
// that drift hits all alike, and returns the plan of the one with the
// lowest median, if that is at least TuneMargin below the heuristic's
// first choice's, else the first choice. With opt.Search, the candidates
// also include configurations from cuBLASLt's algorithm search, timed in
// two passes (see TuneOptions). It runs mm (overwriting C) many times.
func (lt *LtHandle) Tune(mm Matmul, alpha, beta float32, opt TuneOptions) (*Plan, error) {
	const op = "LtHandle.Tune"
	if err := opt.check(op); err != nil {
		return nil, err
	}
	algos, err := lt.Algorithms(mm, opt.Candidates)
	if err != nil {
		return nil, err
	}
	heuristic := len(algos)
	if opt.Search > 0 {
		extra, _, err := lt.search(op, &mm, alpha, beta, algos, opt.Search)
		if err != nil {
			return nil, err
		}
		algos = append(algos, extra...)
	}
	timed := algos
	first := opt
	twoPass := opt.Search > 0 && len(algos) > 1+opt.Finalists
	if twoPass {
		first.Runs = max(5, opt.Runs/4)
	}
	medians, err := lt.Time(mm, alpha, beta, algos, first)
	if err != nil {
		return nil, err
	}
	if twoPass {
		// The second pass: the default and the first pass's fastest, timed
		// as long as without a search.
		idx := finalists(medians, opt.Finalists)
		timed = make([]Algo, len(idx))
		for j, i := range idx {
			timed[j] = algos[i]
		}
		if medians, err = lt.Time(mm, alpha, beta, timed, opt); err != nil {
			return nil, err
		}
	}
	// The lowest of many noisy medians is biased low: a candidate replaces
	// the default only when it is clearly faster.
	best := 0
	for i, m := range medians {
		if m < medians[best] && float64(m) < (1-TuneMargin)*float64(medians[0]) {
			best = i
		}
	}
	return &Plan{Key: PlanKey(mm), Algo: timed[best], Median: medians[best], Default: medians[0], Candidates: len(algos), Searched: len(algos) - heuristic}, nil
}

// Time runs mm with each of algos, interleaved round by round on the
// handle's stream, and returns each one's median time per multiply
// (opt.Candidates is not used). Timing the plan Tune chose against the
// default in a run of their own says what tuning buys without the bias of
// having picked the fastest of many noisy medians.
func (lt *LtHandle) Time(mm Matmul, alpha, beta float32, algos []Algo, opt TuneOptions) ([]time.Duration, error) {
	const op = "LtHandle.Time"
	if opt.Runs <= 0 {
		opt.Runs = 20
	}
	if opt.Batch <= 0 {
		opt.Batch = 1
	}
	if len(algos) == 0 {
		return nil, fmt.Errorf("blas: %s: no algorithms", op)
	}
	if err := mm.check(op); err != nil {
		return nil, err
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
	raw := rawAddrs(&mm)
	es, ee := start.Raw(), end.Raw()
	times := make([][]time.Duration, len(algos))
	hold := []cuda.Holder{mm.A.Mem, mm.B.Mem, mm.C.Mem, start, end}
	if mm.Bias != nil {
		hold = append(hold, mm.Bias)
	}
	err = lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		d, err := describe(op, &mm, raw)
		if err != nil {
			return err
		}
		defer d.destroy()
		// Each algorithm once untimed: the first call of one loads its
		// kernel.
		for i := range algos {
			if err := matmul(op, st, d, &algos[i], alpha, beta, stream); err != nil {
				return fmt.Errorf("algorithm %d: %w", i, err)
			}
		}
		for r := range opt.Runs {
			for j := range algos {
				i := (j + r) % len(algos)
				if err := cu.EventRecord(es, stream); err != nil {
					return check(op, "cuEventRecord", err)
				}
				for range opt.Batch {
					if err := matmul(op, st, d, &algos[i], alpha, beta, stream); err != nil {
						return err
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
	medians := make([]time.Duration, len(algos))
	for i, ts := range times {
		slices.Sort(ts)
		medians[i] = ts[len(ts)/2]
	}
	return medians, nil
}

// SavePlans writes plans as JSON, for LoadPlans.
func SavePlans(w io.Writer, plans []Plan) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(plans)
}

// LoadPlans reads what SavePlans wrote, keyed by Plan.Key. A plan is only
// as good as the GPU and cuBLAS version it was tuned on: tune again after
// changing either.
func LoadPlans(r io.Reader) (map[string]Plan, error) {
	var plans []Plan
	if err := json.NewDecoder(r).Decode(&plans); err != nil {
		return nil, fmt.Errorf("blas: LoadPlans: %w", err)
	}
	m := make(map[string]Plan, len(plans))
	for _, p := range plans {
		if p.Key == "" {
			return nil, fmt.Errorf("blas: LoadPlans: a plan without a key")
		}
		m[p.Key] = p
	}
	return m, nil
}
