// Package bench is "courier bench": it measures Courier and prints one line
// of key=value figures.
//
// The first modes measure Courier against a real Redis server (--redis).
// Each run works under a fresh key prefix (courier-bench-<random>) on one
// queue, "bench", and deletes the queue's keys when it ends, whatever the
// outcome:
//
//	throughput  enqueue --n jobs, then time a pool of --concurrency handlers
//	            until every job is acked; Redis calls, CPU and memory per job
//	            come from INFO on the node that serves the queue (info.go)
//	latency     a job every --every to an idle pool: enqueue to handler start
//	delayed     --n jobs due --delay ahead, 1 ms apart: run-at to handler start
//	idle        the commands an idle pool sends per second (counting.go)
//	api         --n jobs through the HTTP API's batch endpoint, served in
//	            this process: requests and jobs per second, request latency
//	pause       three daemons (each on its own connections, as processes
//	            would be) run a queue that always has jobs due, each handler
//	            taking --work; --n times the queue is paused (Client.Pause,
//	            the call the API's pause route makes) and resumed: from the
//	            pause call to the last handler start of the fleet after it
//	            (0 when none started after it) (controls.go)
//	priority    --backlog low-priority jobs due now, worked through by the
//	            pool (--work each), while a high-priority job is enqueued
//	            every --every: enqueue to handler start of the high ones
//	cancel      --n running jobs, one at a time, each cancelled once it has
//	            started: from the Cancel call to its handler's context
//	            ending
//	keys        job keys, in three phases (--phases), each on a queue of
//	            its own and run by two daemons: keyed against unkeyed
//	            throughput and the memory of a key, keys' shares of the
//	            starts against their weights, and a new key's start behind
//	            --backlog jobs of one key among --keys active keys, with
//	            the starts above a cap and the slots held after a graceful
//	            stop (keys.go)
//
// throughput --unique gives every job a unique key, to show what
// uniqueness costs; extra_runs, shown only when not 0, counts handler
// starts beyond one a job (a job claimed again), which no run should have.
//
// Three more throughput switches measure what issue 18's features cost;
// each adds itself to the figures when on (trace=true, retain=N,
// progress=true), so that A/B runs can be told apart:
//
//	--trace     the producer and the daemon get a real OpenTelemetry SDK
//	            TracerProvider (Config.TracerProvider; every span sampled,
//	            the SDK's batch span processor with its defaults, so
//	            OTEL_BSP_* apply) exporting over OTLP/HTTP, protobuf, no
//	            compression, to a receiver the run serves on a loopback
//	            port, which counts requests, bytes and spans (walking the
//	            protobuf without decoding the spans) and keeps nothing. The
//	            provider is flushed after the pool stops (trace_flush_ms).
//	            spans_ended counts the spans the SDK ended, spans_exported
//	            those the receiver got: fewer when the batch processor's
//	            queue was full and it dropped some (trace.go)
//	--retain N  the queue keeps N completed jobs (RetainCompleted.Count)
//	            and each handler sets a 16-byte result; completed is the
//	            queue's completed count read after the run, before the
//	            leader's trim has caught up, so it may exceed N
//	--progress  each handler calls ReportProgress once: the report rides
//	            on the next lease extension, so redis_calls_per_job does
//	            not change
//
// --cluster ADDRS (instead of --redis) runs on a Redis Cluster from its
// seed addresses, and --partitions N splits the bench queue into N
// partitions (worker.QueueOptions.Partitions), which the Cluster spreads
// over its masters. A daemon is started and stopped first so that it
// records the partitions, which producers read, before any job is
// enqueued. throughput then reads INFO on every master (found with
// CLUSTER SLOTS, each on a connection of its own) and reports, besides
// the totals (summed over the masters serving a partition: with one
// partition, the node that serves the queue), each master's figures
// (masters.go), master1 being the one serving the lowest slots: its
// partitions, its jobs (those stored in its partitions: the growth of
// each partition's jobs hash during the enqueue, every one of which is
// then processed, mapped to the master serving the partition's slot by
// CLUSTER KEYSLOT), its share of the run's jobs, the calls clients sent
// it and its CPU, and per job when it had jobs. share_max_dev_pct is the
// largest difference of a master's share from 1/masters, in percent of
// it.
//
// The last two measure the HTTP defences of a running daemon (--api URL,
// with --token a producer or admin token of it) and need no Redis of their
// own. A "good" client sends GET /v1/queues/bench/jobs/nonexistent every
// 2 ms over one keep-alive connection and times the round trip (404, or
// 503 without Redis, is as good a reply as any; 401, 403, 429 and failures
// are good_errors). When the API is on an IPv4 loopback address the good
// client dials from 127.0.0.1 and the others from 127.0.0.2 (and up), so
// the daemon tells them apart as it would tell apart hosts (target.go):
//
//	authflood   the good client alone for --duration (idle_*), then while
//	            --clients keep-alive connections send --n requests with a
//	            wrong token, reconnecting whenever one is closed, until they
//	            are sent or --duration has passed (flood_*: the good
//	            client is measured while the flood lasts). ratio_p99 is
//	            flood_p99 / idle_p99; flood_refused counts attempts the
//	            daemon closed or refused without a reply. With --give-up
//	            D the flooder abandons a request unanswered within D and
//	            connects again (flood_abandoned), as an attacker would
//	            that does not wait for the daemon's held refusals
//	            (authflood.go)
//	conns       --n attacker connections kept open while the good client
//	            is measured for --duration, as a slowloris attacker keeps
//	            them: each sends nothing (or, with --slow, half a request
//	            header and then a byte a second) and, when the daemon
//	            closes it, is opened again after --redial (default at
//	            once: a connection flood; slowloris itself replaces its
//	            sockets every few seconds; reopened counts these dials).
//	            The measurement starts once each has been dialled once,
//	            kept or not. held_p50 and held_min are the
//	            connections open from this side, counted every 100 ms
//	            (those the daemon has yet to accept and close included);
//	            still_open is how many the daemon had not closed at the
//	            end, reset_at_once how many dials it reset before they
//	            returned. The open-file limit is raised for them
//	            (fd_limit; fd_limit_ok=false, and a line on stderr, when
//	            it could not be) (conns.go)
//
// Run is the whole API: cmd/courier reports a *UsageError (ErrUsage) as
// its other commands' usage errors, exit code 2, and flag.ErrHelp as 0.
package bench
