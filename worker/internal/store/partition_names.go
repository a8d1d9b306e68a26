package store

import (
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
)

// Partition names. Partition 0 of a queue is the queue itself: its keys
// are the queue's (<p>:{q}:…), so a queue of one partition is laid out as
// before partitions existed, and a queue split later keeps its jobs in
// partition 0. Partition i ≥ 1 of n is the "queue" q#<i>.<k>: '#' is not
// allowed in queue names, so no queue's keys can collide with a
// partition's. k is the smallest number (0 is left out: q#<i>) whose hash
// tag falls in the Cluster slot window of the partition: the n partitions
// start at the slot of q and are spaced evenly around the 16,384 slots,
// so on a Cluster whose masters serve equal ranges of slots (as redis-cli
// --cluster create makes them) n partitions spread over m masters as
// evenly as n allows: n/m each when m divides n.
const (
	// MaxPartitions bounds a queue's partitions.
	MaxPartitions = 64
	clusterSlots  = 16384
)

// partitionSep joins a queue's name and a partition's tag.
const partitionSep = "#"

// IsPartition reports whether name is a partition i ≥ 1 of a queue.
func IsPartition(name string) bool { return strings.Contains(name, partitionSep) }

// QueueOfPartition returns the queue a partition name belongs to (name
// itself for a queue or its partition 0).
func QueueOfPartition(name string) string {
	q, _, _ := strings.Cut(name, partitionSep)
	return q
}

var namesCache sync.Map // queue + "\x00" + n → []string

// PartitionNames returns the names of the n partitions of queue, partition
// 0 (queue) first. The slice is shared: do not modify it.
func PartitionNames(queue string, n int) []string {
	if n <= 1 {
		return []string{queue}
	}
	key := queue + "\x00" + strconv.Itoa(n)
	if v, ok := namesCache.Load(key); ok {
		return v.([]string)
	}
	names := make([]string, n)
	names[0] = queue
	base := int(Slot(queue))
	spacing := clusterSlots / n
	window := max(min(spacing/4, 16), 1)
	for i := 1; i < n; i++ {
		from := (base + i*clusterSlots/n) % clusterSlots
		stem := queue + partitionSep + strconv.Itoa(i)
		names[i] = stem
		for k := 0; k < 1<<22; k++ {
			name := stem
			if k > 0 {
				name = stem + "." + strconv.Itoa(k)
			}
			if (int(Slot(name))-from+clusterSlots)%clusterSlots < window {
				names[i] = name
				break
			}
		}
	}
	namesCache.Store(key, names)
	return names
}

// PartitionOf returns the partition, of n, of a job whose partition key
// (its unique key, else its id) is key: FNV-1a (64 bits) of key modulo n.
func PartitionOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum64() % uint64(n)) // #nosec G115 -- less than n, an int
}

// Slot returns the Redis Cluster hash slot of a key whose hash tag is the
// whole of tag: CRC16 (XMODEM) modulo 16,384.
func Slot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % clusterSlots
}
