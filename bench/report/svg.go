package main

import (
	"fmt"
	"math"
	"strings"
)

// series is one line of a chart: its name, its colour's index in
// colours (the same implementation keeps its colour from chart to chart)
// and its points, in x order.
type series struct {
	name   string
	colour int
	x, y   []float64
}

// chart is a line chart drawn as SVG, with log-scaled axes where asked:
// the figures span decades (workers 1 to 64, rates from hundreds to
// millions), and the ratios between lines are what a reader compares.
type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	lines                 []series
}

// The palette: one colour per line, in the order the lines come.
var colours = []string{"#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6c4f9c"}

const (
	panelW, panelH = 420, 280
	marginL        = 64
	marginR        = 16
	marginT        = 30
	marginB        = 44
)

// svgGrid lays charts out in a grid of cols columns and returns the SVG.
func svgGrid(cols int, charts []chart) string {
	rows := (len(charts) + cols - 1) / cols
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", cols*panelW, rows*panelH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, c := range charts {
		fmt.Fprintf(&b, `<g transform="translate(%d,%d)">`+"\n", (i%cols)*panelW, (i/cols)*panelH)
		c.draw(&b)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func (c chart) draw(b *strings.Builder) {
	tx := func(v float64, log bool) float64 {
		if log {
			return math.Log10(v)
		}
		return v
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range c.lines {
		for i := range l.x {
			if (c.logX && l.x[i] <= 0) || (c.logY && l.y[i] <= 0) {
				continue
			}
			xmin, xmax = math.Min(xmin, tx(l.x[i], c.logX)), math.Max(xmax, tx(l.x[i], c.logX))
			ymin, ymax = math.Min(ymin, tx(l.y[i], c.logY)), math.Max(ymax, tx(l.y[i], c.logY))
		}
	}
	if math.IsInf(xmin, 1) {
		return
	}
	if !c.logY {
		ymin = 0
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	// Whole decades on a log axis, a tenth of the range on a linear one.
	step := 1.0
	if c.logY {
		ymin, ymax = math.Floor(ymin), math.Ceil(ymax)
	} else {
		step = niceStep(ymax / 5)
		ymax = math.Ceil(ymax*1.05/step) * step
	}
	w, h := float64(panelW-marginL-marginR), float64(panelH-marginT-marginB)
	px := func(v float64) float64 { return marginL + (tx(v, c.logX)-xmin)/(xmax-xmin)*w }
	py := func(v float64) float64 { return marginT + h - (tx(v, c.logY)-ymin)/(ymax-ymin)*h }

	fmt.Fprintf(b, `<text x="%d" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", marginL, esc(c.title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", marginL, marginT, w, h)
	// Ticks: the x values of the first line (the points measured), and
	// decades or fifths of the y range.
	if len(c.lines) > 0 {
		for _, x := range c.lines[0].x {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), marginT+h+14, short(x))
		}
	}
	for v0 := ymin; v0 <= ymax+step/2; v0 += step {
		v := v0
		if c.logY {
			v = math.Pow(10, v)
		}
		y := py(v)
		fmt.Fprintf(b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, marginL+w, y, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginL-4, y+4, short(v))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", marginL+w/2, panelH-8, esc(c.xLabel))
	fmt.Fprintf(b, `<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", marginT+h/2, esc(c.yLabel))
	for i, l := range c.lines {
		col := colours[l.colour%len(colours)]
		var pts []string
		for j := range l.x {
			if (c.logX && l.x[j] <= 0) || (c.logY && l.y[j] <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.x[j]), py(l.y[j])))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(pts, " "))
		for _, p := range pts {
			x, y, _ := strings.Cut(p, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`+"\n", x, y, col)
		}
		// The key sits in the title's row, right-aligned, clear of the lines.
		kx := float64(panelW-marginR) - float64(len(c.lines)-i)*70
		fmt.Fprintf(b, `<rect x="%.0f" y="9" width="10" height="10" fill="%s"/><text x="%.0f" y="18">%s</text>`+"\n",
			kx, col, kx+14, esc(l.name))
	}
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// short writes a figure with an SI suffix: 1.5k, 20M.
func short(v float64) string {
	for _, u := range []struct {
		div float64
		sfx string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v/u.div), "0"), ".") + u.sfx
		}
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
