// Package webhook is the built-in "webhook" handler: it POSTs each job's
// payload to an HTTP endpoint, signed with HMAC-SHA256, and maps the
// response to the job's outcome.
//
// # Settings
//
// Under queues.<name>.webhook (see Settings):
//
//	url                where to POST: http or https. Required unless allow_hosts is set.
//	secret             HMAC-SHA256 key. Default empty: requests are not signed.
//	signature_version  2 (the default) or 1: see Signature.
//	timeout            per request. Default 10s.
//	headers            extra request headers, such as Authorization. Default none.
//	content_type       Default application/json.
//	allow_hosts        hosts a job may name in its own URL; turns on envelope mode.
//	allow_networks     non-public networks requests may reach; see Addresses. Default none.
//	path_secret        the URL's path is a credential; see Secrets. Default false.
//
// For example:
//
//	queues:
//	  orders:
//	    handler: webhook
//	    webhook:
//	      url: https://api.example.com/hooks/orders
//	      secret: change-me
//	      headers:
//	        Authorization: Bearer abc123
//
// # Addresses
//
// A request connects only to public unicast addresses, unless
// allow_networks lists the network, so that neither url nor a job's own
// URL can reach the daemon's host or its private networks (Redis, the
// admin API, a cloud metadata service). Refused are loopback, private
// (10/8, 172.16/12, 192.168/16, IPv6 fc00::/7), link-local (169.254/16,
// fe80::/10), unspecified and 0.0.0.0/8, shared CGNAT (100.64/10),
// 192.0.0.0/24, benchmarking (198.18/15), multicast, 240.0.0.0/4 with
// broadcast, IPv6 site-local (fec0::/10), local-use NAT64
// (64:ff9b:1::/48), and the IPv6 forms of any of them: IPv4-mapped,
// IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses
// whose IPv4 address is refused.
//
// The rule applies to the address a host name resolves to, checked again
// on every new connection, so that a name that later resolves elsewhere
// (DNS rebinding) is refused then. A request to a refused address sends
// nothing and fails the job permanently, with a message such as
//
//	webhook POST https://hooks.example.com/x: refused to connect to 127.0.0.1: a loopback address; list its network in allow_networks to allow it
//
// and a url whose host is a refused IP address is a configuration error.
// An allow_networks entry is a CIDR prefix, as in "10.0.0.0/8", or an IP
// address, meaning that address alone:
//
//	allow_networks: ["10.20.0.0/16", "fd00:1::/64", "127.0.0.1"]
//
// Requests never go through a proxy, even one that HTTP_PROXY or
// HTTPS_PROXY name: a proxy would resolve names and connect beyond this
// rule.
//
// # Secrets
//
// Error messages (which become the job's last error) and logs never show
// the secret, a header value, or the user information or a query value of
// url, of at least 8 bytes, in any letter case, percent-, base64- or
// hex-encoded, nor the credential after an authentication scheme
// ("Bearer <token>", and for "Basic <base64>" the decoded
// "user:password", the user and the password). Shorter values are not
// blanked, since that would garble the messages, except for a secret
// echoed as it is in a response body. A URL appears as scheme, host
// and path only, without user information or query. With path_secret set,
// for endpoints whose path is the credential, such as Slack's
// https://hooks.slack.com/services/T0/B0/XXXX, a URL appears as
// scheme://host/[redacted], and each path segment of at least 8 bytes is
// blanked wherever it appears.
//
// Text from the receiver or the network (a response body, a certificate's
// names, a Location header) has its control and format characters escaped
// or turned into spaces, so that a message stays on one line and cannot
// drive a terminal; a message is cut to 1 KiB, a quoted response body to
// 256 bytes.
//
// # Requests
//
// Each attempt of a job is one POST whose body is the job's payload, with
// these headers:
//
//	Content-Type       content_type
//	Courier-Job-Id     the job's id
//	Courier-Queue      the job's queue
//	Courier-Attempt    the attempt, 1 for the first
//	Courier-Job-Key    the job's key (worker.JobSpec.Key), for a job that has one
//	Courier-Timestamp  the time of the request, in Unix seconds
//	Courier-Signature  the signature (see Signature), when a secret is set
//	traceparent        the attempt's span, W3C Trace Context (with
//	                   tracestate when there is one), when the daemon
//	                   traces (tracing.exporter, worker.Config.TracerProvider)
//	                   and the attempt is in a trace; it replaces one set
//	                   in headers
//
// Delivery is at least once: a receiver may see a job again, for instance
// when its response was lost, and should dedupe on Courier-Job-Id.
//
// # Signature
//
// The v2 signature is the lower-case hex HMAC-SHA256, keyed with the
// secret, of the Courier-Timestamp, Courier-Queue, Courier-Job-Id and
// Courier-Attempt values and the raw request body, after "v2", each
// followed by a newline but the body:
//
//	Courier-Signature: v2=hex(HMAC-SHA256(secret,
//	    "v2\n" + timestamp + "\n" + queue + "\n" + job_id + "\n" + attempt + "\n" + body))
//
// A receiver recomputes it over the body bytes as received, before parsing
// them, compares in constant time, and refuses a timestamp more than a few
// minutes from its own clock, so that a captured request cannot be replayed
// later; since the signature covers the job id, it cannot be replayed under
// another id either. In Go, Verify (or a Verifier) does all of that; in
// Python:
//
//	ts = headers["Courier-Timestamp"]
//	if abs(time.time() - int(ts)) > 300:
//	    reject()  # a replay, or a bad clock
//	msg = b"\n".join([b"v2", ts.encode(), headers["Courier-Queue"].encode(),
//	                  headers["Courier-Job-Id"].encode(),
//	                  headers["Courier-Attempt"].encode(), body])
//	mac = hmac.new(secret, msg, hashlib.sha256).hexdigest()
//	ok = hmac.compare_digest(("v2=" + mac).encode(),
//	                         headers["Courier-Signature"].encode())
//
// The "v2=" prefix names the scheme. With signature_version: 1 the handler
// sends the older v1 scheme instead, for receivers not yet upgraded:
//
//	Courier-Signature: v1=hex(HMAC-SHA256(secret, timestamp + "." + body))
//
// v1 covers neither the job id nor the queue nor the attempt, so that a
// captured request can be replayed under another Courier-Job-Id, which a
// receiver dedupes on, for as long as its timestamp is accepted.
//
// # Outcomes
//
// The response decides what happens to the job:
//
//	2xx                            done
//	408, 5xx                       retried with the queue's backoff
//	429 with Retry-After           snoozed for that long, capped at 24h (no attempt spent);
//	                               a job with a key holds back every job of its key as long
//	                               (worker.KeyLimited), while other keys go on
//	503 with Retry-After, keyed    the same: the key waits that long
//	429 without Retry-After        retried with the queue's backoff
//	3xx                            dead: redirects are not followed
//	a refused address              dead, nothing sent (see Addresses)
//	other 4xx                      dead
//	no response within timeout     retried with the queue's backoff
//	network error                  retried with the queue's backoff
//	the job's context ended        the daemon's usual handling (shutdown, job timeout, lease lost)
//
// A receiver that answers every request with 429 and Retry-After keeps the
// job waiting for ever, since snoozes spend no attempt.
//
// # Envelope mode
//
// When allow_hosts is set, each job's payload must be a JSON envelope that
// may name its own URL:
//
//	{"url": "https://eu.api.example.com/hooks", "body": {"order": 42}}
//
// The request body is the raw JSON of "body", byte for byte. "url" may be
// absent, null or empty to use the configured url. The job fails at once,
// with nothing sent, when the envelope is not valid JSON, has fields other
// than url and body, lacks body, names a URL that is not http or https or
// whose host is not in allow_hosts, names no URL when none is configured,
// or names an http URL of the host that the configured url reaches over
// https (on any port): the request and the configured headers, such as an
// Authorization, would go in clear to a host the operator reaches over
// TLS.
//
// An allow_hosts entry is "host", "host:port", an IP address, or
// "*.example.com", which matches every subdomain of example.com, at any
// depth, but neither example.com nor evil-example.com. An entry without a
// port allows only the scheme's default port: 80 for http, 443 for https;
// a URL without a port uses its scheme's default. The list guards against
// jobs that name arbitrary hosts; what the names resolve to is guarded by
// the address rule (see Addresses).
package webhook
