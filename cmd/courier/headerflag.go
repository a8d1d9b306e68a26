package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// headerFlag is courier enqueue's --header NAME=VALUE, given once per
// header: the job's headers. The value is what follows the first "=", so
// it may hold "=" itself. Names and values are the library's to check
// (worker.MaxHeaders and the rest); its errors name the header, which the
// command table turns into --header.
type headerFlag map[string]string

// String implements flag.Value: the headers as given, sorted by name.
func (h *headerFlag) String() string {
	if h == nil || len(*h) == 0 {
		return ""
	}
	pairs := make([]string, 0, len(*h))
	for _, name := range slices.Sorted(maps.Keys(*h)) {
		pairs = append(pairs, name+"="+(*h)[name])
	}
	return strings.Join(pairs, " ")
}

// Set implements flag.Value: one NAME=VALUE.
func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return errors.New("want NAME=VALUE, e.g. --header tenant=acme")
	case name == "":
		return errors.New("the header name before = is empty")
	}
	if _, dup := (*h)[name]; dup {
		return fmt.Errorf("header %q is given twice", name)
	}
	if *h == nil {
		*h = headerFlag{}
	}
	(*h)[name] = value
	return nil
}
