package store_test

import (
	"slices"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestSlotIsRedisClusters(t *testing.T) {
	t.Parallel()
	// The values CLUSTER KEYSLOT gives.
	for key, want := range map[string]uint16{"123456789": 12739, "foo": 12182, "": 0} {
		if got := store.Slot(key); got != want {
			t.Errorf("Slot(%q) = %d; want %d", key, got, want)
		}
	}
	c := testkit.Cluster(t)
	for _, key := range []string{"a", "q#1.7", "emails", "bench#11.2"} {
		n, err := c.Do(t.Context(), c.B().ClusterKeyslot().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if got := store.Slot(key); int64(got) != n {
			t.Errorf("Slot(%q) = %d; CLUSTER KEYSLOT says %d", key, got, n)
		}
	}
}

// TestPartitionNamesSpread: the n partitions' slots are spaced evenly, so
// three masters of equal slot ranges get about n/3 each (one off at a
// boundary of the ranges).
func TestPartitionNamesSpread(t *testing.T) {
	t.Parallel()
	for _, queue := range []string{"q", "emails", "a-much-longer-queue-name.v2"} {
		for _, n := range []int{3, 6, 12, 24, 63, 64} {
			names := store.PartitionNames(queue, n)
			if len(names) != n || names[0] != queue {
				t.Fatalf("PartitionNames(%q, %d) = %v", queue, n, names)
			}
			perMaster := map[int]int{}
			for _, name := range names {
				if name != queue && !store.IsPartition(name) || store.QueueOfPartition(name) != queue {
					t.Errorf("%q is not a partition name of %q", name, queue)
				}
				perMaster[int(store.Slot(name))*3/16384]++
			}
			for m := range 3 {
				if got, want := perMaster[m], n/3; got < want-1 || got > want+2 {
					t.Errorf("queue %q, %d partitions: master %d would hold %d (%v)", queue, n, m, got, perMaster)
				}
			}
			if !slices.Equal(names, store.PartitionNames(queue, n)) {
				t.Errorf("PartitionNames(%q, %d) is not stable", queue, n)
			}
		}
	}
	if got := store.PartitionNames("q", 1); !slices.Equal(got, []string{"q"}) {
		t.Errorf("one partition = %v; want the queue itself", got)
	}
}

func TestPartitionOf(t *testing.T) {
	t.Parallel()
	counts := make([]int, 8)
	for i := range 8000 {
		p := store.PartitionOf(string(rune('a'+i%26))+string(rune(i)), 8)
		if p < 0 || p >= 8 {
			t.Fatalf("PartitionOf = %d", p)
		}
		counts[p]++
	}
	for i, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("partition %d got %d of 8000 keys: %v", i, n, counts)
		}
	}
	if store.PartitionOf("anything", 1) != 0 || store.PartitionOf("x", 0) != 0 {
		t.Error("a queue of one partition has only partition 0")
	}
}

// TestForgetQueuesLeavesPartitionedQueues: the leader's cleanup of unused
// queues never forgets partition 0 of a split queue (its layout names the
// partitions that may still hold jobs).
func TestForgetQueuesLeavesPartitionedQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		if err := s.AddQueues(ctx, "split", "plain"); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.PublishLayout(ctx, "split", 0, store.Layout{Partitions: 3}, store.Share{I: 0, M: 3}); !ok || err != nil {
			t.Fatal(ok, err)
		}
		gone, err := s.ForgetQueues(ctx, nil)
		if err != nil || !slices.Equal(gone, []string{"plain"}) {
			t.Fatalf("ForgetQueues = %v, %v; want only the plain queue", gone, err)
		}
		if rec, err := s.ReadQueue(ctx, "split"); err != nil || rec.Layout.Partitions != 3 {
			t.Errorf("the split queue's layout = %+v, %v; want it kept", rec.Layout, err)
		}
	})
}
