package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker"
)

// ErrUsage is what a *UsageError matches: the arguments are wrong.
var ErrUsage = errors.New("usage error")

// UsageError says what is wrong with the arguments, in one line; Run
// prints nothing of it, so that the CLI reports it as it reports every
// command's.
type UsageError struct {
	Msg string
}

// Error implements error.
func (e *UsageError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrUsage) true.
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

// options are the flags of courier bench.
type options struct {
	json        bool // print the figures as one JSON object
	addr        string
	addrGiven   bool   // --redis was on the command line, not its default
	cluster     string // --cluster: seed addresses of a Redis Cluster, comma-separated
	partitions  int    // the bench queue's partitions (QueueOptions.Partitions)
	mode        string
	n           int
	concurrency int
	every       time.Duration
	delay       time.Duration
	payload     int
	backlog     int
	duration    time.Duration
	timeout     time.Duration
	metrics     bool
	batch       int
	clients     int
	api         string        // authflood, conns: the running daemon's API
	token       string        // authflood, conns: a producer or admin token
	slow        bool          // conns: send half a request on each connection
	giveUp      time.Duration // authflood: abandon a request unanswered this long
	redial      time.Duration // conns: the wait before a closed connection is replaced
	work        time.Duration // pause, priority: how long each handler runs
	unique      bool          // throughput: every job gets a unique key
	trace       bool          // throughput: an OpenTelemetry SDK exporting over OTLP/HTTP (trace.go)
	retain      int           // throughput: QueueOptions.RetainCompleted.Count; each job sets a result
	progress    bool          // throughput: each handler reports its progress once
	everyGiven  bool          // --every was on the command line (keys defaults to 5ms)
	keys        keysOptions   // keys: the flags of the job keys mode (keysoptions.go)
	keysGiven   bool          // a flag of keysFlags was on the command line
}

const synopsis = "--redis ADDR|--cluster ADDRS [--partitions N] --mode throughput|latency|delayed|idle|api|pause|priority|cancel|keys [flags]\n" +
	"       courier bench --api URL --token T --mode authflood|conns [flags]"

// modes lists the modes; the last two measure a running daemon's API and
// need no Redis.
var modes = []string{"throughput", "latency", "delayed", "idle", "api", "pause", "priority", "cancel", "keys", "authflood", "conns"}

// againstAPI reports whether mode measures a running daemon (--api) rather
// than Redis.
func againstAPI(mode string) bool { return mode == "authflood" || mode == "conns" }

// Per-mode defaults of the flags whose zero value means "the mode's".
var (
	defaultN        = map[string]int{"throughput": 200000, "latency": 500, "delayed": 1000, "api": 50000, "pause": 20, "priority": 500, "cancel": 200, "keys": 500, "authflood": 100000, "conns": 20000}
	defaultBacklog  = map[string]int{"priority": 1000000, "keys": 1000000}
	defaultWork     = map[string]time.Duration{"pause": 5 * time.Millisecond, "priority": time.Millisecond, "keys": time.Millisecond}
	defaultClients  = map[string]int{"api": 8, "authflood": 64}
	defaultDuration = map[string]time.Duration{"idle": 10 * time.Second, "authflood": 5 * time.Second, "conns": 5 * time.Second}
)

