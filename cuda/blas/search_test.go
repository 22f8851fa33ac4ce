//go:build linux && (amd64 || arm64)

package blas

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTuneOptionsCheck(t *testing.T) {
	var o TuneOptions
	if err := o.check("op"); err != nil {
		t.Fatal(err)
	}
	if want := (TuneOptions{Candidates: 16, Runs: 20, Batch: 1, Finalists: defaultFinalists, Neighbors: defaultNeighbors, Final: defaultFinal}); !reflect.DeepEqual(o, want) {
		t.Fatalf("defaults %+v, want %+v", o, want)
	}
	o = TuneOptions{Search: MaxSearch, Finalists: 3}
	if err := o.check("op"); err != nil || o.Search != MaxSearch || o.Finalists != 3 {
		t.Fatalf("%+v: %v", o, err)
	}
	for _, bad := range []TuneOptions{{Candidates: -1}, {Runs: -1}, {Batch: -2}, {Search: -1}, {Search: MaxSearch + 1}, {Finalists: -1}, {Neighbors: -1}, {Final: -1}} {
		if err := bad.check("op"); err == nil || !strings.Contains(err.Error(), "blas: op: ") {
			t.Errorf("%+v: check = %v, want an error", bad, err)
		}
	}
	// Tune validates its options before it reaches the handle.
	if _, err := (*LtHandle)(nil).Tune(Matmul{}, 1, 0, TuneOptions{Search: -5}); err == nil || !strings.Contains(err.Error(), "Search -5") {
		t.Errorf("Tune with Search -5 = %v", err)
	}
}

func TestDedupConfigs(t *testing.T) {
	a := AlgoConfig{ID: 1, Tile: 2, Stages: 3, SplitK: 1}
	b := a
	b.SplitK = 2
	c := a
	c.Cluster = 1 // differs only in a field the search does not set: still distinct
	got := dedupConfigs([]AlgoConfig{a, b, a, c, b, a})
	if want := []int{0, 1, 3}; !slices.Equal(got, want) {
		t.Fatalf("dedupConfigs = %v, want %v", got, want)
	}
	if got := dedupConfigs(nil); len(got) != 0 {
		t.Fatalf("dedupConfigs(nil) = %v", got)
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		total, n int
		want     []int
	}{
		{5, 10, []int{0, 1, 2, 3, 4}},
		{10, 5, []int{0, 2, 4, 6, 8}},
		{10, 3, []int{0, 3, 6}},
		{0, 3, []int{}},
		{4, 0, nil},
	} {
		if got := spread(tc.total, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("spread(%d, %d) = %v, want %v", tc.total, tc.n, got, tc.want)
		}
	}
}

func TestCombos(t *testing.T) {
	// Without split-K: tiles × stages, split 1, no reduction.
	cs := combos([]uint32{1, 2}, []uint32{7, 8, 9}, false, 7)
	if len(cs) != 6 {
		t.Fatalf("%d combos without split-K, want 6: %v", len(cs), cs)
	}
	for _, c := range cs {
		if c.splitK != 1 || c.reduction != 0 {
			t.Fatalf("combo %+v without split-K", c)
		}
	}
	// With split-K and two reduction schemes allowed (mask 0b101).
	cs = combos([]uint32{1}, []uint32{0}, true, 5)
	if want := 1 + 2*(len(splitKs)-1); len(cs) != want {
		t.Fatalf("%d combos, want %d: %v", len(cs), want, cs)
	}
	for _, c := range cs[1:] {
		if c.splitK < 2 || (c.reduction != 1 && c.reduction != 4) {
			t.Fatalf("combo %+v", c)
		}
	}
	// Split-K with no reduction scheme allowed gives split 1 only.
	if cs := combos([]uint32{1}, []uint32{0}, true, 0); len(cs) != 1 {
		t.Fatalf("combos with an empty reduction mask: %v", cs)
	}
}

func TestPickConfigs(t *testing.T) {
	// Two ids: id 10 with splits 1 and 4, two tiles and two stages each;
	// id 20 with split 1 only.
	var cfgs []AlgoConfig
	for _, k := range []uint32{1, 4} {
		for _, tile := range []uint32{5, 6} {
			for _, st := range []uint32{1, 2} {
				cfgs = append(cfgs, AlgoConfig{ID: 10, SplitK: k, Tile: tile, Stages: st})
			}
		}
	}
	for _, tile := range []uint32{5, 6, 7} {
		cfgs = append(cfgs, AlgoConfig{ID: 20, SplitK: 1, Tile: tile})
	}
	all := pickConfigs(cfgs, 100)
	if len(all) != len(cfgs) {
		t.Fatalf("picked %d of %d under a cap above both", len(all), len(cfgs))
	}
	s := slices.Clone(all)
	slices.Sort(s)
	if len(dedupConfigs(cfgs)) != len(cfgs) || !slices.Equal(s, spread(len(cfgs), len(cfgs))) {
		t.Fatalf("pick %v is not a permutation", all)
	}
	got := pickConfigs(cfgs, 4)
	if !slices.Equal(got, all[:4]) {
		t.Fatalf("capped pick %v is not the uncapped one's start %v", got, all[:4])
	}
	if !slices.Equal(got, pickConfigs(cfgs, 4)) {
		t.Fatal("pickConfigs is not deterministic")
	}
	// Round-robin over ids, then over an id's split-K factors, distinct
	// tiles first: 10/k1/tile5, 20/tile5, 10/k4/tile5, 20/tile6.
	want := []AlgoConfig{
		{ID: 10, SplitK: 1, Tile: 5, Stages: 1},
		{ID: 20, SplitK: 1, Tile: 5},
		{ID: 10, SplitK: 4, Tile: 5, Stages: 1},
		{ID: 20, SplitK: 1, Tile: 6},
	}
	for i, j := range got {
		if cfgs[j] != want[i] {
			t.Fatalf("pick %d is %+v, want %+v (all %v)", i, cfgs[j], want[i], got)
		}
	}
	// The third of id 10's: split 1 again, the other tile before the
	// other stage count of tile 5.
	if c := cfgs[all[4]]; c != (AlgoConfig{ID: 10, SplitK: 1, Tile: 6, Stages: 1}) {
		t.Fatalf("pick 4 is %+v", c)
	}
	if got := pickConfigs(cfgs, 0); len(got) != 0 {
		t.Fatalf("pickConfigs(cfgs, 0) = %v", got)
	}
}

func TestFinalists(t *testing.T) {
	us := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Microsecond)
		}
		return d
	}
	// The default (0) always goes on, slow as it may be; ties by index.
	if got, want := finalists(us(50, 10, 30, 10, 20, 40), 3), []int{0, 1, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("finalists = %v, want %v", got, want)
	}
	if got, want := finalists(us(5, 9), 8), []int{0, 1}; !slices.Equal(got, want) {
		t.Fatalf("finalists of two = %v, want %v", got, want)
	}
	if got, want := finalists(us(5), 8), []int{0}; !slices.Equal(got, want) {
		t.Fatalf("finalists of one = %v, want %v", got, want)
	}
}
