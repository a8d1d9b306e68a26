package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// Revocations keep the sessions that were logged out. The daemon's are in
// Redis (RedisRevocations), so that a log-out holds on every daemon that
// shares the tokens, and after a restart.
type Revocations interface {
	// Revoke refuses the session id from now on, for ttl: the session's
	// remaining lifetime, after which its cookie has expired anyway.
	Revoke(ctx context.Context, id string, ttl time.Duration) error
	// Revoked reports whether the session id was logged out.
	Revoked(ctx context.Context, id string) (bool, error)
}

// ErrRevocationsUnavailable is returned by RedisRevocations while the
// daemon has not reached Redis yet.
var ErrRevocationsUnavailable = errors.New("ui: Redis has not been reached yet")

// redisRevocations keep each logged-out session as its own key,
// <prefix>:ui:revoked:<session nonce>, that expires with the session:
// nothing to prune, no bound that a token holder logging out many
// sessions could push others' revocations out of, and no key per session
// that was not logged out. Plain commands (SET with PX, EXISTS), which the
// minimal ACL user of docs/security.md has.
type redisRevocations struct {
	rdb    func() rueidis.Client
	prefix string
}

// RedisRevocations returns the Revocations kept in Redis under prefix
// (Courier's key prefix) through rdb, which returns the client, or nil
// while Redis has not been reached (every call then fails with
// ErrRevocationsUnavailable).
func RedisRevocations(rdb func() rueidis.Client, prefix string) Revocations {
	return redisRevocations{rdb: rdb, prefix: prefix}
}

// RevokedKey is the Redis key that marks the session whose nonce is id
// as logged out, under prefix.
func RevokedKey(prefix, id string) string { return prefix + ":ui:revoked:" + id }

func (rv redisRevocations) Revoke(ctx context.Context, id string, ttl time.Duration) error {
	c := rv.rdb()
	if c == nil {
		return ErrRevocationsUnavailable
	}
	ttl = max(ttl, time.Second)
	cmd := c.B().Set().Key(RevokedKey(rv.prefix, id)).Value("1").PxMilliseconds(ttl.Milliseconds()).Build()
	if err := c.Do(ctx, cmd).Error(); err != nil {
		return fmt.Errorf("ui: record the log-out: %w", err)
	}
	return nil
}

func (rv redisRevocations) Revoked(ctx context.Context, id string) (bool, error) {
	c := rv.rdb()
	if c == nil {
		return false, ErrRevocationsUnavailable
	}
	n, err := c.Do(ctx, c.B().Exists().Key(RevokedKey(rv.prefix, id)).Build()).AsInt64()
	if err != nil {
		return false, fmt.Errorf("ui: check the session: %w", err)
	}
	return n > 0, nil
}