// parseOptions parses args; on a problem it returns a *UsageError; for -h
// it prints the usage and the flags to help and returns flag.ErrHelp.
func parseOptions(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("courier bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.addr, "redis", "127.0.0.1:6379", "Redis `address` (host:port; a cluster node works too)")
	fs.StringVar(&o.cluster, "cluster", "", "seed `addresses` of a Redis Cluster, comma-separated host:port (instead of --redis): "+
		"the Redis figures are then reported for each master as well as in total (see --partitions)")
	fs.IntVar(&o.partitions, "partitions", 1, fmt.Sprintf("split the bench queue into this many partitions (1 to %d; QueueOptions.Partitions), "+
		"which a Cluster spreads over its masters; throughput reports each master's share of the jobs", worker.MaxPartitions))
	fs.StringVar(&o.mode, "mode", "throughput", "what to measure: throughput, latency, delayed, idle, api (enqueue through the HTTP API's batch endpoint), "+
		"pause (3 daemons: from a pause to the fleet's last job start), priority (a high-priority job's start behind --backlog low-priority jobs due), "+
		"cancel (from cancelling a running job to its handler's context ending), keys (job keys: caps, fair share, a new key's start behind --backlog jobs of one key), "+
		"authflood (a good token's latency under a flood of wrong tokens) or conns (a good request's latency with --n idle connections open); see doc.go")
	fs.IntVar(&o.n, "n", 0, "number of jobs; pause: pauses; priority: high-priority jobs; keys: probes (one-job new keys); authflood: wrong-token requests; conns: idle connections "+
		"(default: throughput 200000, latency 500, delayed 1000, api 50000, pause 20, priority 500, cancel 200, keys 500, authflood 100000, conns 20000)")
	fs.IntVar(&o.concurrency, "concurrency", 64, "handler goroutines")
	fs.DurationVar(&o.every, "every", 20*time.Millisecond, "latency, priority: time between two enqueues; keys: between two probes (default there 5ms)")
	fs.DurationVar(&o.delay, "delay", 2*time.Second, "delayed: how far ahead the first job is due")
	fs.IntVar(&o.payload, "payload", 100, "payload size in `bytes`")
	fs.IntVar(&o.backlog, "backlog", 0, "throughput: jobs scheduled an hour ahead before the run, to show that a backlog does not slow claiming; "+
		"priority: low-priority jobs due now; keys: jobs of the one key ahead of the probes (default 1000000)")
	fs.DurationVar(&o.work, "work", 0, "pause, priority: how long each handler runs; keys: each handler of the tenants phase (default pause 5ms, priority 1ms, keys 1ms)")
	fs.BoolVar(&o.unique, "unique", false, "throughput: give every job a unique key (its cost)")
	fs.BoolVar(&o.trace, "trace", false, "throughput: trace the producer and the daemon with an OpenTelemetry SDK (every span sampled, batched) "+
		"exporting over OTLP/HTTP to a receiver the bench serves on a loopback port (the cost of tracing)")
	fs.IntVar(&o.retain, "retain", 0, "throughput: keep this many completed jobs (QueueOptions.RetainCompleted.Count), each handler "+
		"setting a 16-byte result (the cost of retention; 0 = off)")
	fs.BoolVar(&o.progress, "progress", false, "throughput: each handler reports its progress once (Job.ReportProgress: no Redis call of its own)")
	fs.DurationVar(&o.duration, "duration", 0, "idle: how long to watch an idle pool (default 10s); "+
		"authflood: how long to measure idle, then at most how long to flood (default 5s); conns: how long to measure (default 5s)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVar(&o.metrics, "metrics", true, "record the Prometheus metrics, as courier run does (--metrics=false measures their cost)")
	fs.IntVar(&o.batch, "batch", 1000, "api: jobs per request (1 to 1000)")
	fs.IntVar(&o.clients, "clients", 0, "api: concurrent HTTP clients (default 8); authflood: the flood's keep-alive connections (default 64)")
	fs.StringVar(&o.api, "api", "", "authflood, conns: `URL` of a running daemon's API (http://host:port or https://host:port)")
	fs.StringVar(&o.token, "token", "", "authflood, conns: a producer or admin token of that API")
	fs.DurationVar(&o.giveUp, "give-up", 0, "authflood: abandon a wrong-token request not answered within this long and connect again, as an impatient attacker would (0 = wait for every reply)")
	fs.DurationVar(&o.redial, "redial", 0, "conns: how long an attacker waits before replacing a connection the daemon closed (0 = at once, a connection flood; slowloris replaces its sockets every few seconds)")
	fs.BoolVar(&o.json, "json", false, "print the figures as one JSON object (numbers as numbers) instead of a key=value line")
	o.keys.define(fs)
	fs.BoolVar(&o.slow, "slow", false, "conns: send half a request header on each connection (slowloris) instead of nothing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(help, fs)
			return o, err
		}
		return o, &UsageError{Msg: err.Error()}
	}
	fs.Visit(func(f *flag.Flag) {
		o.addrGiven = o.addrGiven || f.Name == "redis"
		o.everyGiven = o.everyGiven || f.Name == "every"
		o.keysGiven = o.keysGiven || slices.Contains(keysFlags, f.Name)
	})
	if fs.NArg() > 0 {
		return o, &UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if o.n == 0 {
		o.n = defaultN[o.mode]
	}
	if o.clients == 0 {
		o.clients = cmp.Or(defaultClients[o.mode], 1)
	}
	if o.duration == 0 {
		o.duration = defaultDuration[o.mode]
	}
	if o.backlog == 0 {
		o.backlog = defaultBacklog[o.mode]
	}
	if o.work == 0 {
		o.work = defaultWork[o.mode]
	}
	if o.mode == "keys" && !o.everyGiven {
		o.every = keysEvery
	}
	if problems := o.problems(); len(problems) > 0 {
		return o, &UsageError{Msg: strings.Join(problems, "; ")}
	}
	return o, nil
}

// problems lists what is wrong with o, one line each.
func (o options) problems() []string {
	var problems []string
	if !slices.Contains(modes, o.mode) {
		// Nothing else can be judged without a mode (--n's default, say).
		return []string{fmt.Sprintf("--mode %q: want throughput, latency, delayed, idle, api, pause, priority, cancel, keys, authflood or conns", o.mode)}
	}
	if againstAPI(o.mode) {
		if o.api == "" || o.token == "" {
			problems = append(problems, fmt.Sprintf("--mode %s needs --api URL and --token T", o.mode))
		} else if _, err := parseAPI(o.api); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if o.cluster != "" {
		if o.addrGiven {
			problems = append(problems, "--redis and --cluster exclude each other: give --redis ADDR for a single Redis or --cluster ADDRS for a Cluster")
		}
		if _, err := o.clusterAddrs(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if o.partitions < 1 || o.partitions > worker.MaxPartitions {
		problems = append(problems, fmt.Sprintf("--partitions must be 1 to %d (got %d)", worker.MaxPartitions, o.partitions))
	}
	if againstAPI(o.mode) && (o.cluster != "" || o.partitions != 1) {
		problems = append(problems, fmt.Sprintf("--cluster and --partitions measure Redis: --mode %s measures a daemon's API", o.mode))
	}
	if o.batch < 1 || o.batch > api.MaxBatchLimit || o.clients < 1 {
		problems = append(problems, fmt.Sprintf("--batch must be 1 to %d and --clients at least 1", api.MaxBatchLimit))
	}
	if o.n < 1 && o.mode != "idle" {
		problems = append(problems, "--n must be at least 1")
	}
	if o.concurrency < 1 {
		problems = append(problems, "--concurrency must be at least 1")
	}
	if o.every <= 0 || o.delay < 0 || o.payload < 0 || o.backlog < 0 || o.duration < 0 || o.timeout <= 0 || o.work < 0 {
		problems = append(problems, "--every, --duration and --timeout must be positive; --delay, --payload, --backlog and --work not negative")
	}
	if o.mode != "throughput" && (o.trace || o.retain != 0 || o.progress) {
		problems = append(problems, fmt.Sprintf("--trace, --retain and --progress are for --mode throughput (got --mode %s)", o.mode))
	}
	if o.retain < 0 || o.retain > worker.MaxRetainCompleted {
		problems = append(problems, fmt.Sprintf("--retain must be 0 to %d (got %d)", worker.MaxRetainCompleted, o.retain))
	}
	if o.mode == "priority" && o.backlog < 1 {
		problems = append(problems, "--mode priority needs a --backlog of at least 1")
	}
	if o.mode == "keys" {
		problems = append(problems, o.keys.problems()...)
	} else if o.keysGiven {
		problems = append(problems, fmt.Sprintf("--%s are for --mode keys (got --mode %s)", strings.Join(keysFlags, ", --"), o.mode))
	}
	return problems
}

// clusterAddrs splits --cluster into its host:port addresses.
func (o options) clusterAddrs() ([]string, error) {
	addrs := strings.Split(o.cluster, ",")
	for i, a := range addrs {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("--cluster %q: want host:port,host:port,… (the seed addresses of a Redis Cluster)", o.cluster)
		}
		addrs[i] = a
	}
	return addrs, nil
}

// redisAddrs returns the addresses to connect to: --cluster's seeds, or
// --redis.
func (o options) redisAddrs() []string {
	if o.cluster == "" {
		return []string{o.addr}
	}
	addrs, _ := o.clusterAddrs() // checked by problems
	return addrs
}

// printUsage prints the usage line and the flags, each with two dashes as
// docs/bench.md writes them.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: courier bench %s\n\nFlags:\n", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
