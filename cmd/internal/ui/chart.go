package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/admin"
)

// The charts are SVG drawn on the server: integer coordinates, one path
// per series, styled by class in app.css (no inline style), so that a
// hundred of them stay small.

// series is one line of a chart: a name, its class in app.css and its
// values per minute.
type series struct {
	Name   string
	Class  string
	values []int64
	Total  int64
	D      string // the path, once drawn
}

// processed, failed and retried are the series of a queue's history:
// attempts that ended, those that failed (retried or died), and those
// retried.
func processed(m admin.HistoryMinute) int64 { return m.Succeeded + m.Failed() }
func failed(m admin.HistoryMinute) int64    { return m.Failed() }
func retried(m admin.HistoryMinute) int64   { return m.Retried }

// seriesOf is the series of minutes by value.
func seriesOf(name, class string, minutes []admin.HistoryMinute, value func(admin.HistoryMinute) int64) series {
	s := series{Name: name, Class: class, values: make([]int64, len(minutes))}
	for i, m := range minutes {
		s.values[i] = value(m)
		s.Total += s.values[i]
	}
	return s
}

// spark is the small chart of a table row: steps of one unit per minute,
// ten units high, every series on the scale of the first.
type spark struct {
	Width  int
	Series []series
}

// sparkHeight is the height of a spark's scale: values map to y from 9
// (zero) to 0 (the largest), one digit each.
const sparkHeight = 9

// newSpark draws ss (the first the largest) as a spark.
func newSpark(ss ...series) spark {
	top := int64(0)
	for _, v := range ss[0].values {
		top = max(top, v)
	}
	for i := range ss {
		ss[i].D = stepPath(ss[i].values, top)
	}
	return spark{Width: max(len(ss[0].values), 1), Series: ss}
}

// stepPath is values as steps one unit wide: "M0 9h3V4h1V9h56".
func stepPath(values []int64, top int64) string {
	var b strings.Builder
	b.Grow(4 * len(values))
	run, last := 0, -1
	flush := func() {
		if run > 0 {
			b.WriteByte('h')
			b.WriteString(strconv.Itoa(run))
		}
	}
	for i, v := range values {
		y := sparkHeight - scale(v, top, sparkHeight)
		switch {
		case i == 0:
			b.WriteString("M0 ")
			b.WriteString(strconv.Itoa(y))
		case y != last:
			flush()
			run = 0
			b.WriteByte('V')
			b.WriteString(strconv.Itoa(y))
		}
		run++
		last = y
	}
	flush()
	return b.String()
}

// scale maps v of 0..top to 0..height, rounded, a value above zero to at
// least 1 so that it shows.
func scale(v, top int64, height int) int {
	if top <= 0 || v <= 0 {
		return 0
	}
	return max(int((v*int64(height)+top/2)/top), 1)
}

// chart is the larger chart of the overview and a queue's page: lines
// over a plot of plotW × plotH units, with the scale's top and the times
// of the first, middle and last minute as labels.
type chart struct {
	Series []series
	Top    string // the label of the scale's top
	Times  [3]string
}

// Geometry of a chart, in the units of its viewBox (0 0 660 130).
const (
	plotX = 44
	plotY = 8
	plotW = 600
	plotH = 100
)

// newChart draws ss over minutes.
func newChart(minutes []admin.HistoryMinute, ss ...series) chart {
	top := int64(0)
	for _, s := range ss {
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	top = niceCeil(top)
	c := chart{Series: ss, Top: formatCount(top)}
	for i := range c.Series {
		c.Series[i].D = linePath(c.Series[i].values, top)
	}
	if n := len(minutes); n > 0 {
		c.Times = [3]string{clock(minutes[0].Start), clock(minutes[n/2].Start), clock(minutes[n-1].Start)}
	}
	return c
}

// clock is t's time of day in UTC.
func clock(t time.Time) string { return t.UTC().Format("15:04") }

// linePath is values as a line across the plot.
func linePath(values []int64, top int64) string {
	var b strings.Builder
	b.Grow(8 * len(values))
	n := len(values)
	for i, v := range values {
		x := plotX
		if n > 1 {
			x += (i*plotW + (n-1)/2) / (n - 1)
		}
		y := plotY + plotH - scale(v, top, plotH)
		switch i {
		case 0:
			b.WriteByte('M')
		case 1:
			b.WriteByte('L')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(y))
	}
	return b.String()
}

// niceCeil is the least of 1, 2 or 5 times a power of ten at or above n
// (1 for n ≤ 1).
func niceCeil(n int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
		if p > n {
			return n
		}
	}
}

// sumHistory adds up the histories of several queues minute by minute (by
// position: every queue's history covers the same minutes).
func sumHistory(histories [][]admin.HistoryMinute) []admin.HistoryMinute {
	var sum []admin.HistoryMinute
	for _, h := range histories {
		if len(h) > len(sum) {
			sum = append(sum, make([]admin.HistoryMinute, len(h)-len(sum))...)
		}
		for i, m := range h {
			s := &sum[i]
			s.Start = m.Start
			s.Succeeded += m.Succeeded
			s.Retried += m.Retried
			s.Died += m.Died
			for b := range s.Lag {
				s.Lag[b] += m.Lag[b]
			}
		}
	}
	return sum
}
