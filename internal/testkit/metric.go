package testkit

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metric returns the value of the series of name with exactly the given
// labels (pairs of name, value): a counter's or gauge's value, or a
// histogram's sample count; 0 when the series does not exist.
func Metric(t testing.TB, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	key := name + "{"
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			key += ","
		}
		key += labels[i] + `="` + labels[i+1] + `"`
	}
	key = sortLabels(key + "}")
	series := Series(t, reg)
	if v, ok := series[key]; ok {
		return v
	}
	i := strings.IndexByte(key, '{')
	return series[key[:i]+"_count"+key[i:]]
}

// Series gathers reg into series strings such as `name{a="x",b="y"}`
// (labels sorted by name) → value; a histogram gives its _count, _sum and
// _bucket series.
func Series(t testing.TB, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := make(map[string]float64)
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			key := func(suffix string, extra ...string) string {
				var ls []string
				for _, l := range m.GetLabel() {
					ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
				}
				ls = append(ls, extra...)
				return sortLabels(mf.GetName() + suffix + "{" + strings.Join(ls, ",") + "}")
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key("")] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key("")] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", `le="`+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)+`"`)] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

// sortLabels puts the labels of a series string in name order.
func sortLabels(s string) string {
	i := strings.IndexByte(s, '{')
	body := strings.TrimSuffix(s[i+1:], "}")
	if body == "" {
		return s
	}
	ls := strings.Split(body, ",")
	slices.Sort(ls)
	return s[:i+1] + strings.Join(ls, ",") + "}"
}
