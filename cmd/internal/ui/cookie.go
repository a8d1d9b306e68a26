package ui

import "net/http"

// The UI's cookies (the session and the flash) are HttpOnly and
// SameSite=Strict. Over TLS each carries the __Host- prefix, which the
// browser accepts only with Secure, Path=/ and no Domain: no other host (a
// subdomain) can set or overwrite it, and no plain-HTTP service of the
// host can plant one the UI would take (a cookie without the prefix is
// not read over TLS). Over plain HTTP (loopback, courier dev) a Secure
// cookie would never come back, so it has no prefix and keeps to /ui/.
// Cookies are not kept apart by port in any case: every service on the
// same host name receives them, so an exposed UI wants a host name of its
// own (docs/security.md).

// hostPrefix is the cookie name prefix of a cookie bound to its host.
const hostPrefix = "__Host-"

// cookieName is the name the UI's cookie name has on r.
func cookieName(r *http.Request, name string) string {
	if r.TLS != nil {
		return hostPrefix + name
	}
	return name
}

// readCookie returns r's cookie name, as setCookie names it on r.
func readCookie(r *http.Request, name string) (*http.Cookie, error) {
	return r.Cookie(cookieName(r, name))
}

// setCookie sets the UI's cookie name; maxAge -1 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	// #nosec G124 -- Secure whenever the UI is served over TLS; over plain
	// HTTP (loopback, courier dev) a Secure cookie would never come back.
	c := &http.Cookie{
		Name: cookieName(r, name), Value: value, Path: "/ui/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}
	if r.TLS != nil {
		c.Secure, c.Path = true, "/" // what __Host- requires
	}
	http.SetCookie(w, c)
}
