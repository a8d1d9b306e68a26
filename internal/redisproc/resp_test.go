package redisproc

import (
	"bufio"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadReply(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{":42\r\n", int64(42)},
		{"$5\r\nhello\r\n", "hello"},
		{"$0\r\n\r\n", ""},
		{"$-1\r\n", nil},
		{"*-1\r\n", nil},
		{"*3\r\n:1\r\n$3\r\nkey\r\n*2\r\n+a\r\n:2\r\n", []any{int64(1), "key", []any{"a", int64(2)}}},
		{"$12\r\nline\r\nbreak!\r\n", "line\r\nbreak!"},
	}
	for _, c := range cases {
		got, err := readReply(bufio.NewReader(strings.NewReader(c.in)))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("readReply(%q) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
}

func TestReadReplyErrors(t *testing.T) {
	t.Parallel()
	_, err := readReply(bufio.NewReader(strings.NewReader("-OOM command not allowed\r\n")))
	var re *RedisError
	if !errors.As(err, &re) || re.Msg != "OOM command not allowed" {
		t.Errorf("error reply = %v, want a *RedisError with its message", err)
	}
	for _, bad := range []string{"", "\r\n", "?x\r\n", "$abc\r\n", "$5\r\nab", ":x\r\n"} {
		if _, err := readReply(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("readReply(%q): no error", bad)
		}
	}
}

func TestEncodeCommand(t *testing.T) {
	t.Parallel()
	got := string(encodeCommand([]string{"SET", "k", ""}))
	if want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; got != want {
		t.Errorf("encodeCommand = %q, want %q", got, want)
	}
}
