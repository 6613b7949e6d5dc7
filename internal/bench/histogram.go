package bench

import (
	"math/bits"
	"time"
)

// subBits is the precision of the histogram: each power of two is split
// into 2^subBits buckets, so a recorded value is off by less than 1/64
// (1.6 %) of itself.
const subBits = 6

// Histogram counts durations in log-linear buckets (in the manner of
// HdrHistogram): constant memory, about 1.6 % relative error, exact count,
// minimum and maximum. It is not safe for concurrent use; each load
// worker keeps its own and they are merged at the end.
type Histogram struct {
	counts   [64 << subBits]uint32
	n        uint64
	min, max time.Duration
	sum      time.Duration
}

// bucket returns the bucket of a non-negative duration in nanoseconds.
func bucket(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	exp := bits.Len64(v) - subBits - 1 // how far v is shifted to keep subBits+1 bits
	return (exp+1)<<subBits | int(v>>uint(exp))&(1<<subBits-1)
}

// bucketLow returns the smallest value of bucket i.
func bucketLow(i int) uint64 {
	if i < 1<<subBits {
		return uint64(i)
	}
	exp := i>>subBits - 1
	return (1<<subBits | uint64(i)&(1<<subBits-1)) << uint(exp)
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucket(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest recorded duration.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean returns the mean of the recorded durations.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Quantile returns the duration below which the fraction q of the
// recorded durations fall (the middle of its bucket, within the minimum and
// maximum).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			lo, hi := bucketLow(i), bucketLow(i+1)
			v := time.Duration(lo + (hi-lo)/2)
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
