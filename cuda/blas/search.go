//go:build linux && (amd64 || arm64)

package blas

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// Bounds of the algorithm search (TuneOptions.Search).
const (
	// MaxSearch is the most configurations TuneOptions.Search may ask for.
	MaxSearch = 1024
	// MaxAlgorithms is the most algorithms Algorithms, AlgorithmsFor and
	// TuneOptions.Candidates may ask of cuBLASLt's heuristic. cuBLASLt
	// takes the count as a C int and answers with a few dozen at most, so
	// a larger request would only allocate results it never fills.
	MaxAlgorithms = 1024
	// searchChecks bounds the cublasLtMatmulAlgoCheck calls of one
	// search, spread evenly over the algorithm ids.
	searchChecks = 24000
	// defaultFinalists is how many of the first pass's fastest go on to
	// the second, besides the heuristic's first choice.
	defaultFinalists = 8
	// defaultNeighbors is how many of the heuristic's candidates, per
	// formulation, the search explores around.
	defaultNeighbors = 4
	// defaultFinal is how many of the fastest the final pass re-times
	// against the default.
	defaultFinal = 3
)

// splitKs are the split-K factors tried on an algorithm that supports
// split-K: decode shapes (M of a few rows against a large K×N) leave most
// of the GPU idle without one.
var splitKs = [...]uint32{1, 2, 4, 8, 16}

// reductions are the split-K reduction schemes, tried where an algorithm's
// REDUCTION_SCHEME_MASK allows them.
var reductions = [...]uint32{
	uint32(cublaslt.CUBLASLT_REDUCTION_SCHEME_INPLACE),
	uint32(cublaslt.CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE),
	uint32(cublaslt.CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE),
}

// check validates the options and fills in the defaults.
func (o *TuneOptions) check(op string) error {
	switch {
	case o.Candidates < 0 || o.Candidates > MaxAlgorithms:
		return fmt.Errorf("blas: %s: Candidates %d is not in [0, %d]", op, o.Candidates, MaxAlgorithms)
	case o.Runs < 0:
		return fmt.Errorf("blas: %s: Runs %d is negative", op, o.Runs)
	case o.Batch < 0:
		return fmt.Errorf("blas: %s: Batch %d is negative", op, o.Batch)
	case o.Search < 0 || o.Search > MaxSearch:
		return fmt.Errorf("blas: %s: Search %d is not in [0, %d]", op, o.Search, MaxSearch)
	case o.Finalists < 0:
		return fmt.Errorf("blas: %s: Finalists %d is negative", op, o.Finalists)
	case o.Neighbors < 0:
		return fmt.Errorf("blas: %s: Neighbors %d is negative", op, o.Neighbors)
	case o.Final < 0:
		return fmt.Errorf("blas: %s: Final %d is negative", op, o.Final)
	}
	if o.Candidates == 0 {
		o.Candidates = 16
	}
	if o.Runs == 0 {
		o.Runs = 20
	}
	if o.Batch == 0 {
		o.Batch = 1
	}
	if o.Finalists == 0 {
		o.Finalists = defaultFinalists
	}
	if o.Neighbors == 0 {
		o.Neighbors = defaultNeighbors
	}
	if o.Final == 0 {
		o.Final = defaultFinal
	}
	return nil
}

