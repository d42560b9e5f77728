package main

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
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
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
		got := h.quantile(tt.q)
		if got < tt.want || float64(got-tt.want) > float64(tt.want)/subCount {
			t.Errorf("quantile(%v) = %v, want %v within 1/%d", tt.q, got, tt.want, subCount)
		}
	}
	var other histogram
	other.record(time.Hour) // clamped into the last bucket, max kept exact
	h.merge(&other)
	if h.total != 1001 || h.max != time.Hour || h.quantile(1) != time.Hour {
		t.Errorf("after merge: total %d, max %v, quantile(1) %v", h.total, h.max, h.quantile(1))
	}
}
