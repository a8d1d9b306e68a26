package admin

import "github.com/seed-53d105c9/courier/worker"

// The result types of the operator's verbs (moving here from package
// worker).
type (
	// QueuePage is a page of the known queue names (Operator.Queues).
	QueuePage = worker.QueuePage
	// QueueStats counts a queue's jobs by state (Operator.Stats).
	QueueStats = worker.QueueStats
	// JobPage is a page of jobs (Operator.Jobs).
	JobPage = worker.JobPage
	// DeadFilter selects dead jobs (JobListParams.Dead, TriageParams.Filter).
	DeadFilter = worker.DeadFilter
	// TriageResult is what a triage did (Operator.Triage).
	TriageResult = worker.TriageResult
	// Fleet is the processes serving a queue (Operator.Fleet).
	Fleet = worker.Fleet
	// FleetProcess is one process of a Fleet.
	FleetProcess = worker.FleetProcess
	// HistoryMinute is one minute of a queue's history (Client.History).
	HistoryMinute = worker.HistoryMinute
	// PeriodicStatus is one periodic schedule of a queue (Client.Periodic).
	PeriodicStatus = worker.PeriodicStatus
)

// Bounds of the listings (moving here from package worker).
const (
	// ListLimitDefault is JobListParams.Limit's default.
	ListLimitDefault = worker.ListLimitDefault
	// ListLimitMax is the most jobs a JobPage holds.
	ListLimitMax = worker.ListLimitMax
	// QueuesPerPageDefault is QueueListParams.Limit's default.
	QueuesPerPageDefault = worker.QueuesPerPageDefault
	// QueuesPerPageMax is the most queues a QueuePage holds.
	QueuesPerPageMax = worker.QueuesPerPageMax
	// HistoryMaxMinutes is the most minutes one Client.History returns.
	HistoryMaxMinutes = worker.HistoryMaxMinutes
	// LagBuckets is the number of lag buckets of a HistoryMinute.
	LagBuckets = worker.LagBuckets
)

// Errors the operator's verbs return (moving here from package worker).
var (
	// ErrQueueInUse is the error of Forget refusing a queue that
	// something still holds.
	ErrQueueInUse = worker.ErrQueueInUse
	// ErrNoDaemon is the error of CheckPrefix when no daemon reported.
	ErrNoDaemon = worker.ErrNoDaemon
)

// PrefixError reports that daemons run, but none on the Client's key
// prefix (Client.CheckPrefix).
type PrefixError = worker.PrefixError
