package hist

import (
	"testing"
	"time"
)

func TestBucketsAreContiguous(t *testing.T) {
	t.Parallel()
	for i := 1; i < numBuckets; i++ {
		lowest := upperBound(i-1) + 1
		if got := bucketOf(lowest); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", lowest, got, i)
		}
		if got := bucketOf(upperBound(i)); got != i {
			t.Fatalf("bucketOf(upperBound(%d)) = %d", i, got)
		}
	}
	if got := bucketOf(1<<maxExp - 1); got != numBuckets-1 {
		t.Fatalf("largest value in bucket %d, want the last, %d", got, numBuckets-1)
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 500 * time.Microsecond},
		{0.9, 900 * time.Microsecond},
		{0.99, 990 * time.Microsecond},
		{1, time.Millisecond},
	}
	for _, tt := range tests {
		got := h.Quantile(tt.q)
		if got < tt.want || float64(got-tt.want) > float64(tt.want)/subCount {
			t.Errorf("Quantile(%v) = %v, want %v within 1/%d", tt.q, got, tt.want, subCount)
		}
	}
	var other Histogram
	other.Record(time.Hour) // clamped into the last bucket, max kept exact
	h.Merge(&other)
	if h.Count() != 1001 || h.Max() != time.Hour || h.Quantile(1) != time.Hour {
		t.Errorf("after Merge: count %d, max %v, Quantile(1) %v", h.Count(), h.Max(), h.Quantile(1))
	}
}

func TestEmpty(t *testing.T) {
	t.Parallel()
	var h Histogram
	if h.Count() != 0 || h.Max() != 0 || h.Quantile(0.5) != 0 {
		t.Errorf("empty: count %d, max %v, Quantile(0.5) %v", h.Count(), h.Max(), h.Quantile(0.5))
	}
}
