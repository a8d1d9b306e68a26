package api

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestBadRequests: every refused request gets its status, code and field,
// and leaves Redis exactly as it was.
func TestBadRequests(t *testing.T) { //nolint:tparallel // the cases share the parent's bundle and run one after another
	t.Parallel()
	const payloadLimit = 1024
	b := setup(t, func(o *Options) { o.Limits.MaxPayloadBytes = payloadLimit })
	b.enqueue(worker.JobSpec{Queue: "q", ID: "existing", Delay: time.Hour, Payload: []byte("keep me"), UniqueKey: "held"},
		worker.JobSpec{Queue: "q", ID: "keyed", Key: "acme", Delay: time.Hour})
	if err := b.client.SetKeyLimits(t.Context(), "q", "acme", admin.KeyLimits{Concurrency: 5, Weight: 2, RateLimit: &worker.RateLimit{N: 7, Per: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	b.kill("q", "dead-1")

	jobs := func(n int, item string) string {
		return `{"jobs": [` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`
	}
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            wire.Code
		field                           string
	}{
		// The body as a whole.
		{"malformed JSON", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload":`, 400, wire.CodeInvalidJSON, "body"},
		{"malformed JSON inside", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload": [1,,2]}`, 400, wire.CodeInvalidJSON, "body"},
		{"not an object", "POST", "/v1/queues/q/jobs", producerSecret, `[1, 2]`, 400, wire.CodeInvalidJSON, "body"},
		{"a bare string", "POST", "/v1/queues/q/jobs", producerSecret, `"payload"`, 400, wire.CodeInvalidJSON, "body"},
		{"empty body", "POST", "/v1/queues/q/jobs", producerSecret, ``, 400, wire.CodeInvalidJSON, "body"},
		{"white space only", "POST", "/v1/queues/q/jobs", producerSecret, " \n ", 400, wire.CodeInvalidJSON, "body"},
		{"trailing data", "POST", "/v1/queues/q/jobs", producerSecret, `{} {}`, 400, wire.CodeInvalidJSON, "body"},
		{"invalid UTF-8", "POST", "/v1/queues/q/jobs", producerSecret, "{\"payload\": \"\xff\"}", 400, wire.CodeInvalidJSON, "body"},
		{"oversized body", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload": "` + strings.Repeat("x", 200_000) + `"}`, 413, wire.CodeTooLarge, "body"},
		// Fields.
		{"unknown field", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload": 1, "urgency": 5}`, 400, wire.CodeUnknownField, "urgency"},
		{"field in the wrong case", "POST", "/v1/queues/q/jobs", producerSecret, `{"ID": "x"}`, 400, wire.CodeUnknownField, "ID"},
		{"unknown field set to null", "POST", "/v1/queues/q/jobs", producerSecret, `{"queue": null}`, 400, wire.CodeUnknownField, "queue"},
		{"field twice", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "a", "id": "b"}`, 400, wire.CodeInvalidField, "id"},
		{"id of the wrong type", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": 5}`, 400, wire.CodeInvalidField, "id"},
		{"empty id", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": ""}`, 400, wire.CodeInvalidField, "id"},
		{"id with a space", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "a b"}`, 400, wire.CodeInvalidField, "id"},
		{"id with a control character", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "a\u0007b"}`, 400, wire.CodeInvalidField, "id"},
		{"id of 257 bytes", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "` + strings.Repeat("i", 257) + `"}`, 400, wire.CodeInvalidField, "id"},
		{"delay as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"delay": 90}`, 400, wire.CodeInvalidField, "delay"},
		{"delay in words", "POST", "/v1/queues/q/jobs", producerSecret, `{"delay": "soon"}`, 400, wire.CodeInvalidField, "delay"},
		{"negative delay", "POST", "/v1/queues/q/jobs", producerSecret, `{"delay": "-1s"}`, 400, wire.CodeInvalidField, "delay"},
		{"delay beyond the horizon", "POST", "/v1/queues/q/jobs", producerSecret, `{"delay": "9000h"}`, 400, wire.CodeInvalidField, "delay"},
		{"run_at not RFC 3339", "POST", "/v1/queues/q/jobs", producerSecret, `{"run_at": "tomorrow"}`, 400, wire.CodeInvalidField, "run_at"},
		{"run_at without a zone", "POST", "/v1/queues/q/jobs", producerSecret, `{"run_at": "2026-01-01T00:00:00"}`, 400, wire.CodeInvalidField, "run_at"},
		{"run_at in the far future", "POST", "/v1/queues/q/jobs", producerSecret, `{"run_at": "2999-01-01T00:00:00Z"}`, 400, wire.CodeInvalidField, "run_at"},
		{"run_at before 1970", "POST", "/v1/queues/q/jobs", producerSecret, `{"run_at": "1969-12-31T23:59:59Z"}`, 400, wire.CodeInvalidField, "run_at"},
		{"run_at as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"run_at": 1700000000}`, 400, wire.CodeInvalidField, "run_at"},
		{"delay and run_at", "POST", "/v1/queues/q/jobs", producerSecret, `{"delay": "1s", "run_at": "2026-01-01T00:00:00Z"}`, 400, wire.CodeInvalidField, "run_at"},
		{"max_attempts zero", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": 0}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"max_attempts negative", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": -1}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"max_attempts fractional", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": 1.5}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"max_attempts as a string", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": "3"}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"max_attempts beyond the limit", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": 1001}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"max_attempts overflowing", "POST", "/v1/queues/q/jobs", producerSecret, `{"max_attempts": 99999999999999999999}`, 400, wire.CodeInvalidField, "max_attempts"},
		{"timeout zero", "POST", "/v1/queues/q/jobs", producerSecret, `{"timeout": "0s"}`, 400, wire.CodeInvalidField, "timeout"},
		{"timeout as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"timeout": 30}`, 400, wire.CodeInvalidField, "timeout"},
		{"timeout beyond the limit", "POST", "/v1/queues/q/jobs", producerSecret, `{"timeout": "200h"}`, 400, wire.CodeInvalidField, "timeout"},
		{"payload_base64 not base64", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload_base64": "!!!"}`, 400, wire.CodeInvalidField, "payload_base64"},
		{"payload_base64 of the wrong type", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload_base64": [1]}`, 400, wire.CodeInvalidField, "payload_base64"},
		{"payload and payload_base64", "POST", "/v1/queues/q/jobs", producerSecret, `{"payload": 1, "payload_base64": "MQ=="}`, 400, wire.CodeInvalidField, "payload_base64"},
		{"empty key", "POST", "/v1/queues/q/jobs", producerSecret, `{"key": ""}`, 400, wire.CodeInvalidField, "key"},
		{"key with a space", "POST", "/v1/queues/q/jobs", producerSecret, `{"key": "a b"}`, 400, wire.CodeInvalidField, "key"},
		{"key with a control character", "POST", "/v1/queues/q/jobs", producerSecret, `{"key": "a\u0007b"}`, 400, wire.CodeInvalidField, "key"},
		{"key of 257 bytes", "POST", "/v1/queues/q/jobs", producerSecret, `{"key": "` + strings.Repeat("k", 257) + `"}`, 400, wire.CodeInvalidField, "key"},
		{"key as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"key": 42}`, 400, wire.CodeInvalidField, "key"},
		{"priority not a level", "POST", "/v1/queues/q/jobs", producerSecret, `{"priority": "urgent"}`, 400, wire.CodeInvalidField, "priority"},
		{"priority as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"priority": 1}`, 400, wire.CodeInvalidField, "priority"},
		{"empty unique_key", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": ""}`, 400, wire.CodeInvalidField, "unique_key"},
		{"unique_key with a space", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "a b"}`, 400, wire.CodeInvalidField, "unique_key"},
		{"unique_key of 257 bytes", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "` + strings.Repeat("k", 257) + `"}`, 400, wire.CodeInvalidField, "unique_key"},
		{"unique_key as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": 42}`, 400, wire.CodeInvalidField, "unique_key"},
		{"unique_for in words", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "a while"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_for as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": 3600}`, 400, wire.CodeInvalidField, "unique_for"},
		{"negative unique_for", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "-1s"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_for zero", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "0s"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_for under 1ms", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "500us"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_for over a year", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "8761h"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_for without unique_key", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_for": "1h"}`, 400, wire.CodeInvalidField, "unique_for"},
		{"unique_after_finish without unique_for", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_after_finish": true}`, 400, wire.CodeInvalidField, "unique_after_finish"},
		{"unique_after_finish as a string", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "k", "unique_for": "1h", "unique_after_finish": "yes"}`, 400, wire.CodeInvalidField, "unique_after_finish"},
		{"durability not an object", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": 1}`, 400, wire.CodeInvalidField, "durability"},
		{"durability with an unknown field", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 1, "timeout": "1s", "fsync": true}}`, 400, wire.CodeUnknownField, "durability.fsync"},
		{"durability replicas as a string", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": "1", "timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.replicas"},
		{"durability replicas negative", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": -1, "timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.replicas"},
		{"durability replicas over 16", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 17, "timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.replicas"},
		{"durability without a timeout", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 1}}`, 400, wire.CodeInvalidField, "durability.timeout"},
		{"durability timeout alone", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.timeout"},
		{"durability timeout as a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 1, "timeout": 250}}`, 400, wire.CodeInvalidField, "durability.timeout"},
		{"durability timeout over the API's wait", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 1, "timeout": "20s"}}`, 400, wire.CodeInvalidField, "durability.timeout"},
		{"durability aof as a string", "POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"aof": "yes", "timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.aof"},
		{"header name in capitals", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"Tenant": "a"}}`, 400, wire.CodeInvalidField, `headers["Tenant"]`},
		{"header name with a space", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a b": "x"}}`, 400, wire.CodeInvalidField, `headers["a b"]`},
		{"empty header name", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"": "x"}}`, 400, wire.CodeInvalidField, `headers[""]`},
		{"header name of 65 bytes", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"` + strings.Repeat("n", 65) + `": "x"}}`, 400, wire.CodeInvalidField, `headers["` + strings.Repeat("n", 64) + `"…]`},
		{"header value of 1025 bytes", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"big": "` + strings.Repeat("v", 1025) + `"}}`, 400, wire.CodeInvalidField, `headers["big"]`},
		{"header value with a control character", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a": "x\u0007y"}}`, 400, wire.CodeInvalidField, `headers["a"]`},
		{"33 headers", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {` + manyHeaders(33, 1) + `}}`, 400, wire.CodeInvalidField, "headers"},
		{"headers over 8 KiB in all", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {` + manyHeaders(9, 1000) + `}}`, 400, wire.CodeInvalidField, "headers"},
		{"headers not an object", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": ["a"]}`, 400, wire.CodeInvalidField, "headers"},
		{"header value a number", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a": 1}}`, 400, wire.CodeInvalidField, `headers["a"]`},
		{"header value null", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a": null}}`, 400, wire.CodeInvalidField, `headers["a"]`},
		{"header twice", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a": "1", "a": "2"}}`, 400, wire.CodeInvalidField, `headers["a"]`},
		{"header value malformed", "POST", "/v1/queues/q/jobs", producerSecret, `{"headers": {"a": }}`, 400, wire.CodeInvalidJSON, "body"},
		{"existing id", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "existing", "payload": 1}`, 409, wire.CodeConflict, "id"},
		{"held unique key", "POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "held", "payload": 1}`, 409, wire.CodeConflict, "unique_key"},
		{"held unique key with an id of its own", "POST", "/v1/queues/q/jobs", producerSecret, `{"id": "new", "unique_key": "held"}`, 409, wire.CodeConflict, "unique_key"},
		{"query parameter", "POST", "/v1/queues/q/jobs?priority=high", producerSecret, `{}`, 400, wire.CodeUnknownField, "priority"},
		// Batches.
		{"oversized batch", "POST", "/v1/queues/q/jobs/batch", producerSecret, jobs(1001, `{}`), 413, wire.CodeTooLarge, "jobs"},
		{"empty batch", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": []}`, 400, wire.CodeInvalidField, "jobs"},
		{"batch without jobs", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{}`, 400, wire.CodeInvalidField, "jobs"},
		{"batch jobs not a list", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": {}}`, 400, wire.CodeInvalidField, "jobs"},
		{"batch with an unknown field", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}], "queue": "x"}`, 400, wire.CodeUnknownField, "queue"},
		{"batch job not an object", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, 1]}`, 400, wire.CodeInvalidField, "jobs[1]"},
		{"batch job with an unknown field", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"prio": 1}]}`, 400, wire.CodeUnknownField, "jobs[1].prio"},
		{"batch with one bad job", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{"id": "ok-1"}, {"id": "ok-2"}, {"delay": "-5s"}]}`, 400, wire.CodeInvalidField, "jobs[2].delay"},
		{"batch job with a bad priority", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"priority": "top"}]}`, 400, wire.CodeInvalidField, "jobs[1].priority"},
		{"batch job with a negative unique_for", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"unique_key": "k", "unique_for": "-1m"}]}`, 400, wire.CodeInvalidField, "jobs[1].unique_for"},
		{"batch job with unique_for alone", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {}, {"unique_for": "1m"}]}`, 400, wire.CodeInvalidField, "jobs[2].unique_for"},
		{"batch job with a bad durability", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"durability": {"replicas": 1}}]}`, 400, wire.CodeInvalidField, "jobs[1].durability.timeout"},
		{"batch with a bad durability", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}], "durability": {"replicas": 99, "timeout": "1s"}}`, 400, wire.CodeInvalidField, "durability.replicas"},
		{"batch job with a bad key", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{"key": "acme"}, {"key": "a b"}]}`, 400, wire.CodeInvalidField, "jobs[1].key"},
		{"batch job with a bad header", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"headers": {"A": "1"}}]}`, 400, wire.CodeInvalidField, `jobs[1].headers["A"]`},
		{"batch of one with a bad header", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{"headers": {"a": "` + strings.Repeat("v", 1025) + `"}}]}`, 400, wire.CodeInvalidField, `jobs[0].headers["a"]`},
		{"batch job with too many headers", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {}, {"headers": {` + manyHeaders(33, 1) + `}}]}`, 400, wire.CodeInvalidField, "jobs[2].headers"},
		{"batch job with headers of the wrong type", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{}, {"headers": {"a": true}}]}`, 400, wire.CodeInvalidField, `jobs[1].headers["a"]`},
		{"batch job with an existing id", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{"id": "existing"}]}`, 200, "", ""},
		{"batch job with a held unique key", "POST", "/v1/queues/q/jobs/batch", producerSecret, `{"jobs": [{"unique_key": "held"}]}`, 200, "", ""},
		// Names in the path.
		{"queue with {", "POST", "/v1/queues/a%7Bb/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"queue with }", "POST", "/v1/queues/a%7Db/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"queue with :", "POST", "/v1/queues/a:b/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"queue with a space", "POST", "/v1/queues/a%20b/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"queue with a control character", "POST", "/v1/queues/a%01b/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"queue of 129 characters", "POST", "/v1/queues/" + strings.Repeat("q", 129) + "/jobs", producerSecret, `{}`, 400, wire.CodeInvalidField, "queue"},
		{"batch to a bad queue", "POST", "/v1/queues/a%7Bb/jobs/batch", producerSecret, `{"jobs": [{}]}`, 400, wire.CodeInvalidField, "queue"},
		{"id with a space in the path", "GET", "/v1/queues/q/jobs/a%20b", producerSecret, ``, 400, wire.CodeInvalidField, "id"},
		{"id of 257 bytes in the path", "GET", "/v1/queues/q/jobs/" + strings.Repeat("i", 257), adminSecret, ``, 400, wire.CodeInvalidField, "id"},
		{"cancel on a bad queue", "DELETE", "/v1/queues/a%7Bb/jobs/existing", producerSecret, ``, 400, wire.CodeInvalidField, "queue"},
		{"cancel a bad id", "DELETE", "/v1/queues/q/jobs/a%20b", producerSecret, ``, 400, wire.CodeInvalidField, "id"},
		{"cancel an id of 257 bytes", "DELETE", "/v1/queues/q/jobs/" + strings.Repeat("i", 257), producerSecret, ``, 400, wire.CodeInvalidField, "id"},
		// Authentication and roles.
		{"missing token", "POST", "/v1/queues/q/jobs", "", `{}`, 401, wire.CodeUnauthorized, "Authorization"},
		{"wrong token", "POST", "/v1/queues/q/jobs", "not-the-token-0123456789", `{}`, 401, wire.CodeUnauthorized, "Authorization"},
		{"token with a prefix of a real one", "POST", "/v1/queues/q/jobs", producerSecret[:20], `{}`, 401, wire.CodeUnauthorized, "Authorization"},
		{"missing token on an unknown route", "GET", "/v1/nope", "", ``, 401, wire.CodeUnauthorized, "Authorization"},
		{"producer lists queues", "GET", "/v1/queues", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		{"producer requeues the dead", "POST", "/v1/queues/q/dead/requeue", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		{"producer purges the dead", "POST", "/v1/queues/q/dead/purge", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		// Routes and methods.
		{"wrong method", "PUT", "/v1/queues/q/jobs", producerSecret, `{}`, 405, wire.CodeMethodNotAllowed, ""},
		{"wrong method on a job", "PATCH", "/v1/queues/q/jobs/existing", adminSecret, `{}`, 405, wire.CodeMethodNotAllowed, ""},
		{"unknown route", "GET", "/v1/jobs", adminSecret, ``, 404, wire.CodeNotFound, ""},
		// State.
		{"cancel a missing job", "DELETE", "/v1/queues/q/jobs/nope", adminSecret, ``, 404, wire.CodeNotFound, "id"},
		{"cancel a dead job", "DELETE", "/v1/queues/q/jobs/dead-1", adminSecret, ``, 409, wire.CodeConflict, "id"},
		{"producer cancels a missing job", "DELETE", "/v1/queues/q/jobs/nope", producerSecret, ``, 404, wire.CodeNotFound, "id"},
		{"producer cancels a dead job", "DELETE", "/v1/queues/q/jobs/dead-1", producerSecret, ``, 409, wire.CodeConflict, "id"},
		// Dead list parameters.
		{"limit zero", "GET", "/v1/queues/q/jobs?state=dead&limit=0", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"limit in words", "GET", "/v1/queues/q/jobs?state=dead&limit=ten", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"limit twice", "GET", "/v1/queues/q/jobs?state=dead&limit=1&limit=2", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"bad cursor", "GET", "/v1/queues/q/jobs?state=dead&cursor=bogus!", adminSecret, ``, 400, wire.CodeInvalidField, "cursor"},
		{"unknown parameter", "GET", "/v1/queues/q/jobs?state=dead&order=desc", adminSecret, ``, 400, wire.CodeUnknownField, "order"},
		{"malformed query", "GET", "/v1/queues/q/jobs?state=dead&limit=%zz", adminSecret, ``, 400, wire.CodeInvalidField, "query"},
		{"the dead set's old list", "GET", "/v1/queues/q/dead", adminSecret, ``, 404, wire.CodeNotFound, ""},
		{"the dead set's old requeue of one job", "POST", "/v1/queues/q/dead/dead-1/requeue", adminSecret, ``, 404, wire.CodeNotFound, ""},
		{"the old purge of every dead job", "DELETE", "/v1/queues/q/dead", adminSecret, ``, 404, wire.CodeNotFound, ""},
		{"the old purge of one dead job", "DELETE", "/v1/queues/q/dead/dead-1", adminSecret, ``, 404, wire.CodeNotFound, ""},
		// Job list parameters.
		{"list without a state", "GET", "/v1/queues/q/jobs", adminSecret, ``, 400, wire.CodeInvalidField, "state"},
		{"list an unknown state", "GET", "/v1/queues/q/jobs?state=done", adminSecret, ``, 400, wire.CodeInvalidField, "state"},
		{"list a state in capitals", "GET", "/v1/queues/q/jobs?state=DEAD", adminSecret, ``, 400, wire.CodeInvalidField, "state"},
		{"list two states", "GET", "/v1/queues/q/jobs?state=dead&state=ready", adminSecret, ``, 400, wire.CodeInvalidField, "state"},
		{"list limit zero", "GET", "/v1/queues/q/jobs?state=ready&limit=0", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"list limit beyond the maximum", "GET", "/v1/queues/q/jobs?state=ready&limit=1001", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"list a bad cursor", "GET", "/v1/queues/q/jobs?state=ready&cursor=bogus!", adminSecret, ``, 400, wire.CodeInvalidField, "cursor"},
		{"list an error filter of ready jobs", "GET", "/v1/queues/q/jobs?state=ready&error=boom", adminSecret, ``, 400, wire.CodeInvalidField, "error"},
		{"list died_after of active jobs", "GET", "/v1/queues/q/jobs?state=active&died_after=2026-01-01T00:00:00Z", adminSecret, ``, 400, wire.CodeInvalidField, "died_after"},
		{"list died_before of scheduled jobs", "GET", "/v1/queues/q/jobs?state=scheduled&died_before=2026-01-01T00:00:00Z", adminSecret, ``, 400, wire.CodeInvalidField, "died_before"},
		{"list died_after in words", "GET", "/v1/queues/q/jobs?state=dead&died_after=yesterday", adminSecret, ``, 400, wire.CodeInvalidField, "died_after"},
		{"list died_before without a zone", "GET", "/v1/queues/q/jobs?state=dead&died_before=2026-01-01T00:00:00", adminSecret, ``, 400, wire.CodeInvalidField, "died_before"},
		{"list died_before not after died_after", "GET", "/v1/queues/q/jobs?state=dead&died_after=2026-01-02T00:00:00Z&died_before=2026-01-01T00:00:00Z", adminSecret, ``, 400, wire.CodeInvalidField, "died_before"},
		{"list an error filter of 257 bytes", "GET", "/v1/queues/q/jobs?state=dead&error=" + strings.Repeat("e", 257), adminSecret, ``, 400, wire.CodeInvalidField, "error"},
		{"list an unknown parameter", "GET", "/v1/queues/q/jobs?state=ready&order=desc", adminSecret, ``, 400, wire.CodeUnknownField, "order"},
		{"list on a bad queue", "GET", "/v1/queues/a%7Bb/jobs?state=ready", adminSecret, ``, 400, wire.CodeInvalidField, "queue"},
		{"producer lists jobs", "GET", "/v1/queues/q/jobs?state=ready", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		// Requeue and purge bodies.
		{"triage malformed JSON", "POST", "/v1/queues/q/dead/requeue", adminSecret, `{"ids": [`, 400, wire.CodeInvalidJSON, "body"},
		{"triage not an object", "POST", "/v1/queues/q/dead/purge", adminSecret, `["a"]`, 400, wire.CodeInvalidJSON, "body"},
		{"triage unknown field", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"all": true}`, 400, wire.CodeUnknownField, "all"},
		{"triage field twice", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"dry_run": true, "dry_run": false}`, 400, wire.CodeInvalidField, "dry_run"},
		{"triage ids and filter", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"ids": ["dead-1"], "filter": {"error": "boom"}}`, 400, wire.CodeInvalidField, "filter"},
		{"triage no ids", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"ids": []}`, 400, wire.CodeInvalidField, "ids"},
		{"triage ids not a list", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"ids": "dead-1"}`, 400, wire.CodeInvalidField, "ids"},
		{"triage a bad id", "POST", "/v1/queues/q/dead/requeue", adminSecret, `{"ids": ["dead-1", "a b"]}`, 400, wire.CodeInvalidField, "ids[1]"},
		{"triage an id that is a number", "POST", "/v1/queues/q/dead/requeue", adminSecret, `{"ids": [7]}`, 400, wire.CodeInvalidField, "ids[0]"},
		{"triage too many ids", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"ids": [` + strings.TrimSuffix(strings.Repeat(`"x",`, 1001), ",") + `]}`, 413, wire.CodeTooLarge, "ids"},
		{"triage filter not an object", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"filter": ["boom"]}`, 400, wire.CodeInvalidField, "filter"},
		{"triage filter unknown field", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"filter": {"queue": "q"}}`, 400, wire.CodeUnknownField, "filter.queue"},
		{"triage filter error as a number", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"filter": {"error": 5}}`, 400, wire.CodeInvalidField, "filter.error"},
		{"triage filter error of 257 bytes", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"filter": {"error": "` + strings.Repeat("e", 257) + `"}}`, 400, wire.CodeInvalidField, "filter.error"},
		{"triage filter died_after in words", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"filter": {"died_after": "last week"}}`, 400, wire.CodeInvalidField, "filter.died_after"},
		{"triage filter died_before not after died_after", "POST", "/v1/queues/q/dead/requeue", adminSecret, `{"filter": {"died_after": "2026-01-02T00:00:00Z", "died_before": "2026-01-02T00:00:00Z"}}`, 400, wire.CodeInvalidField, "filter.died_before"},
		{"triage dry_run as a string", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"dry_run": "yes"}`, 400, wire.CodeInvalidField, "dry_run"},
		{"triage max zero", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"max": 0}`, 400, wire.CodeInvalidField, "max"},
		{"triage max negative", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"max": -5}`, 400, wire.CodeInvalidField, "max"},
		{"triage a bad cursor", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"cursor": "bogus!"}`, 400, wire.CodeInvalidField, "cursor"},
		{"triage a filter's cursor with ids", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"ids": ["dead-1"], "cursor": "dDox"}`, 400, wire.CodeInvalidField, "cursor"},
		{"triage oversized body", "POST", "/v1/queues/q/dead/purge", adminSecret, `{"cursor": "` + strings.Repeat("c", 1<<20) + `"}`, 413, wire.CodeTooLarge, "body"},
		{"triage with a query parameter", "POST", "/v1/queues/q/dead/purge?dry_run=true", adminSecret, ``, 400, wire.CodeUnknownField, "dry_run"},
		{"producer purges by filter", "POST", "/v1/queues/q/dead/purge", producerSecret, `{"filter": {"error": "boom"}}`, 403, wire.CodeForbidden, "Authorization"},
		// Job keys: the list, one key, its limits.
		{"keys limit zero", "GET", "/v1/queues/q/keys?limit=0", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"keys limit beyond the maximum", "GET", "/v1/queues/q/keys?limit=1001", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"keys limit in words", "GET", "/v1/queues/q/keys?limit=ten", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"keys limit twice", "GET", "/v1/queues/q/keys?limit=1&limit=2", adminSecret, ``, 400, wire.CodeInvalidField, "limit"},
		{"keys unknown parameter", "GET", "/v1/queues/q/keys?top=5", adminSecret, ``, 400, wire.CodeUnknownField, "top"},
		{"keys of a bad queue", "GET", "/v1/queues/a%7Bb/keys", adminSecret, ``, 400, wire.CodeInvalidField, "queue"},
		{"key with a space in the path", "GET", "/v1/queues/q/keys/a%20b", adminSecret, ``, 400, wire.CodeInvalidField, "key"},
		{"key of 257 bytes in the path", "GET", "/v1/queues/q/keys/" + strings.Repeat("k", 257), adminSecret, ``, 400, wire.CodeInvalidField, "key"},
		{"key with a query parameter", "GET", "/v1/queues/q/keys/acme?limit=1", adminSecret, ``, 400, wire.CodeUnknownField, "limit"},
		{"key limits of a bad key", "PUT", "/v1/queues/q/keys/a%20b", adminSecret, `{"concurrency": 1}`, 400, wire.CodeInvalidField, "key"},
		{"key limits on a bad queue", "PUT", "/v1/queues/a%7Bb/keys/acme", adminSecret, `{"concurrency": 1}`, 400, wire.CodeInvalidField, "queue"},
		{"key concurrency below -1", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": -2}`, 400, wire.CodeInvalidField, "concurrency"},
		{"key concurrency beyond the maximum", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": 1000001}`, 400, wire.CodeInvalidField, "concurrency"},
		{"key concurrency overflowing", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": 99999999999999999999}`, 400, wire.CodeInvalidField, "concurrency"},
		{"key concurrency as a string", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": "5"}`, 400, wire.CodeInvalidField, "concurrency"},
		{"key concurrency fractional", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": 1.5}`, 400, wire.CodeInvalidField, "concurrency"},
		{"key weight negative", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"concurrency": 1, "weight": -1}`, 400, wire.CodeInvalidField, "weight"},
		{"key weight beyond the maximum", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"weight": 1001}`, 400, wire.CodeInvalidField, "weight"},
		{"key weight as a boolean", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"weight": true}`, 400, wire.CodeInvalidField, "weight"},
		{"key rate limit in words", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"rate_limit": "lots"}`, 400, wire.CodeInvalidField, "rate_limit"},
		{"key rate limit as a number", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"rate_limit": 10}`, 400, wire.CodeInvalidField, "rate_limit"},
		{"key rate limit of 0 per 1s", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"rate_limit": "0 per 1s"}`, 400, wire.CodeInvalidField, "rate_limit"},
		{"key rate limit beyond the maximum", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"rate_limit": "1000001 per 1s"}`, 400, wire.CodeInvalidField, "rate_limit"},
		{"key rate limit of a fraction of a ms", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"rate_limit": "5 per 1500us"}`, 400, wire.CodeInvalidField, "rate_limit"},
		{"key limits unknown field", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"cap": 5}`, 400, wire.CodeUnknownField, "cap"},
		{"key limits field twice", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"weight": 1, "weight": 2}`, 400, wire.CodeInvalidField, "weight"},
		{"key limits empty body", "PUT", "/v1/queues/q/keys/acme", adminSecret, ``, 400, wire.CodeInvalidJSON, "body"},
		{"key limits not an object", "PUT", "/v1/queues/q/keys/acme", adminSecret, `[5]`, 400, wire.CodeInvalidJSON, "body"},
		{"key limits malformed", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"weight":`, 400, wire.CodeInvalidJSON, "body"},
		{"key limits trailing data", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{} {}`, 400, wire.CodeInvalidJSON, "body"},
		{"key limits oversized body", "PUT", "/v1/queues/q/keys/acme", adminSecret, `{"weight": 1` + strings.Repeat(" ", 2000) + `}`, 413, wire.CodeTooLarge, "body"},
		{"key limits with a query parameter", "PUT", "/v1/queues/q/keys/acme?weight=2", adminSecret, `{}`, 400, wire.CodeUnknownField, "weight"},
		{"reset a bad key", "DELETE", "/v1/queues/q/keys/a%20b", adminSecret, ``, 400, wire.CodeInvalidField, "key"},
		{"producer reads keys", "GET", "/v1/queues/q/keys", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		{"producer reads a key", "GET", "/v1/queues/q/keys/acme", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		{"producer sets a key's limits", "PUT", "/v1/queues/q/keys/acme", producerSecret, `{"concurrency": 1}`, 403, wire.CodeForbidden, "Authorization"},
		{"producer resets a key's limits", "DELETE", "/v1/queues/q/keys/acme", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
		{"missing token sets a key's limits", "PUT", "/v1/queues/q/keys/acme", "", `{"concurrency": 1}`, 401, wire.CodeUnauthorized, "Authorization"},
		{"wrong method on a key", "POST", "/v1/queues/q/keys/acme", adminSecret, `{}`, 405, wire.CodeMethodNotAllowed, ""},
		{"wrong method on the keys", "PUT", "/v1/queues/q/keys", adminSecret, `{}`, 405, wire.CodeMethodNotAllowed, ""},
		// Forgetting a queue.
		{"forget a queue in use", "DELETE", "/v1/queues/q", adminSecret, ``, 409, wire.CodeConflict, "queue"},
		{"forget a bad queue", "DELETE", "/v1/queues/a%7Bb", adminSecret, ``, 400, wire.CodeInvalidField, "queue"},
		{"producer forgets a queue", "DELETE", "/v1/queues/q", producerSecret, ``, 403, wire.CodeForbidden, "Authorization"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	initial := b.snapshot()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do(tt.method, tt.path, tt.token, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %s", r.status, tt.status, r.body)
			}
			if tt.code != "" {
				e := r.apiErr(t)
				if e.Code != tt.code || e.Field != tt.field || e.Message == "" {
					t.Errorf("error %+v, want code %s field %q", e, tt.code, tt.field)
				}
			}
			switch tt.status {
			case http.StatusUnauthorized:
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			case http.StatusMethodNotAllowed:
				if r.header.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
			}
			if now := b.snapshot(); !maps.Equal(now, initial) {
				t.Errorf("Redis changed: %d keys before, %d after", len(initial), len(now))
				for k, v := range now {
					if initial[k] != v {
						t.Errorf("key %s changed", k)
					}
				}
			}
		})
	}
}

// manyHeaders is n members of a headers object, h0 to h<n-1>, each value
// size bytes long.
func manyHeaders(n, size int) string {
	members := make([]string, n)
	for i := range members {
		members[i] = `"h` + strconv.Itoa(i) + `": "` + strings.Repeat("v", size) + `"`
	}
	return strings.Join(members, ", ")
}
