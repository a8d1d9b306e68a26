package script

import (
	"crypto/sha1" // #nosec G505 -- EVALSHA names scripts by SHA-1 (see newVariant)
	"encoding/hex"
)

// Repeat says whether a call of a script may be sent again when its outcome
// is unknown (the connection broke after it was sent).
type Repeat int

const (
	// Once scripts are never resent: Redis may have run the call, and
	// running it twice would do more than once.
	Once Repeat = iota
	// Resend scripts may be resent by rueidis after a network error: they
	// only read, or a second run changes nothing more.
	Resend
)

// OOM says whether a script runs while Redis is out of memory; the rule
// for choosing is "Out of memory" in the package doc.
type OOM int

const (
	// DenyOOM scripts are sent without flags: Redis refuses them when it is
	// out of memory.
	DenyOOM OOM = iota
	// AllowOOM scripts are sent with the flag allow-oom: they run whole
	// when Redis is out of memory.
	AllowOOM
)

// Script is one declared script: see the catalog in scripts.go.
type Script struct {
	name   string
	repeat Repeat
	oom    OOM
	// flagged is what Redis gets: the file with its helpers, behind the
	// flags line when the script has flags.
	flagged variant
	// plain is the same script without the flags line, for a server that
	// does not know script flags (the embedded store of courier dev, Redis
	// before 7.0). It is flagged when the script has no flags.
	plain variant
}

// variant is one text of a script and its SHA1, which EVALSHA names it by.
type variant struct{ src, sha string }

func newVariant(src string) variant {
	// SHA-1 is what EVALSHA names a script by: an identifier fixed by
	// Redis, not a security measure.
	sum := sha1.Sum([]byte(src)) // #nosec G401 -- Redis' script identifier, not a security use
	return variant{src: src, sha: hex.EncodeToString(sum[:])}
}

// declare returns the script of lua/<name>.lua. The files are embedded,
// so an error here is a broken build, caught by this package's tests.
func declare(name string, repeat Repeat, oom OOM) *Script {
	flagged, plain, err := sources(name, oom)
	if err != nil {
		panic(err) // a missing or malformed embedded file: script_test.go fails first
	}
	return &Script{name: name, repeat: repeat, oom: oom, flagged: newVariant(flagged), plain: newVariant(plain)}
}

// Name returns the script's name: its file name without ".lua". Metrics
// label its calls with it.
func (s *Script) Name() string { return s.name }

// Source returns what is sent to Redis: the script with the helpers it
// uses, behind its flags line if it has flags.
func (s *Script) Source() string { return s.flagged.src }

// SHA returns the SHA1 of Source, which EVALSHA names the script by.
func (s *Script) SHA() string { return s.flagged.sha }

// Repeat returns whether a call may be sent again after an unknown outcome.
func (s *Script) Repeat() Repeat { return s.repeat }

// OOM returns whether the script runs while Redis is out of memory.
func (s *Script) OOM() OOM { return s.oom }

// Call is one call's keys and arguments.
type Call struct {
	Keys, Args []string
}
