package ptx

import (
	"math"
	"testing"
)

// formatC prints what C's printf prints where Go's fmt would differ: %g
// without a precision, NaN and infinities, %a's exponent, the h length
// modifiers and '*' widths and precisions.
func TestFormatCLikePrintf(t *testing.T) {
	f := func(v float64) uint64 { return math.Float64bits(v) }
	cases := []struct {
		format string
		args   []uint64
		want   string
	}{
		{"%g %g %g %G", []uint64{f(6.02214076e23), f(0.1), f(100000), f(1e-10)}, "6.02214e+23 0.1 100000 1E-10"},
		{"%.3g|%#g|%g", []uint64{f(3.14159), f(1), f(1234567)}, "3.14|1.00000|1.23457e+06"},
		{"%f %e %5.1f %E", []uint64{f(math.NaN()), f(math.Inf(-1)), f(math.Inf(1)), f(math.NaN())}, "nan -inf   inf NAN"},
		{"%+f|%-6g|%06f", []uint64{f(math.Inf(1)), f(math.NaN()), f(math.Inf(-1))}, "+inf|nan   |  -inf"},
		{"%a %A %a", []uint64{f(3), f(0.5), f(1e300)}, "0x1.8p+1 0X1P-1 0x1.7e43c8800759cp+996"},
		{"%hd %hu %hhd %hhx %d", []uint64{0x18000, 0x1ffff, 0x1ff, 0x1234, 0xffffffff}, "-32768 65535 -1 34 -1"},
		{"[%*d] [%-*d] [%.*f] [%*d]", []uint64{5, 42, 4, 7, 2, f(3.14159), 0xfffffffd, 9}, "[   42] [7   ] [3.14] [9  ]"},
		{"%lld %llu %lx %5.2s|%s %%", []uint64{uint64(1<<63) | 5, 1<<64 - 1, 0xabc, 0x10, 0}, "-9223372036854775803 18446744073709551615 abc    ab|(null) %"},
		{"%.*e|%k", []uint64{0xffffffff, f(2.5)}, "2.500000e+00|%k"},
	}
	for _, c := range cases {
		k := 0
		next := func(size uint64) uint64 {
			v := c.args[k]
			k++
			if size == 4 {
				v &= 0xffffffff
			}
			return v
		}
		got, _ := formatC(c.format, next, func(uint64) string { return "abcdef" })
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.format, got, c.want)
		}
	}
}
