package ptx

import (
	"slices"
	"sort"
)

// rangeSet collects byte ranges, merging each with the last one added
// when they touch (the common case of a warp's neighbouring accesses),
// and compacting when it grows.
type rangeSet struct {
	r     []span
	limit int
}

func (s *rangeSet) add(lo, hi uint64) {
	if n := len(s.r); n > 0 {
		last := &s.r[n-1]
		if lo <= last.end && hi >= last.base {
			last.base = min(last.base, lo)
			last.end = max(last.end, hi)
			return
		}
	}
	s.r = append(s.r, span{lo, hi})
	if s.limit == 0 {
		s.limit = 4096
	}
	if len(s.r) >= s.limit {
		s.r = s.compact()
		if len(s.r) > s.limit/2 {
			s.limit *= 2
		}
	}
}

// compact sorts and merges the ranges.
func (s *rangeSet) compact() []span {
	sort.Slice(s.r, func(i, j int) bool { return s.r[i].base < s.r[j].base })
	out := s.r[:0]
	for _, x := range s.r {
		if n := len(out); n > 0 && x.base <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

func mergeAccesses(a []Access) []Access {
	var r, w rangeSet
	for _, x := range a {
		if x.Write {
			w.r = append(w.r, span{x.Addr, x.Addr + x.Size})
		} else {
			r.r = append(r.r, span{x.Addr, x.Addr + x.Size})
		}
	}
	var out []Access
	for _, s := range r.compact() {
		out = append(out, Access{s.base, s.end - s.base, false})
	}
	for _, s := range w.compact() {
		out = append(out, Access{s.base, s.end - s.base, true})
	}
	return out
}

func sortPrints(p []printRecord) {
	slices.SortStableFunc(p, func(a, b printRecord) int {
		if a.block != b.block {
			if a.block < b.block {
				return -1
			}
			return 1
		}
		if a.seq < b.seq {
			return -1
		}
		if a.seq > b.seq {
			return 1
		}
		return 0
	})
}
