package node

import (
	"context"
	"sort"
	"strings"

	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/transport/console"
	dto "github.com/prometheus/client_model/go"
)

// healthFamily says whether the console's health page shows a metric.
func healthFamily(name string) bool {
	switch strings.TrimPrefix(name, metrics.Namespace+"_") {
	case "backlog_jobs", "platform_backlog_jobs", "jobs_settled_total", "rate_limited_total", "receiver_failures_total":
		return true
	}
	return false
}

// healthNumbers reads the console's health numbers from the same
// registry /metrics serves, with the node's worker count.
func healthNumbers(m *metrics.Metrics, workers int) func(ctx context.Context) ([]console.Number, error) {
	return func(ctx context.Context) ([]console.Number, error) {
		fams, err := m.Registry().Gather()
		if err != nil {
			return nil, err
		}
		out := []console.Number{{Name: metrics.Namespace + "_workers", Value: float64(workers)}}
		for _, f := range fams {
			if !strings.HasPrefix(f.GetName(), metrics.Namespace+"_") || !healthFamily(f.GetName()) {
				continue
			}
			for _, mt := range f.GetMetric() {
				var v float64
				switch {
				case mt.GetGauge() != nil:
					v = mt.GetGauge().GetValue()
				case mt.GetCounter() != nil:
					v = mt.GetCounter().GetValue()
				default:
					continue
				}
				out = append(out, console.Number{Name: f.GetName(), Labels: labelText(mt.GetLabel()), Value: v})
			}
		}
		return out, ctx.Err()
	}
}

// labelText writes labels as /metrics does: platform="telegram",state="failed".
func labelText(ls []*dto.LabelPair) string {
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, l.GetName()+"=\""+l.GetValue()+"\"")
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
