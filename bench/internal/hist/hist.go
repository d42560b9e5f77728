// Package hist counts latencies in a fixed-size log-linear histogram, so
// that a benchmark's memory does not grow with its request count.
package hist

import (
	"math"
	"math/bits"
	"time"
)

// The buckets are log-linear, as in HdrHistogram: one per nanosecond below
// 2·subCount ns, then subCount per power of two, so a bucket's bounds are
// within 1/subCount (under 1%) of each other.
const (
	subBits  = 7
	subCount = 1 << subBits
	// maxExp caps recorded latencies below 2^maxExp ns (about 68 s).
	maxExp     = 36
	numBuckets = (maxExp - subBits + 1) * subCount
)

// Histogram counts latencies. The zero value is empty and ready to use.
type Histogram struct {
	counts [numBuckets]int64
	total  int64
	max    time.Duration
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	v = min(v, 1<<maxExp-1)
	h.counts[bucketOf(v)]++
	h.total++
	h.max = max(h.max, d)
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, n := range o.counts {
		h.counts[i] += n
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// Count is how many latencies were recorded.
func (h *Histogram) Count() int64 { return h.total }

// Max is the largest latency recorded, exact even above the last bucket.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile is the smallest bucket bound at or above the q-th fraction of the
// recorded latencies (never above the largest one); 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(h.total))), 1)
	var seen int64
	for i, n := range h.counts {
		seen += n
		if seen >= rank && i < numBuckets-1 {
			return min(time.Duration(upperBound(i)), h.max)
		}
		if seen >= rank {
			return h.max // the last bucket also holds clamped values
		}
	}
	return h.max
}

// bucketOf is the bucket holding v nanoseconds.
func bucketOf(v uint64) int {
	if v < 2*subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return (shift+1)*subCount + int(v>>shift) - subCount
}

// upperBound is the largest value, in nanoseconds, that falls in bucket i.
func upperBound(i int) uint64 {
	if i < 2*subCount {
		return uint64(i)
	}
	shift := i/subCount - 1
	mantissa := uint64(i%subCount + subCount)
	return (mantissa+1)<<shift - 1
}
