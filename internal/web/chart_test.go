package web

import (
	"bytes"
	"encoding/xml"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// figureOf renders a chart as the pages do and reads it back as XML: the
// titles of its marks, and its table's rows.
func figureOf(t *testing.T, c *chart) (titles []string, table [][]string) {
	t.Helper()
	tmpl := template.Must(template.New("").ParseFS(dashboardFS, "templates/dashboard/chart.html"))
	var out bytes.Buffer
	if err := tmpl.ExecuteTemplate(&out, "chart", c); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&out)
	var stack []string
	var row []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, out.String())
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			if tok.Name.Local == "svg" {
				if attr(tok, "role") != "img" || attr(tok, "aria-labelledby") != c.ID+"-caption" || attr(tok, "viewBox") == "" {
					t.Fatalf("svg attributes: %+v", tok.Attr)
				}
			}
			if tok.Name.Local == "tr" {
				row = nil
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if tok.Name.Local == "tr" && slices.Contains(stack, "tbody") {
				table = append(table, row)
			}
		case xml.CharData:
			top := ""
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			switch {
			case top == "title" && slices.Contains(stack, "svg"):
				titles = append(titles, string(tok))
			case (top == "td" || top == "th") && slices.Contains(stack, "tbody"):
				row = append(row, string(tok))
			}
		}
	}
	return titles, table
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// The SVG is well-formed, labelled by its caption, escapes text, and its
// marks say the same figures as its table.
func TestChart(t *testing.T) {
	for _, bars := range []bool{true, false} {
		c := &chart{ID: "c1", Title: "Attempts <b>", Axis: "Hour", Unit: " ms", Bars: bars,
			Labels: []string{"10:00", "<script>", "12:00"},
			Series: []chartSeries{
				{Name: "p50", Color: colorP50, Values: []float64{120, math.NaN(), 7.5}},
				{Name: `p95 "x"`, Color: colorP95, Values: []float64{300, 0, 40}},
			}}
		titles, table := figureOf(t, c)
		want := [][]string{{"10:00", "120 ms", "300 ms"}, {"<script>", "–", "0 ms"}, {"12:00", "7.5 ms", "40 ms"}}
		if !slices.EqualFunc(table, want, slices.Equal) {
			t.Fatalf("table = %q, want %q", table, want)
		}
		// A mark per value: bars leave out zeros, nothing is drawn for a
		// missing value.
		var marks []string
		for i, row := range want {
			for j, cell := range row[1:] {
				if cell == "–" || (bars && cell == "0 ms") {
					continue
				}
				marks = append(marks, want[i][0]+", "+c.Series[j].Name+": "+cell)
			}
		}
		slices.Sort(marks)
		slices.Sort(titles)
		if !slices.Equal(titles, marks) {
			t.Fatalf("bars %v: titles = %q, want %q", bars, titles, marks)
		}
		if svg := string(c.SVG()); strings.Contains(svg, "<script>") || strings.Contains(svg, "<b>") {
			t.Fatalf("text not escaped: %s", svg)
		}
	}
}

// The axis tops are round and hold the highest bar or point.
func TestChartTop(t *testing.T) {
	for _, tc := range []struct {
		bars   bool
		values [2][]float64
		want   float64
	}{
		{true, [2][]float64{{3, 1}, {4, 0}}, 10},
		{false, [2][]float64{{3, 1}, {4, 0}}, 5},
		{false, [2][]float64{{0, 0}, {0, 0}}, 1},
		{true, [2][]float64{{150, math.NaN()}, {30, 1}}, 200},
	} {
		c := &chart{Labels: []string{"a", "b"}, Bars: tc.bars,
			Series: []chartSeries{{Values: tc.values[0]}, {Values: tc.values[1]}}}
		if got := c.top(); got != tc.want {
			t.Errorf("top(%v, bars %v) = %v, want %v", tc.values, tc.bars, got, tc.want)
		}
	}
}
