// Package server is the daemon's HTTP listeners. Listen makes the main one:
// /healthz says the process is alive, /readyz that it can do work (Redis
// reachable, pool running, not draining), and /metrics, when it is given a
// handler, serves the Prometheus registry; Handle adds the API's routes.
// ListenHandler makes a listener for one handler: the API's own address
// (admin.addr), or /metrics on an address of its own (http.metrics_addr),
// away from the port that faces clients.
//
// Every listener defends itself the same way (Listener):
//
//   - Timeouts: a request's header must arrive within 5s (slowloris), its
//     body within the read timeout, the response within the write timeout;
//     an idle keep-alive is closed after the idle timeout.
//   - Connection caps (conns.go): at most MaxConnections open connections,
//     the one idle the longest making room for a new one at the cap, and at
//     most MaxConnectionsPerClient from one client address.
//     A flood of connections is closed at the cost of an accept and a
//     close, and never exhausts the process's file descriptors.
//   - TLS (tls.go): TLSConfig serves a certificate it reloads when its files
//     change, and verifies client certificates when given a client CA.
//
// The connection metrics (metrics.go), labelled by the listener's
// configuration key:
//
//	courier_http_connections{listener}                     open connections
//	courier_http_connections_refused_total{listener,reason} closed unserved:
//	    over_capacity, per_client or evicted
package server
