// Package webhook is the built-in "webhook" handler: it POSTs each job's
// payload to an HTTP endpoint, signed with HMAC-SHA256, and maps the
// response to the job's outcome.
//
// # Settings
//
// Under queues.<name>.webhook (see Settings):
//
//	url           where to POST: http or https. Required unless allow_hosts is set.
//	secret        HMAC-SHA256 key. Default empty: requests are not signed.
//	timeout       per request. Default 10s.
//	headers       extra request headers, such as Authorization. Default none.
//	content_type  Default application/json.
//	allow_hosts   hosts a job may name in its own URL; turns on envelope mode.
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
// Error messages and logs never show the secret or header values; a URL
// appears as scheme, host and path only, without user information or query.
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
//	Courier-Timestamp  the time of the request, in Unix seconds
//	Courier-Signature  v1=<signature>, when a secret is set
//
// Delivery is at least once: a receiver may see a job again, for instance
// when its response was lost, and should dedupe on Courier-Job-Id.
//
// # Signature
//
// The signature is the lower-case hex HMAC-SHA256, keyed with the secret, of
// the Courier-Timestamp value, a dot, and the raw request body:
//
//	Courier-Signature: v1=hex(HMAC-SHA256(secret, timestamp + "." + body))
//
// A receiver recomputes it over the body bytes as received, before parsing
// them, compares in constant time, and refuses a timestamp far from its own
// clock (say, five minutes) so that a captured request cannot be replayed.
// In Go, Verify does the comparison; in Python:
//
//	mac = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256)
//	ok = hmac.compare_digest("v1=" + mac.hexdigest(), header)
//
// The "v1=" prefix names the scheme, so that another can be added later.
//
// # Outcomes
//
// The response decides what happens to the job:
//
//	2xx                            done
//	408, 5xx                       retried with the queue's backoff
//	429 with Retry-After           snoozed for that long, capped at 24h (no attempt spent)
//	429 without Retry-After        retried with the queue's backoff
//	3xx                            dead: redirects are not followed
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
// whose host is not in allow_hosts, or names no URL when none is configured.
//
// An allow_hosts entry is "host", "host:port", an IP address, or
// "*.example.com", which matches every subdomain of example.com, at any
// depth, but neither example.com nor evil-example.com. An entry without a
// port allows any port; a URL without a port uses its scheme's default. The
// list guards against jobs that name arbitrary hosts, not against what a
// name resolves to: list only hosts whose DNS you trust.
package webhook
