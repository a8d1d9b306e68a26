package testkit

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// The raw readers below look at Redis behind the code under test, and fail
// the test when Redis does not answer.

// Do sends cmd and fails the test on an error.
func Do(t testing.TB, c rueidis.Client, cmd rueidis.Completed) {
	t.Helper()
	args := cmd.Commands() // read before Do: rueidis recycles the command
	if err := c.Do(t.Context(), cmd).Error(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// HGetAll returns the hash at key (empty when absent).
func HGetAll(t testing.TB, c rueidis.Client, key string) map[string]string {
	t.Helper()
	m, err := c.Do(t.Context(), c.B().Hgetall().Key(key).Build()).AsStrMap()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return m
}

// HGet returns the field of the hash at key, and whether it exists.
func HGet(t testing.TB, c rueidis.Client, key, field string) (string, bool) {
	t.Helper()
	v, err := c.Do(t.Context(), c.B().Hget().Key(key).Field(field).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", false
	}
	if err != nil {
		t.Fatalf("HGET %s %s: %v", key, field, err)
	}
	return v, true
}

// ZScore returns the score of member in the sorted set key, as a whole
// number (Courier's scores are ms), and whether it is there.
func ZScore(t testing.TB, c rueidis.Client, key, member string) (int64, bool) {
	t.Helper()
	f, err := c.Do(t.Context(), c.B().Zscore().Key(key).Member(member).Build()).AsFloat64()
	if rueidis.IsRedisNil(err) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("ZSCORE %s %s: %v", key, member, err)
	}
	return int64(f), true
}

// PTTL returns the time to live of key (negative: none, or no key).
func PTTL(t testing.TB, c rueidis.Client, key string) time.Duration {
	t.Helper()
	n, err := c.Do(t.Context(), c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return time.Duration(n) * time.Millisecond
}

// Exists reports whether key exists.
func Exists(t testing.TB, c rueidis.Client, key string) bool {
	t.Helper()
	n, err := c.Do(t.Context(), c.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	return n == 1
}

// Del deletes key.
func Del(t testing.TB, c rueidis.Client, key string) {
	t.Helper()
	Do(t, c, c.B().Del().Key(key).Build())
}

// RedisNow returns the Redis clock (TIME) in whole milliseconds, as the
// scripts read it.
func RedisNow(t testing.TB, c rueidis.Client) int64 {
	t.Helper()
	v, err := c.Do(t.Context(), c.B().Time().Build()).AsStrSlice()
	if err != nil || len(v) != 2 {
		t.Fatalf("TIME = %v, %v", v, err)
	}
	sec, err1 := strconv.ParseInt(v[0], 10, 64)
	usec, err2 := strconv.ParseInt(v[1], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("TIME = %v", v)
	}
	return (sec*1_000_000 + usec) / 1000
}

// Subscribers returns how many clients subscribe to channel, summed over
// c's nodes: PUBSUB NUMSUB counts the clients of one node, and on a
// Cluster a subscriber may be on any of them.
func Subscribers(t testing.TB, c rueidis.Client, channel string) int64 {
	t.Helper()
	var n int64
	for _, node := range c.Nodes() {
		m, err := node.Do(t.Context(), node.B().PubsubNumsub().Channel(channel).Build()).AsIntMap()
		if err != nil {
			t.Fatalf("PUBSUB NUMSUB %s: %v", channel, err)
		}
		n += m[channel]
	}
	return n
}

// KeepTTL sets the time to live of key to ttl every 100 ms, as renewals
// that reach Redis but whose replies are lost would, until the returned
// stop is called (or the test ends). It sets nothing once the key is gone.
func KeepTTL(t testing.TB, c rueidis.Client, key string, ttl time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	stopped := make(chan error, 1)
	go func() {
		stopped <- Poll{Every: 100 * time.Millisecond, Stop: done}.Until(t, time.Hour, func() bool {
			_ = c.Do(context.WithoutCancel(t.Context()), c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()).Error()
			return false
		})
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			if err := <-stopped; err != nil && !errors.Is(err, ErrStopped) && t.Context().Err() == nil {
				t.Errorf("testkit: keeping the TTL of %s: %v", key, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
