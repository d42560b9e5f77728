// Package reqlog is the developer's request log: every API request its
// credentials authenticated, with its bodies redacted by their structure,
// written off the request path in batches and pruned after the retention.
package reqlog

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hitchdev/hitch/internal/store"
)

// Captured is what the request path hands over: plain copies, not yet
// redacted. The writer redacts it before anything is stored.
type Captured struct {
	ClientID  string
	RequestID string
	At        time.Time
	Method    string
	Path      string
	RawQuery  string
	Status    int
	Latency   time.Duration
	IP        string
	Request   CapturedBody
	Response  CapturedBody
}

// CapturedBody is the first MaxCapturedBody bytes of a body.
type CapturedBody struct {
	ContentType string
	Data        []byte
	// Size is how many bytes went by, Overflow whether Data misses some.
	Size     int
	Overflow bool
}

// QueueSize bounds the requests waiting for the writer; a request that
// finds the queue full is dropped and counted.
const QueueSize = 4096

// MaxQueuedBytes bounds the body buffers waiting for the writer: QueueSize
// requests of two MaxCapturedBody bodies each would hold 512 MiB while the
// database is slow. A request that would take the queue past it is
// dropped and counted.
const MaxQueuedBytes = 16 << 20

// A successful read (a GET, HEAD or reading POST answered below 400) is
// dropped once the queue holds half its requests or half its bytes: when
// the log cannot keep up, the other half is kept for the requests a
// developer comes to the log for, errors and writes.
const (
	readQueueSize  = QueueSize / 2
	readQueueBytes = MaxQueuedBytes / 2
)

// cpuShare is the most of the machine's CPU the writer takes (of one CPU,
// a writer being one goroutine): on a machine saturated with requests the
// requests get the rest, and what the writer cannot store in its share is
// dropped, successful reads first. On 2 CPUs the writer rests three times
// as long as each batch took.
var cpuShare = min(1, float64(runtime.GOMAXPROCS(0))/8)

// batchSize is the most requests one insert writes.
const batchSize = 100

// Writer records captured requests on a goroutine of its own, batching
// inserts, so that a request never waits for the database.
type Writer struct {
	store   store.Store
	log     *slog.Logger
	queue   chan item
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	closing sync.Once
	dropped prometheus.Counter
	written prometheus.Counter
	// nDropped and nWritten are the counters' values, for Stats.
	nDropped, nWritten atomic.Int64
	// queuedBytes is the capacity of the queued requests' body buffers.
	queuedBytes atomic.Int64
	// droppedBy counts each developer's requests dropped (client id →
	// *atomic.Int64), for their dashboard.
	droppedBy sync.Map
}

// item is a captured request, or a flush marker closed once everything
// queued before it is written.
type item struct {
	c       *Captured
	flushed chan struct{}
}

// NewWriter makes a writer to st; its goroutine starts with the first
// request.
func NewWriter(st store.Store, log *slog.Logger) *Writer {
	return &Writer{store: st, log: log, queue: make(chan item, QueueSize), stop: make(chan struct{}),
		done: make(chan struct{}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "hitch_request_log_dropped_total",
			Help: "API requests left out of the request log because its queue was full or its insert failed."}),
		written: prometheus.NewCounter(prometheus.CounterOpts{Name: "hitch_request_log_written_total",
			Help: "API requests written to the request log."})}
}

// Register adds the writer's counters to reg.
func (w *Writer) Register(reg prometheus.Registerer) error {
	if err := reg.Register(w.dropped); err != nil {
		return err
	}
	return reg.Register(w.written)
}

// Stats reports how many requests were written and dropped so far.
func (w *Writer) Stats() (written, dropped int64) { return w.nWritten.Load(), w.nDropped.Load() }

// Record queues c for writing, or drops it when the queue is full (half
// full, for a successful read): it never blocks.
func (w *Writer) Record(c *Captured) {
	w.once.Do(func() { go w.run() })
	n := captureBytes(c)
	queueSize, maxBytes := QueueSize, int64(MaxQueuedBytes)
	if c.successfulRead() {
		queueSize, maxBytes = readQueueSize, readQueueBytes
	}
	if w.queuedBytes.Add(n) <= maxBytes && len(w.queue) < queueSize {
		select {
		case w.queue <- item{c: c}:
			return
		default:
		}
	}
	w.drop(c.ClientID)
	w.release(c)
}