// configOf reads a's configuration; attributes this cuBLASLt lacks read 0.
func configOf(a *cublaslt.CublasLtMatmulAlgo_t) AlgoConfig {
	get32 := func(attr cublaslt.CublasLtMatmulAlgoConfigAttributes_t) uint32 {
		var v uint32
		var n uint64
		if cublaslt.MatmulAlgoConfigGetAttribute(a, attr, unsafe.Pointer(&v), 4, &n) != nil {
			return 0
		}
		return v
	}
	get16 := func(attr cublaslt.CublasLtMatmulAlgoConfigAttributes_t) uint16 {
		var v uint16
		var n uint64
		if cublaslt.MatmulAlgoConfigGetAttribute(a, attr, unsafe.Pointer(&v), 2, &n) != nil {
			return 0
		}
		return v
	}
	return AlgoConfig{
		ID:        get32(cublaslt.CUBLASLT_ALGO_CONFIG_ID),
		Tile:      get32(cublaslt.CUBLASLT_ALGO_CONFIG_TILE_ID),
		Stages:    get32(cublaslt.CUBLASLT_ALGO_CONFIG_STAGES_ID),
		SplitK:    get32(cublaslt.CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
		Reduction: get32(cublaslt.CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
		Swizzle:   get32(cublaslt.CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
		Custom:    get32(cublaslt.CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
		Cluster:   get16(cublaslt.CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
		Inner:     get16(cublaslt.CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID),
	}
}

// capIDs reads an array capability (TILE_IDS, STAGES_IDS) of a; none
// reads as the one id 0 (UNDEFINED), what cuBLASLt takes for such an
// algorithm.
func capIDs(a *cublaslt.CublasLtMatmulAlgo_t, attr cublaslt.CublasLtMatmulAlgoCapAttributes_t) []uint32 {
	var need uint64
	if cublaslt.MatmulAlgoCapGetAttribute(a, attr, nil, 0, &need) != nil || need < 4 {
		return []uint32{0}
	}
	ids := make([]uint32, need/4)
	if cublaslt.MatmulAlgoCapGetAttribute(a, attr, unsafe.Pointer(&ids[0]), uint64(len(ids))*4, &need) != nil {
		return []uint32{0}
	}
	return ids[:min(uint64(len(ids)), need/4)]
}

func cap32(a *cublaslt.CublasLtMatmulAlgo_t, attr cublaslt.CublasLtMatmulAlgoCapAttributes_t) uint32 {
	var v uint32
	var n uint64
	if cublaslt.MatmulAlgoCapGetAttribute(a, attr, unsafe.Pointer(&v), 4, &n) != nil {
		return 0
	}
	return v
}

// combo is one configuration to check: a tile, stages and split-K (with
// its reduction scheme) of one algorithm id.
type combo struct{ tile, stages, splitK, reduction uint32 }

// combos lists the configurations of an algorithm with the given
// capabilities, split-K outermost.
func combos(tiles, stages []uint32, splitK bool, reductionMask uint32) []combo {
	var out []combo
	for _, k := range splitKs {
		if k > 1 && !splitK {
			break
		}
		schemes := []uint32{uint32(cublaslt.CUBLASLT_REDUCTION_SCHEME_NONE)}
		if k > 1 {
			schemes = schemes[:0]
			for _, r := range reductions {
				if reductionMask&r != 0 {
					schemes = append(schemes, r)
				}
			}
		}
		for _, r := range schemes {
			for _, t := range tiles {
				for _, s := range stages {
					out = append(out, combo{t, s, k, r})
				}
			}
		}
	}
	return out
}

// spread returns n indices of [0, total) evenly spaced, all of them when
// total ≤ n, in increasing order.
func spread(total, n int) []int {
	if n <= 0 {
		return nil
	}
	if total <= n {
		n = total
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i * total / n
	}
	return out
}

// dedupConfigs returns the indices of the first occurrence of each
// configuration, in order.
func dedupConfigs(cfgs []AlgoConfig) []int {
	seen := make(map[AlgoConfig]bool, len(cfgs))
	var keep []int
	for i, c := range cfgs {
		if !seen[c] {
			seen[c] = true
			keep = append(keep, i)
		}
	}
	return keep
}

// interleave takes one from each group in turn until all are used.
func interleave(groups [][]int) []int {
	var out []int
	for round := 0; ; round++ {
		took := false
		for _, g := range groups {
			if round < len(g) {
				out = append(out, g[round])
				took = true
			}
		}
		if !took {
			return out
		}
	}
}

// pickConfigs chooses up to limit of cfgs, deterministically and spread
// over what matters: round-robin over the algorithm ids (in order of first
// appearance); within an id round-robin over its split-K factors; within
// those, distinct tiles before a second stage count of the same tile. It
// returns indices of cfgs.
func pickConfigs(cfgs []AlgoConfig, limit int) []int {
	if limit <= 0 {
		return nil
	}
	type splitKey struct{ id, splitK uint32 }
	var ids []uint32
	bySplit := map[uint32][]uint32{} // id → its split-K factors, in order
	members := map[splitKey][]int{}
	for i, c := range cfgs {
		if _, ok := bySplit[c.ID]; !ok {
			ids = append(ids, c.ID)
			bySplit[c.ID] = nil
		}
		k := splitKey{c.ID, c.SplitK}
		if _, ok := members[k]; !ok {
			bySplit[c.ID] = append(bySplit[c.ID], c.SplitK)
		}
		members[k] = append(members[k], i)
	}
	perID := make([][]int, len(ids))
	for n, id := range ids {
		var groups [][]int
		for _, k := range bySplit[id] {
			// Distinct tiles first: order by how many of the same tile
			// came before, then by position.
			m := members[splitKey{id, k}]
			rank := make(map[int]int, len(m))
			count := map[uint32]int{}
			for _, i := range m {
				rank[i] = count[cfgs[i].Tile]
				count[cfgs[i].Tile]++
			}
			g := slices.Clone(m)
			slices.SortStableFunc(g, func(a, b int) int { return rank[a] - rank[b] })
			groups = append(groups, g)
		}
		perID[n] = interleave(groups)
	}
	out := interleave(perID)
	return out[:min(len(out), limit)]
}

// finalists returns 0 (the heuristic's first choice) and the indices of
// the n others with the lowest medians (ties by index), in increasing
// order of index.
func finalists(medians []time.Duration, n int) []int {
	others := make([]int, 0, len(medians))
	for i := 1; i < len(medians); i++ {
		others = append(others, i)
	}
	slices.SortStableFunc(others, func(a, b int) int {
		switch {
		case medians[a] < medians[b]:
			return -1
		case medians[a] > medians[b]:
			return 1
		}
		return a - b
	})
	out := append([]int{0}, others[:min(n, len(others))]...)
	slices.Sort(out)
	return out
}

// searchTypes are the types of mm's descriptors (A and B swapped when the
// formulation computes Cᵀ): describe's, and those that
// cublasLtMatmulAlgoGetIds and cublasLtMatmulAlgoInit take.
func searchTypes(mm *Matmul, swap bool) (compute cublas.CublasComputeType_t, a, b, c libtypes.CudaDataType_t) {
	first, second := mm.AType, mm.BType
	if swap {
		first, second = second, first
	}
	compute = cublas.CUBLAS_COMPUTE_32F
	if mm.TF32 && mm.AType == Float32 && mm.BType == Float32 {
		compute = cublas.CUBLAS_COMPUTE_32F_FAST_TF32
	}
	return compute, dataTypes[first].cuda, dataTypes[second].cuda, dataTypes[mm.CType].cuda
}

// neighborSplits are the split-K factors tried around a heuristic
// candidate: decode shapes (M of a few rows against a large K×N) give a
// kernel too few output tiles to fill the GPU, which only splitting K
// fixes, and the best factor depends on K and the number of SMs.
var neighborSplits = [...]uint32{1, 2, 3, 4, 6, 8, 12, 16, 24, 32}

// neighborClusters are the thread-block cluster shapes tried around a
// Hopper candidate (CUBLASLT_CLUSTER_SHAPE_*; AUTO lets cuBLASLt choose).
var neighborClusters = [...]uint16{
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_AUTO),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_1x1x1),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_2x1x1),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_1x2x1),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_2x2x1),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_4x1x1),
	uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_1x4x1),
}

