package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// printReport reads the RESULT lines of file, of several rounds of
// dnnbench and conv.py, and prints per operation the median of each
// implementation's values and Go's over torch's.
func printReport(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	values := map[string]map[string][]float64{} // op → impl → values
	var ops []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "RESULT" {
			continue
		}
		kv := map[string]string{}
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		v, err := strconv.ParseFloat(kv["value"], 64)
		if err != nil || kv["op"] == "" || kv["impl"] == "" {
			continue
		}
		if values[kv["op"]] == nil {
			values[kv["op"]] = map[string][]float64{}
			ops = append(ops, kv["op"])
		}
		values[kv["op"]][kv["impl"]] = append(values[kv["op"]][kv["impl"]], v)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// The middle value, or the mean of the middle two of an even count:
	// two rounds give their mean, not the faster one.
	median := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		v = slices.Clone(v)
		slices.Sort(v)
		m := len(v) / 2
		if len(v)%2 == 0 {
			return (v[m-1] + v[m]) / 2
		}
		return v[m]
	}
	fmt.Printf("%-36s %10s %10s %8s %s\n", "op (TFLOP/s)", "go", "torch", "go/torch", "rounds")
	for _, op := range ops {
		g, t := median(values[op]["go"]), median(values[op]["torch"])
		ratio := "-"
		if g > 0 && t > 0 {
			ratio = fmt.Sprintf("%.3f", g/t)
		}
		fmt.Printf("%-36s %10.2f %10.2f %8s %d/%d\n", op, g, t, ratio, len(values[op]["go"]), len(values[op]["torch"]))
	}
	return nil
}
