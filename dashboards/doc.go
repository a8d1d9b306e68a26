// Package dashboards holds Courier's Grafana dashboards, as classic dashboard
// JSON (schemaVersion 39) that Grafana imports or provisions unchanged:
//
//   - courier-overview.json: throughput by outcome, error ratio, lag and
//     duration quantiles, running jobs against concurrency, queue depth by
//     state, dead-set growth, the leader of each queue, process health, and
//     the HTTP listeners (open and refused connections, failed API
//     authentications);
//   - courier-locks.json: leaders, leader changes, lost locks, lock acquire
//     latency, contention and watchdog renewals;
//   - courier-redis.json: Lua script calls, time and latency by script, and
//     Redis errors by operation.
//
// Every dashboard has a pinned uid, the tag "courier", a "datasource"
// variable (every panel and query uses "${datasource}", so no data source
// uid is baked in) and multi-value "queue" and "instance" variables. The
// metrics they query are the interface DESIGN.md lists under "Metrics";
// docs/monitoring.md describes the panels and alerts.
//
// The JSON files are the source: edit them (or export from Grafana and
// remove the "id"), keeping the checks of dashboards_test.go, and the
// courier command's monitoring test runs every query against a real
// Prometheus scraping a real fleet.
package dashboards

import "embed"

// Files holds the dashboards, one *.json file each, at the root of the FS.
//
//go:embed *.json
var Files embed.FS
