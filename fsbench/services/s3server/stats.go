package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// statsPath answers with the counters; outside the S3 namespace (bucket names have no '_').
const statsPath = "/_fsbench/stats"

// opCounts is what one S3 operation moved since the server started.
type opCounts struct {
	Requests int64   `json:"requests"`
	BytesIn  int64   `json:"bytes_in"`  // request bodies read (uploads)
	BytesOut int64   `json:"bytes_out"` // response bodies written (downloads)
	LastEnd  float64 `json:"last_end"`  // unix seconds when its last request ended (0: none yet)
}

// counting wraps the S3 handler and counts every request by operation, bytes as they flow, so a
// snapshot taken while an upload is in flight shows what has arrived so far.
type counting struct {
	next http.Handler
	mu   sync.Mutex
	ops  map[string]*opCounts
	// per operation, when its first request after the last stats answer began (a PUT: the first with a
	// body): where a tool's uploads began after a snapshot taken just before it started
	firstSince map[string]float64
}

func newCounting(next http.Handler) *counting {
	return &counting{next: next, ops: map[string]*opCounts{}, firstSince: map[string]float64{}}
}

func (c *counting) add(op string, f func(*opCounts)) {
	c.mu.Lock()
	o := c.ops[op]
	if o == nil {
		o = &opCounts{}
		c.ops[op] = o
	}
	f(o)
	c.mu.Unlock()
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == statsPath {
		c.serveStats(w, r)
		return
	}
	op := operation(r)
	begun := float64(time.Now().UnixNano()) / 1e9
	c.add(op, func(o *opCounts) {
		o.Requests++
		// an upload's start counts once it carries data: s3fs creates a file with an empty PUT at open
		if _, seen := c.firstSince[op]; !seen && (r.ContentLength != 0 || r.Method != http.MethodPut) {
			c.firstSince[op] = begun
		}
	})
	if r.Body != nil {
		r.Body = &countedBody{ReadCloser: r.Body, add: func(n int64) { c.add(op, func(o *opCounts) { o.BytesIn += n }) }}
	}
	cw := &countedWriter{ResponseWriter: w, add: func(n int64) { c.add(op, func(o *opCounts) { o.BytesOut += n }) }}
	defer func() {
		end := float64(time.Now().UnixNano()) / 1e9
		c.add(op, func(o *opCounts) { o.LastEnd = end })
	}()
	c.next.ServeHTTP(cw, r)
}

func (c *counting) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	c.mu.Lock()
	ops := make(map[string]opCounts, len(c.ops))
	for k, v := range c.ops {
		ops[k] = *v
	}
	first := c.firstSince
	c.firstSince = map[string]float64{}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"server": "fsbench-s3",
		"now":    float64(time.Now().UnixNano()) / 1e9,
		"ops":    ops,
		// per operation, the start of its first request since the previous stats answer
		"first_since_stats": first,
	})
}

// operation names an S3 request by its method, path depth and query (path-style addressing).
func operation(r *http.Request) string {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if path == "" {
		return "list_buckets"
	}
	q := r.URL.Query()
	_, upload := q["uploadId"]
	if !strings.Contains(strings.TrimSuffix(path, "/"), "/") { // the bucket itself
		switch r.Method {
		case http.MethodGet:
			if _, ok := q["uploads"]; ok {
				return "list_multipart"
			}
			return "list_objects"
		case http.MethodPost:
			return "delete_objects"
		default:
			return strings.ToLower(r.Method) + "_bucket"
		}
	}
	switch r.Method {
	case http.MethodGet:
		if upload {
			return "list_parts"
		}
		return "get_object"
	case http.MethodHead:
		return "head_object"
	case http.MethodPut:
		if upload {
			if r.Header.Get("x-amz-copy-source") != "" {
				return "upload_part_copy"
			}
			return "upload_part"
		}
		if r.Header.Get("x-amz-copy-source") != "" {
			return "copy_object"
		}
		return "put_object"
	case http.MethodPost:
		if upload {
			return "complete_multipart"
		}
		return "create_multipart"
	case http.MethodDelete:
		if upload {
			return "abort_multipart"
		}
		return "delete_object"
	}
	return "other"
}

type countedBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.add(int64(n))
	}
	return n, err
}

type countedWriter struct {
	http.ResponseWriter
	add func(int64)
}

func (w *countedWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if n > 0 {
		w.add(int64(n))
	}
	return n, err
}

// Flush passes on to the real writer where it can (streamed responses).
func (w *countedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
