package bench

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// keysEvery is --every's default in the keys mode: the time between two
// probes.
const keysEvery = 5 * time.Millisecond

// keysFlags are the flags only the keys mode reads.
var keysFlags = []string{"phases", "keys", "per-key", "key-cap", "ratio-n", "share-keys", "share-jobs", "weights"}

// keysPhases are the phases of the keys mode, in the order they run.
var keysPhases = []string{"ratio", "share", "tenants"}

// keysOptions are the flags of the keys mode (keys.go).
type keysOptions struct {
	phases    string // --phases: which of keysPhases to run, comma-separated
	active    int    // --keys: the active keys of the tenants phase, and the keys of the ratio's keyed jobs
	perKey    int    // --per-key: each active key's jobs in the tenants phase
	capPerKey int    // --key-cap: QueueOptions.KeyConcurrency of the tenants phase
	ratioN    int    // --ratio-n: the jobs of each half of the throughput ratio
	shareKeys int    // --share-keys: the keys of the fair share phases
	shareJobs int    // --share-jobs: each share key's jobs per unit of its weight
	weights   string // --weights: the weights the weighted share phase gives its keys in turn
}

func (k *keysOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&k.phases, "phases", strings.Join(keysPhases, ","), "keys: the phases to run, comma-separated: ratio (keyed against unkeyed throughput, memory per key), "+
		"share (fair share by weight) and tenants (a new key's start behind --backlog jobs of one key, caps, leaked slots)")
	fs.IntVar(&k.active, "keys", 10000, "keys: the active keys the probes compete with, each with --per-key jobs due; "+
		"also the keys the throughput ratio's keyed jobs are spread over")
	fs.IntVar(&k.perKey, "per-key", 20, "keys: the jobs each active key has due (enough to keep every key active until the last probe)")
	fs.IntVar(&k.capPerKey, "key-cap", 4, "keys: the queue's cap per key in the tenants phase (QueueOptions.KeyConcurrency)")
	fs.IntVar(&k.ratioN, "ratio-n", 100000, "keys: the jobs of each half of the throughput ratio (unkeyed, then keyed over --keys keys)")
	fs.IntVar(&k.shareKeys, "share-keys", 100, "keys: the keys of the fair share phases, each with a deep backlog")
	fs.IntVar(&k.shareJobs, "share-jobs", 1000, "keys: each share key's jobs per unit of its weight")
	fs.StringVar(&k.weights, "weights", "1,2,4", "keys: the weights the weighted share phase gives its keys in turn (admin.Client.SetKeyLimits), comma-separated")
}

// problems lists what is wrong with k, one line each.
func (k keysOptions) problems() []string {
	var problems []string
	if k.active < 1 || k.perKey < 1 || k.shareKeys < 1 || k.shareJobs < 1 {
		problems = append(problems, "--keys, --per-key, --share-keys and --share-jobs must be at least 1")
	}
	if k.capPerKey < 1 || k.capPerKey > worker.MaxKeyConcurrency {
		problems = append(problems, fmt.Sprintf("--key-cap must be 1 to %d (got %d)", worker.MaxKeyConcurrency, k.capPerKey))
	}
	if k.ratioN < 2*k.active {
		// The first --keys jobs start a key each, the others join one: the
		// memory of a key is told from that of a job so.
		problems = append(problems, fmt.Sprintf("--ratio-n must be at least twice --keys (%d) (got %d)", k.active, k.ratioN))
	}
	if _, err := k.weightList(); err != nil {
		problems = append(problems, err.Error())
	}
	if _, err := k.phaseList(); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// phaseList parses --phases into the phases to run, in the order they run.
func (k keysOptions) phaseList() ([]string, error) {
	var out []string
	for _, f := range strings.Split(k.phases, ",") {
		if !slices.Contains(keysPhases, strings.TrimSpace(f)) {
			return nil, fmt.Errorf("--phases %q: want some of %s, comma-separated", k.phases, strings.Join(keysPhases, ", "))
		}
	}
	for _, p := range keysPhases {
		if slices.ContainsFunc(strings.Split(k.phases, ","), func(f string) bool { return strings.TrimSpace(f) == p }) {
			out = append(out, p)
		}
	}
	return out, nil
}

// weightList parses --weights.
func (k keysOptions) weightList() ([]int, error) {
	var ws []int
	for _, f := range strings.Split(k.weights, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 || w > admin.MaxKeyWeight {
			return nil, fmt.Errorf("--weights %q: want weights of 1 to %d, comma-separated", k.weights, admin.MaxKeyWeight)
		}
		ws = append(ws, w)
	}
	return ws, nil
}
