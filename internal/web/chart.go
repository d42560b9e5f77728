package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// chart is a small chart of time buckets, drawn on the server as inline
// SVG so that the dashboard needs no script: bars (stacked when several
// series) or lines. The SVG is built from numbers and from text escaped
// here; the "chart" template shows it in a figure with the same figures
// as a table.
type chart struct {
	// ID is unique on the page; the SVG is labelled by ID+"-caption".
	ID    string
	Title string
	// Axis names the buckets' column of the table ("Hour (UTC)").
	Axis string
	// Unit follows each value ("%", " ms"; "" for counts).
	Unit   string
	Labels []string
	Series []chartSeries
	Bars   bool
}

// chartSeries is one series; NaN is a bucket without a value (no line
// point, "–" in the table).
type chartSeries struct {
	Name   string
	Color  string // one of the chart colours below
	Values []float64
}

// Chart colours: fixed, never taken from input.
const (
	colorOK   = "#1c7c4a"
	colorBad  = "#b3261e"
	colorP50  = "#3446d4"
	colorP95  = "#b26b00"
	colorP99  = "#7b3fc4"
	colorMore = "#5b6270"
)

// Drawing area, in viewBox units.
const (
	chartW, chartH                     = 600.0, 210.0
	padLeft, padRight, padTop, padDown = 52.0, 8.0, 24.0, 26.0
)

// value formats a figure as the table and the SVG's titles show it.
func (c *chart) value(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + c.Unit
}

// top is a round upper bound of the values: 1, 2 or 5 times a power of ten.
func (c *chart) top() float64 {
	m := 0.0
	for i := range c.Labels {
		sum := 0.0
		for _, s := range c.Series {
			v := s.Values[i]
			if math.IsNaN(v) {
				continue
			}
			if c.Bars {
				sum += v
			} else {
				sum = max(sum, v)
			}
		}
		m = max(m, sum)
	}
	if m <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(m)))
	for _, f := range []float64{1, 2, 5, 10} {
		if m <= f*p {
			return f * p
		}
	}
	return 10 * p
}

// SVG draws the chart. Only numbers formatted here and text escaped here
// go into it.
func (c *chart) SVG() template.HTML {
	esc := template.HTMLEscapeString
	var b strings.Builder
	top := c.top()
	plotW, plotH := chartW-padLeft-padRight, chartH-padTop-padDown
	n := max(len(c.Labels), 1)
	slot := plotW / float64(n)
	y := func(v float64) float64 { return padTop + plotH - v/top*plotH }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="100%%" role="img" aria-labelledby="%s-caption" class="chart-svg">`,
		chartW, chartH, esc(c.ID))
	// Axes, three grid lines and their values.
	for _, f := range []float64{0, 0.5, 1} {
		yy := y(top * f)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e3e6ec"/>`, padLeft, yy, chartW-padRight, yy)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" font-size="13" text-anchor="end" fill="#5b6270">%s</text>`, padLeft-4, yy+4,
			esc(c.value(top*f)))
	}
	// Every k-th bucket is labelled, at most 6.
	k := max(1, (n+5)/6)
	for i, l := range c.Labels {
		if i%k == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="13" text-anchor="middle" fill="#5b6270">%s</text>`,
				padLeft+slot*(float64(i)+0.5), chartH-8, esc(l))
		}
	}
	// Legend, top left.
	x := padLeft
	for _, s := range c.Series {
		fmt.Fprintf(&b, `<rect x="%.1f" y="6" width="10" height="10" fill="%s"/><text x="%.1f" y="15" font-size="11" fill="#15171c">%s</text>`,
			x, esc(s.Color), x+14, esc(s.Name))
		x += 24 + 7*float64(len([]rune(s.Name)))
	}
	if c.Bars {
		for i, l := range c.Labels {
			base := 0.0
			for _, s := range c.Series {
				v := s.Values[i]
				if math.IsNaN(v) || v == 0 {
					continue
				}
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`,
					padLeft+slot*float64(i)+slot*0.15, y(base+v), slot*0.7, y(base)-y(base+v), esc(s.Color), esc(l), esc(s.Name),
					esc(c.value(v)))
				base += v
			}
		}
	} else {
		for _, s := range c.Series {
			var pts []string
			for i, l := range c.Labels {
				v := s.Values[i]
				if math.IsNaN(v) {
					continue
				}
				cx, cy := padLeft+slot*(float64(i)+0.5), y(v)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", cx, cy))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %s</title></circle>`, cx, cy,
					esc(s.Color), esc(l), esc(s.Name), esc(c.value(v)))
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), esc(s.Color))
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#5b6270"/>`, padLeft, padTop+plotH, chartW-padRight, padTop+plotH)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: built above from numbers and escaped text only
}

// chartRow is one bucket of the chart's table.
type chartRow struct {
	Label string
	Cells []string
}

// Rows are the chart's figures as its table shows them.
func (c *chart) Rows() []chartRow {
	rows := make([]chartRow, len(c.Labels))
	for i, l := range c.Labels {
		rows[i].Label = l
		for _, s := range c.Series {
			rows[i].Cells = append(rows[i].Cells, c.value(s.Values[i]))
		}
	}
	return rows
}
