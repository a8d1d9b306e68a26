package worker

// completedShare is how many completed jobs partition i of a queue with
// options o retains (QueueOptions.RetainCompleted), 0 for none. The
// queue's partitions, the first o.Partitions served, share the count as
// they share the dead set's bound: each keeps ceil(Count / Partitions). A
// retired partition still draining (served after them, see
// servePartitions) keeps none, so that it empties: its jobs are deleted
// when they finish, and its leader deletes those it retained.
func completedShare(o QueueOptions, i int) int {
	n := max(o.Partitions, 1)
	if o.RetainCompleted.Count <= 0 || i >= n {
		return 0
	}
	return (o.RetainCompleted.Count + n - 1) / n
}
