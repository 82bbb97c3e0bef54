// fsbench-s3: a small S3 server for fsbench's lab campaigns (FUSE clients for object storage, S3A,
// JuiceFS on S3, objbench), built on the gofakes3 library. Data lives in memory or in one bolt file;
// either way gofakes3 holds a multipart upload's parts in memory until it completes, and bolt caps an
// object at 2 GiB: objects of many GiB need a real store.
//
//	fsbench-s3 -addr 127.0.0.1:9000 -backend bolt -db /var/tmp/s3.db -bucket bench -bucket other
//
// It does not check credentials: clients may sign with any key, which fsbench generates per run and
// masks like every secret. It logs one line when it listens, then errors only.
//
// It counts what it serves, per S3 operation (requests, body bytes in and out, when the last one
// ended), and answers GET /_fsbench/stats with them as JSON (stats.go): fsbench compares them with
// what a benchmark tool says it moved. "_fsbench" is no valid bucket name, so no S3 request reaches it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

type buckets []string

func (b *buckets) String() string     { return strings.Join(*b, ",") }
func (b *buckets) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "address to listen on")
	backend := flag.String("backend", "mem", "mem (in memory) or bolt (one file, -db)")
	db := flag.String("db", "fsbench-s3.db", "the bolt file of -backend bolt")
	var names buckets
	flag.Var(&names, "bucket", "a bucket to create at start (repeatable)")
	flag.Parse()

	var store gofakes3.Backend
	switch *backend {
	case "mem":
		store = s3mem.New()
	case "bolt":
		b, err := s3bolt.NewFile(*db)
		if err != nil {
			log.Fatalf("fsbench-s3: cannot open %s: %v", *db, err)
		}
		store = b
	default:
		fmt.Fprintf(os.Stderr, "fsbench-s3: -backend is mem or bolt, not %q\n", *backend)
		os.Exit(2)
	}
	for _, name := range names {
		if err := store.CreateBucket(name); err != nil && !gofakes3.IsAlreadyExists(err) {
			log.Fatalf("fsbench-s3: cannot create bucket %s: %v", name, err)
		}
	}
	faker := gofakes3.New(store, gofakes3.WithAutoBucket(false))
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("fsbench-s3: cannot listen on %s: %v", *addr, err)
	}
	log.Printf("fsbench-s3 listening on %s (%s backend, buckets %s)", listener.Addr(), *backend, names.String())
	log.Fatal(http.Serve(listener, newCounting(faker.Server())))
}
