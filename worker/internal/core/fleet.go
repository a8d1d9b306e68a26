package core

import "time"

// How often a Daemon reports to the fleet of each queue and to the set of
// live key prefixes, and how long a report lasts: the operator's views of
// the fleet (admin.Client.Fleet, CheckPrefix) see a process from its
// first report until FleetTTL after its last.
const (
	FleetReportInterval = 10 * time.Second
	FleetTTL            = 3 * FleetReportInterval
)
