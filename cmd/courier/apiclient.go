package main

import (
	"context"
	"flag"
	"os"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Environment variables of the --api mode. They have no double underscore,
// so they are not configuration keys.
const (
	envAPI   = "COURIER_API"
	envToken = "COURIER_TOKEN"
)

// apiFlags are --api and --token, which send a client command through the
// HTTP API instead of to Redis.
type apiFlags struct {
	url, token string
}

func addAPIFlags(fs *flag.FlagSet) *apiFlags {
	a := &apiFlags{}
	fs.StringVar(&a.url, "api", "", "go through the HTTP API at this URL (http://host:9750) instead of to Redis; or "+envAPI)
	fs.StringVar(&a.token, "token", "", "bearer token of the HTTP API; prefer "+envToken+" (flags show in ps)")
	return a
}

// remote reports whether the command goes through the API, filling the
// URL and token from the environment when the flags are not given. The
// Redis flags make no sense then: a usage error.
func (a *apiFlags) remote(fs *flag.FlagSet) (bool, error) {
	if a.url == "" {
		a.url = os.Getenv(envAPI)
	}
	if a.token == "" {
		a.token = os.Getenv(envToken)
	}
	if a.url == "" {
		if setFlags(fs)["token"] {
			return false, usagef("--token needs --api")
		}
		return false, nil
	}
	for _, name := range []string{"config", "redis", "prefix"} {
		if setFlags(fs)[name] {
			return false, usagef("give --api or --%s, not both", name)
		}
	}
	return true, nil
}

// dial returns the client the flags of fs ask for (remote, then open)
// and a function that releases it.
func (a *apiFlags) dial(ctx context.Context, fs *flag.FlagSet, cf *configFlags) (admin.Operator, func(), error) {
	remote, err := a.remote(fs)
	if err != nil {
		return nil, nil, err
	}
	return a.open(ctx, remote, cf)
}

// open returns the operator the flags ask for and a function that
// releases it: the API's client when remote, else one on Redis; the
// client commands do the same through either, with the same results and
// errors.
func (a *apiFlags) open(ctx context.Context, remote bool, cf *configFlags) (admin.Operator, func(), error) {
	if remote {
		c, err := api.NewClient(a.url, a.token, nil)
		if err != nil {
			return nil, nil, &usageError{field: "--api", msg: err.Error()}
		}
		return c, func() {}, nil
	}
	c, closeClient, err := cf.openClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c, closeClient, nil
}
