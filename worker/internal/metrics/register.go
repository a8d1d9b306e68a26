package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// collector is a pointer to one of a set's collectors, registered by
// register.
type collector interface {
	// register registers the collector on reg, or makes it the collector
	// already registered there under its name; undo unregisters it when
	// register registered it.
	register(reg prometheus.Registerer) (undo func(), err error)
}

// shared is a collector of type C that two Sets on one registry share.
type shared[C prometheus.Collector] struct{ c *C }

// share returns c as a collector for register.
func share[C prometheus.Collector](c *C) collector { return shared[C]{c} }

func (s shared[C]) register(reg prometheus.Registerer) (func(), error) {
	err := reg.Register(*s.c)
	if err == nil {
		c := *s.c
		return func() { reg.Unregister(c) }, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			*s.c = existing
			return func() {}, nil
		}
	}
	return nil, err
}

// register registers every collector on reg. A collector registered already
// (a second Daemon, Client or lock client in the process) is shared: its
// series are the first one's. When one fails, the ones registered here are
// unregistered again and the error names what was registered.
func register(reg prometheus.Registerer, what string, cs ...collector) error {
	if reg == nil {
		return fmt.Errorf("register %s metrics: nil Registerer", what)
	}
	var undo []func()
	for _, c := range cs {
		u, err := c.register(reg)
		if err != nil {
			for _, f := range undo {
				f()
			}
			return fmt.Errorf("register %s metrics: %w", what, err)
		}
		undo = append(undo, u)
	}
	return nil
}
