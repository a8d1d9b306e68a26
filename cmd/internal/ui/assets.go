package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
)

//go:embed static/app.css static/app.js
var staticFS embed.FS

// asset is one embedded static file.
type asset struct {
	body        []byte
	contentType string
}

// assetMaxAge is the assets' Cache-Control max-age: their URLs carry a
// hash of their content, so a new build is fetched at once.
const assetMaxAge = 7 * 24 * 3600

// loadAssets reads the static files and returns them with the URLs the
// pages reference them by, each with its content hash as ?v=.
func loadAssets() (files map[string]asset, css, js string, err error) {
	files = make(map[string]asset, 2)
	urls := make(map[string]string, 2)
	for name, ctype := range map[string]string{"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"} {
		body, err := staticFS.ReadFile("static/" + name)
		if err != nil {
			return nil, "", "", fmt.Errorf("ui: read static/%s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		files[name] = asset{body: body, contentType: ctype}
		urls[name] = "/ui/static/" + name + "?v=" + hex.EncodeToString(sum[:6])
	}
	return files, urls["app.css"], urls["app.js"], nil
}

// serveStatic serves GET /ui/static/{name}, to anyone: the login page
// needs it.
func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := h.static[r.PathValue("name")]
	if !ok {
		h.notFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", "public, max-age="+strconv.Itoa(assetMaxAge))
	hdr.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body) // the client may be gone; nothing to do then
	}
}
