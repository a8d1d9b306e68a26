package config

// CheckDaemon reports what courier run makes of a loaded configuration
// beyond Load's checks, without starting anything: as an *Error, what it
// refuses (no queue; a listener of the API's own, admin.addr, without a
// way to authenticate); as warnings, what it starts with but says at
// start (the API left out for want of a token, an API open to anyone,
// Redis's certificate unchecked). courier config check reports both.
func (c *Config) CheckDaemon() (warnings []string, err error) {
	var ps problems
	if len(c.Queues) == 0 {
		ps.add("queues", "no queue is configured; add one under queues.<name> (see configs/courier.yaml): courier run refuses to start without")
	}
	switch auth := c.Admin.RequireAuth(); {
	case auth != nil && c.Admin.Addr != "":
		ps = append(ps, problemsOf(auth)...)
		ps[len(ps)-1].Message += " (courier run refuses to start: admin.addr is set)"
	case auth != nil:
		warnings = append(warnings, "admin.tokens: no API token is configured, so courier run serves no HTTP API: "+
			"requests under /v1/ get 404; /healthz, /readyz and /metrics are served as usual")
	case c.Admin.InsecureNoAuth:
		warnings = append(warnings, "admin.insecure_no_auth: the HTTP API is served without authentication, to anyone who reaches it")
	}
	if c.Redis.TLS.Enabled && c.Redis.TLS.InsecureSkipVerify {
		warnings = append(warnings, "redis.tls.insecure_skip_verify: the Redis server's certificate is not checked; set redis.tls.ca_file instead")
	}
	return warnings, ps.err()
}
