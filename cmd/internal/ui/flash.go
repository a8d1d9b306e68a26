package ui

import (
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"strings"
)

// flashCookie carries the outcome of an action to the page the browser is
// redirected to: base64url(JSON) "." base64url(MAC), the MAC the
// principal's, as the session's is. It lives a minute and is read once.
const flashCookie = "courier_flash"

// maxFlashText bounds a flash's message, so that the cookie stays small.
const maxFlashText = 1000

// flash is an action's outcome as the next page shows it.
type flash struct {
	OK   bool   `json:"ok,omitempty"`
	Text string `json:"t"`
	// Link, when set, is a page of the UI the message refers to (the job
	// enqueued), shown as LinkText.
	Link     string `json:"l,omitempty"`
	LinkText string `json:"lt,omitempty"`
	// Warning, when set, qualifies a success: the job enqueued went to a
	// queue or kind no daemon has ever served (the API's "warning").
	Warning string `json:"w,omitempty"`
	// More, when set, continues a requeue or purge that matched more dead
	// jobs than one request handles.
	More *more `json:"m,omitempty"`
}

// more is what continues a requeue or purge of every dead job matching a
// filter: the API's next_cursor.
type more struct {
	Action string `json:"a"` // "requeue" or "purge"
	Queue  string `json:"q"`
	Set    string `json:"s,omitempty"` // "cancelled", or dead
	Error  string `json:"e,omitempty"`
	Cursor string `json:"c"`
}

// URL is where the continuation's form posts (a purge goes through its
// confirmation again).
func (m *more) URL() string { return queueURL(m.Queue) + "/" + m.Action }

// setFlash sets f for the next page s's browser loads.
func (h *Handler) setFlash(w http.ResponseWriter, r *http.Request, s *session, f flash) {
	if len(f.Text) > maxFlashText {
		f.Text = truncate(maxFlashText, f.Text)
	}
	if len(f.Warning) > maxFlashText {
		f.Warning = truncate(maxFlashText, f.Warning)
	}
	data, err := json.Marshal(f)
	if err != nil {
		return // strings only: cannot fail
	}
	payload := b64.EncodeToString(data)
	mac := s.p.Sign([]byte("flash|" + s.nonce + "|" + payload))
	setCookie(w, r, flashCookie, payload+"."+b64.EncodeToString(mac), 60)
}

// takeFlash returns the flash set for s, if any, and clears it.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request, s *session) *flash {
	c, err := readCookie(r, flashCookie)
	if err != nil {
		return nil
	}
	setCookie(w, r, flashCookie, "", -1)
	payload, encMAC, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil
	}
	mac, err := b64.DecodeString(encMAC)
	if err != nil || !hmac.Equal(mac, s.p.Sign([]byte("flash|"+s.nonce+"|"+payload))) {
		return nil
	}
	data, err := b64.DecodeString(payload)
	if err != nil {
		return nil
	}
	var f flash
	if json.Unmarshal(data, &f) != nil {
		return nil
	}
	return &f
}
