package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// writeJSON writes v as the body with status; 204 has no body. HTML
// characters are not escaped (wire.Encode), so a JSON payload comes back
// as it went in.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = wire.Encode(w, v) // the client may be gone; nothing to do then
}

// writeError writes {"error": e} with e's status and, for 429 and 503,
// Retry-After in whole seconds.
func writeError(w http.ResponseWriter, e *Error) {
	if e.retryAfter > 0 {
		secs := (e.retryAfter + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	}
	if e.Code == wire.CodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="courier"`)
	}
	writeJSON(w, e.Code.Status(), wire.ErrorReply{Error: e.wireError})
}
