// Package queue is the one place that knows a queue may be split into
// partitions: it keeps every partition of a queue agreeing on the queue's
// record (its layout, its id retention and its pause), changes the layout
// for the daemons that serve the queue, and routes producers by it. A
// setting that every partition's scripts must read goes into the record
// here, and nowhere else learns about partitions.
//
// # The record
//
// Partition 0 (the queue's own keys) holds the record in its settings hash
// (lua/queue_set.lua); every change gives it a new revision. Each other
// partition holds a copy (lua/queue_copy.lua), taken only when its revision
// is newer, so copies sent in any order by any number of writers leave each
// partition with the newest record. A writer changes partition 0 first and
// then copies what it returned to every partition of the layout it names:
//
//	Pause, SetIDRetention:  queue_set (partition 0) ──► queue_copy (each other partition)
//
// # A layout change
//
// A daemon that starts with a number of partitions different from the
// record's changes the layout (Serve), in an order that keeps every promise
// while producers, operators and other daemons carry on:
//
//  1. Read the record at revision r.
//  2. Retire the partitions the new layout drops, with the version r+1: from
//     now on their enqueues are refused (the producer routes again), so the
//     next step's look is final. A copy of an older layout cannot undo it.
//  3. Look which retired partitions still hold jobs: they stay in the
//     layout as draining (Prev) and are served until they are empty.
//  4. Give every partition of the new layout its share of a rate limit in
//     it as a cap, and those it adds none (see Rate limits); copy record r
//     to the partitions it adds, so that they hold the id retention and
//     the pause before any producer or daemon uses them.
//  5. Publish the layout in partition 0 only if the record is still at
//     revision r (compare-and-set): a pause or a retention written since
//     step 1 makes it fail, and the change starts again from step 1 with
//     that record, so no setting is lost between two copies.
//  6. Copy the published record to every partition.
//
// # Routing
//
// Producers keep the layout they last learned (Route) and send its version
// with each enqueue (lua/enqueue.lua): a partition that holds a newer one
// refuses the call and returns it, and a retired partition refuses it too,
// so a producer learns of a change on its next enqueue, before it acts on
// a stale layout, and never waits for a cache to expire. A refusal that
// teaches nothing newer (a change still between steps 2 and 5, or one that
// stopped there) sends the jobs to partition 0, which every layout serves:
// a layout change never refuses an enqueue. Operators' reads and changes
// (Get, Cancel, Pause, lists and stats) read the record first (Read).
//
// # Rate limits
//
// A queue's rate limit is shared by its partitions as the record says:
// each copy carries the partition's share (store.Share, its place among
// the layout's partitions), and the claim script divides the queue's limit
// by it. Daemons that disagree on the number of partitions, during a
// rolling change, therefore still divide alike and never start more than
// the limit together. A share shrinks at once and grows only a window of
// the limit after it changed (a partition the layout adds grows from
// none): while a layout is written, the partitions it keeps or adds claim
// the smaller of their shares in the old and the new layout
// (store.CapShares, in step 4; the copies of step 6 lift the cap), and a
// claim takes the smallest of the shares its partition had within the
// window (lua/claim.lua), so the claims two layouts make in one window
// never add up to more than the limit.
package queue
