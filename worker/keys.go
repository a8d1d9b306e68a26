package worker

import "github.com/seed-53d105c9/courier/worker/internal/store"

// QueuesKey returns the Redis key of the set of known queue names under
// prefix: the queues Client.Queues lists, recorded when a Client first
// enqueues to a queue and when a Daemon starts serving one. It is not one
// of a queue's keys (QueueKeys), so tools that delete everything under a
// prefix delete it too.
func QueuesKey(prefix string) string { return store.QueuesKey(prefix) }
