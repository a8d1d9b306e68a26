package redisproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// RedisError is an error reply of a Redis node.
type RedisError struct{ Msg string }

func (e *RedisError) Error() string { return e.Msg }

// Command sends one command to addr on a fresh connection and returns the
// reply: a string (simple or bulk), an int64, nil (a null) or []any (an
// array of those). An error reply is a *RedisError, returned unwrapped.
// ctx bounds the whole call; without a deadline only its end does.
func Command(ctx context.Context, addr string, args ...string) (any, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(encodeCommand(args)); err != nil {
		return nil, fmt.Errorf("%s to %s: %w", args[0], addr, err)
	}
	reply, err := readReply(bufio.NewReader(conn))
	if err != nil {
		var re *RedisError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, fmt.Errorf("%s to %s: %w", args[0], addr, err)
	}
	return reply, nil
}

// encodeCommand writes args as a RESP array of bulk strings.
func encodeCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, &RedisError{Msg: body}
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("bad bulk length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("bad array length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		items := make([]any, n)
		for i := range items {
			if items[i], err = readReply(r); err != nil {
				var re *RedisError
				if !errors.As(err, &re) {
					return nil, err
				}
				items[i] = re // an error inside an array is a value
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", line[0])
}
