// Package core is what the application's worker.Client and the operator's
// admin.Client share without either showing it: the connection to the
// store and the queue layer over it, the walk over a queue's partitions,
// the parser of periodic schedules and the fleet's report timing. Both
// public packages build on it; nothing here is part of their API.
package core