// variant is a change to an algorithm's configuration.
type variant struct {
	splitK, reduction, swizzle, custom uint32
	cluster                            uint16
}

// variants lists the neighbours of base (its configuration base, its
// capabilities splitK, reductionMask, swizzleMax and customMax): the same
// kernel and tile with each split-K factor and reduction scheme; each
// CTA swizzling; each custom option (up to 15); each cluster shape, alone
// and with split-K 2, 4 and 8. base itself is not among them; duplicates
// are.
func variants(base AlgoConfig, splitK bool, reductionMask, swizzleMax, customMax uint32) []variant {
	b := variant{base.SplitK, base.Reduction, base.Swizzle, base.Custom, base.Cluster}
	var out []variant
	add := func(v variant) {
		if v != b {
			out = append(out, v)
		}
	}
	firstReduction := uint32(0)
	for _, r := range reductions {
		if reductionMask&r != 0 {
			firstReduction = r
			break
		}
	}
	if splitK {
		for _, k := range neighborSplits {
			if k == 1 {
				v := b
				v.splitK, v.reduction = 1, uint32(cublaslt.CUBLASLT_REDUCTION_SCHEME_NONE)
				add(v)
				continue
			}
			for _, r := range reductions {
				if reductionMask&r != 0 {
					v := b
					v.splitK, v.reduction = k, r
					add(v)
				}
			}
		}
	}
	for sw := uint32(0); sw <= min(swizzleMax, 7); sw++ {
		v := b
		v.swizzle = sw
		add(v)
	}
	for c := uint32(0); c <= min(customMax, 15); c++ {
		v := b
		v.custom = c
		add(v)
	}
	for _, cl := range neighborClusters {
		v := b
		v.cluster = cl
		add(v)
		if splitK && firstReduction != 0 {
			for _, k := range []uint32{2, 4, 8} {
				w := v
				w.splitK, w.reduction = k, firstReduction
				add(w)
			}
		}
	}
	return out
}

