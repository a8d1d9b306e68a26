// Package bench is "courier bench": it measures Courier against a real Redis
// server and prints one line of key=value figures.
//
// Each run works under a fresh key prefix (courier-bench-<random>) on one
// queue, "bench", and deletes the queue's keys when it ends, whatever the
// outcome. The modes:
//
//	throughput  enqueue --n jobs, then time a pool of --concurrency handlers
//	            until every job is acked; Redis calls, CPU and memory per job
//	            come from INFO on the node that serves the queue (info.go)
//	latency     a job every --every to an idle pool: enqueue to handler start
//	delayed     --n jobs due --delay ahead, 1 ms apart: run-at to handler start
//	idle        the commands an idle pool sends per second (counting.go)
//	api         --n jobs through the HTTP API's batch endpoint, served in
//	            this process: requests and jobs per second, request latency
//
// Run is the whole API: cmd/courier maps ErrUsage to exit code 2 and
// flag.ErrHelp to 0, as for its other commands.
package bench