// drop counts a request of a developer left out of the log.
func (w *Writer) drop(clientID string) {
	w.dropped.Inc()
	w.nDropped.Add(1)
	v, ok := w.droppedBy.Load(clientID)
	if !ok {
		v, _ = w.droppedBy.LoadOrStore(clientID, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// Dropped reports how many of a developer's requests were left out of the
// log since the writer started.
func (w *Writer) Dropped(clientID string) int64 {
	if v, ok := w.droppedBy.Load(clientID); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// readingPOSTs are the API's POST routes that change nothing.
var readingPOSTs = map[string]bool{"/merchant/list": true, "/transactions/sync": true,
	"/detected-accounts/search": true, "/detected-accounts/list": true, "/detected-accounts/sync": true}

func (c *Captured) successfulRead() bool {
	read := c.Method == "GET" || c.Method == "HEAD" || c.Method == "POST" && readingPOSTs[c.Path]
	return read && c.Status < 400
}

// release gives a captured request's buffers back, once written or
// dropped.
func (w *Writer) release(c *Captured) {
	w.queuedBytes.Add(-captureBytes(c))
	releaseCapture(c)
}

func captureBytes(c *Captured) int64 { return int64(cap(c.Request.Data) + cap(c.Response.Data)) }

// Flush returns once every request recorded before it is written (or
// dropped), or when ctx ends.
func (w *Writer) Flush(ctx context.Context) error {
	w.once.Do(func() { go w.run() })
	flushed := make(chan struct{})
	select {
	case w.queue <- item{flushed: flushed}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-flushed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued and stops the writer, or gives up when ctx
// ends. Requests recorded after it are not written.
func (w *Writer) Close(ctx context.Context) error {
	// A writer that never started has nothing to write.
	w.once.Do(func() { close(w.done) })
	w.closing.Do(func() { close(w.stop) })
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]*Captured, 0, batchSize)
	var flushed []chan struct{}
	for {
		var it item
		select {
		case it = <-w.queue:
		case <-w.stop:
			w.drain()
			return
		}
		batch, flushed = w.take(it, batch, flushed)
	more:
		for len(batch) < batchSize {
			select {
			case it = <-w.queue:
				batch, flushed = w.take(it, batch, flushed)
			default:
				break more
			}
		}
		start := time.Now()
		w.write(batch)
		for _, f := range flushed {
			close(f)
		}
		batch, flushed = batch[:0], flushed[:0]
		if !w.rest(time.Since(start)) {
			w.drain()
			return
		}
	}
}

// rest pauses the writer after a batch that took busy, so that it takes at
// most cpuShare of a CPU; it reports false if the writer is told to stop
// meanwhile.
func (w *Writer) rest(busy time.Duration) bool {
	pause := time.Duration(float64(busy) * (1 - cpuShare) / cpuShare)
	if pause <= 0 {
		return true
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stop:
		return false
	}
}

func (w *Writer) take(it item, batch []*Captured, flushed []chan struct{}) ([]*Captured, []chan struct{}) {
	if it.flushed != nil {
		return batch, append(flushed, it.flushed)
	}
	return append(batch, it.c), flushed
}

// drain writes what is queued when the writer stops.
func (w *Writer) drain() {
	batch := make([]*Captured, 0, batchSize)
	for {
		select {
		case it := <-w.queue:
			if it.flushed != nil {
				close(it.flushed)
				continue
			}
			if batch = append(batch, it.c); len(batch) == batchSize {
				w.write(batch)
				batch = batch[:0]
			}
		default:
			w.write(batch)
			return
		}
	}
}

// write redacts and inserts a batch; a failed insert drops it (counted and
// logged), so that a database outage never holds requests in memory.
func (w *Writer) write(batch []*Captured) {
	if len(batch) == 0 {
		return
	}
	entries := make([]*store.RequestLog, len(batch))
	for i, c := range batch {
		entries[i] = Redact(c)
		w.release(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.store.RequestLogInsert(ctx, entries); err != nil {
		for _, e := range entries {
			w.drop(e.ClientID)
		}
		w.log.Warn("request log: insert failed", "requests", len(entries), "error", err)
		return
	}
	w.written.Add(float64(len(entries)))
	w.nWritten.Add(int64(len(entries)))
}

// Redact turns a captured request into the row stored: bodies and query
// redacted, the user and the error code read from them.
func Redact(c *Captured) *store.RequestLog {
	query, user := RedactQuery(c.Path, c.RawQuery)
	req := RedactRequestBody(c.Path, c.Request.ContentType, c.Request.Data, c.Request.Size, c.Request.Overflow)
	resp := RedactBody(c.Path, c.Response.ContentType, c.Response.Data, c.Response.Size, c.Response.Overflow)
	if user == "" {
		user = req.ExternalUserID
	}
	errorCode := ""
	if c.Status >= 400 {
		errorCode = resp.ErrorCode
	}
	return &store.RequestLog{
		// The caller may choose the request id (X-Request-Id).
		ClientID: c.ClientID, RequestID: redactString(c.RequestID), CreatedAt: c.At, Method: c.Method, Path: redactPath(c.Path),
		Query: query, Status: c.Status, ErrorCode: errorCode, Latency: c.Latency.Truncate(time.Microsecond),
		IP: cleanText(c.IP, 64), ExternalUserID: user, RequestBody: req.Text, ResponseBody: resp.Text,
	}
}

// bufferPool recycles the capture buffers of bodies.
var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Buffer returns an empty capture buffer; the writer gives it back once
// the request is redacted. A body takes one at its first bytes (Keep).
func Buffer() []byte { return (*bufferPool.Get().(*[]byte))[:0] }

func releaseCapture(c *Captured) {
	for _, b := range [][]byte{c.Request.Data, c.Response.Data} {
		if b != nil && cap(b) <= MaxCapturedBody {
			b = b[:0]
			bufferPool.Put(&b)
		}
	}
	c.Request.Data, c.Response.Data = nil, nil
}

// Keep copies b into the body while it fits in MaxCapturedBody, counting
// every byte.
func (b *CapturedBody) Keep(p []byte) {
	b.Size += len(p)
	if b.Overflow || len(b.Data)+len(p) > MaxCapturedBody {
		// A body over the cap is stored as a placeholder: what was copied
		// of it need not wait in the queue.
		b.Overflow, b.Data = true, nil
		return
	}
	if b.Data == nil && len(p) > 0 {
		b.Data = Buffer()
	}
	b.Data = append(b.Data, p...)
}
