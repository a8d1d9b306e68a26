package worker

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// idGen makes time-sortable unique ids: 48 bits of Unix milliseconds and 80
// random bits, in Crockford base32 (26 characters, like a ULID). Within one
// millisecond the random part is incremented, so one generator's ids are
// strictly increasing.
type idGen struct {
	mu   sync.Mutex
	ms   uint64
	hi   uint16 // random bits 79..64
	lo   uint64 // random bits 63..0
	rand [10]byte
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func (g *idGen) next(now time.Time) string {
	g.mu.Lock()
	ms := uint64(max(now.UnixMilli(), 0))
	if ms > g.ms {
		g.ms = ms
		_, _ = rand.Read(g.rand[:]) // never fails on supported platforms
		g.hi = binary.BigEndian.Uint16(g.rand[:2])
		g.lo = binary.BigEndian.Uint64(g.rand[2:])
	} else {
		// Same (or an earlier, if the clock stepped back) millisecond: keep
		// the last timestamp and count up, so order is kept.
		g.lo++
		if g.lo == 0 {
			g.hi++
		}
	}
	ts, hi, lo := g.ms, g.hi, g.lo
	g.mu.Unlock()

	var b [26]byte
	// 10 characters of timestamp (50 bits, top 2 always zero).
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ts&31]
		ts >>= 5
	}
	// 16 characters of randomness: 80 bits = hi(16) + lo(64).
	for i := 25; i >= 10; i-- {
		b[i] = crockford[lo&31]
		lo = lo>>5 | uint64(hi&31)<<59
		hi >>= 5
	}
	return string(b[:])
}