// formConfig is a configuration in one formulation: what tells the
// search's candidates apart.
type formConfig struct {
	form Formulation
	cfg  AlgoConfig
}

// search finds candidates for mm beyond the heuristic's (heur, per
// formulation of forms): the neighbours of each formulation's
// opt.Neighbors first candidates (variants), then configurations of every
// algorithm id for the types (combos, spread over ids by pickConfigs);
// keeps those cublasLtMatmulAlgoCheck accepts with a workspace the
// handle has, that are no candidate already and that run; and returns up
// to opt.Search of them, neighbours first, with the number checked.
func (lt *LtHandle) search(op string, mm *Matmul, alpha, beta float32, forms []Formulation, heur map[Formulation][]Algo, opt TuneOptions) ([]cand, int, error) {
	raw := rawAddrs(mm)
	var out []cand
	checked := 0
	err := lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		ws := uint64(st.ws.Size())
		seen := map[formConfig]bool{}
		for f, algos := range heur {
			for _, h := range algos {
				a := cublaslt.CublasLtMatmulAlgo_t{Data: h.Data}
				seen[formConfig{f, configOf(&a)}] = true
			}
		}
		var neighbors [][]cand // per base
		var spreadCfgs []AlgoConfig
		var spreadCands []cand
		ds := map[Formulation]*descs{} // each formulation's, for the checks and the trial runs
		defer func() {
			for _, d := range ds {
				d.destroy()
			}
		}()
		for _, f := range forms {
			if heur[f] == nil {
				continue
			}
			d, err := describe(op, mm, raw, f)
			if err != nil {
				return err
			}
			ds[f] = d
			try := func(a *cublaslt.CublasLtMatmulAlgo_t) (Algo, AlgoConfig, bool) {
				checked++
				cfg := configOf(a)
				if seen[formConfig{f, cfg}] {
					return Algo{}, cfg, false
				}
				var res cublaslt.CublasLtMatmulHeuristicResult_t
				if cublaslt.MatmulAlgoCheck(st.h, d.op, d.a, d.b, d.c, d.c, a, &res) != nil ||
					res.State != cublas.CUBLAS_STATUS_SUCCESS || res.WorkspaceSize > ws {
					return Algo{}, cfg, false
				}
				seen[formConfig{f, cfg}] = true
				return Algo{Data: a.Data, Workspace: res.WorkspaceSize, Waves: res.WavesCount}, cfg, true
			}
			// The neighbours of the heuristic's best.
			for _, h := range heur[f][:min(opt.Neighbors, len(heur[f]))] {
				base := cublaslt.CublasLtMatmulAlgo_t{Data: h.Data}
				bc := configOf(&base)
				var group []cand
				for _, v := range variants(bc, cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0,
					cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK), cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT),
					cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX)) {
					// Only what the variant changes is set: an attribute
					// this cuBLASLt lacks then only loses the variants
					// that change it.
					a := base
					var err error
					set := func(attr cublaslt.CublasLtMatmulAlgoConfigAttributes_t, v, was uint32) {
						if err == nil && v != was {
							err = cublaslt.MatmulAlgoConfigSetAttribute(&a, attr, unsafe.Pointer(&v), 4)
						}
					}
					set(cublaslt.CUBLASLT_ALGO_CONFIG_SPLITK_NUM, v.splitK, bc.SplitK)
					set(cublaslt.CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, v.reduction, bc.Reduction)
					set(cublaslt.CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, v.swizzle, bc.Swizzle)
					set(cublaslt.CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, v.custom, bc.Custom)
					if cl := v.cluster; err == nil && cl != bc.Cluster {
						err = cublaslt.MatmulAlgoConfigSetAttribute(&a, cublaslt.CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, unsafe.Pointer(&cl), 2)
					}
					if err != nil {
						continue
					}
					if algo, _, ok := try(&a); ok {
						group = append(group, cand{form: f, algo: algo, searched: true})
					}
				}
				neighbors = append(neighbors, group)
			}
			// Every algorithm id for the types.
			compute, ta, tb, tc := searchTypes(mm, d.g.swap)
			scale := libtypes.CUDA_R_32F
			ids := make([]int32, 1024)
			var nids int32
			if err := cublaslt.MatmulAlgoGetIds(st.h, compute, scale, ta, tb, tc, tc, int32(len(ids)), &ids[0], &nids); err != nil {
				return check(op, "cublasLtMatmulAlgoGetIds", err)
			}
			ids = ids[:nids]
			budget := searchChecks / max(1, len(ids)*len(forms))
			for _, id := range ids {
				var base cublaslt.CublasLtMatmulAlgo_t
				if cublaslt.MatmulAlgoInit(st.h, compute, scale, ta, tb, tc, tc, id, &base) != nil {
					continue
				}
				cs := combos(capIDs(&base, cublaslt.CUBLASLT_ALGO_CAP_TILE_IDS), capIDs(&base, cublaslt.CUBLASLT_ALGO_CAP_STAGES_IDS),
					cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0, cap32(&base, cublaslt.CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK))
				for _, i := range spread(len(cs), budget) {
					c := cs[i]
					a := base
					set := func(attr cublaslt.CublasLtMatmulAlgoConfigAttributes_t, v uint32) error {
						return cublaslt.MatmulAlgoConfigSetAttribute(&a, attr, unsafe.Pointer(&v), 4)
					}
					if set(cublaslt.CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile) != nil ||
						set(cublaslt.CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages) != nil ||
						set(cublaslt.CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitK) != nil ||
						set(cublaslt.CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction) != nil {
						continue
					}
					if algo, cfg, ok := try(&a); ok {
						spreadCfgs = append(spreadCfgs, cfg)
						spreadCands = append(spreadCands, cand{form: f, algo: algo, searched: true})
					}
				}
			}
		}
		// Neighbours first, one from each base in turn; the spread fills
		// what is left of the budget.
		var picked []cand
		for round := 0; len(picked) < opt.Search; round++ {
			took := false
			for _, g := range neighbors {
				if round < len(g) && len(picked) < opt.Search {
					picked = append(picked, g[round])
					took = true
				}
			}
			if !took {
				break
			}
		}
		if left := opt.Search - len(picked); left > 0 {
			picked = append(picked, pick(spreadCands, pickConfigs(spreadCfgs, left))...)
		}
		// Each once, to drop any that cublasLtMatmul refuses after all.
		for _, c := range picked {
			d := ds[c.form]
			if d == nil {
				var err error
				if d, err = describe(op, mm, raw, c.form); err != nil {
					return err
				}
				ds[c.form] = d
			}
			pa, pb, pc, _ := operands(raw, d.g.swap)
			if matmul(op, st, d, &c.algo, alpha, beta, pa, pb, pc, stream) == nil {
				out = append(out, c)
			}
		}
		return nil
	}, mm.holders()...)
	return out, checked, err
}
