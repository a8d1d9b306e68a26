package core

import "time"

// timeTokens is the smallest claim token that is a time: tokens of
// versions before the state hash came from a counter, below it (see
// lua/record.lua, OLD_TOKEN); later ones are the Redis clock in µs.
const timeTokens = 1e15

// StartedAt returns when the attempt with claim token claim was claimed
// (worker.Job.StartedAt); zero when the job is not active (claim 0) or the
// token is not a time.
func StartedAt(claim int64) time.Time {
	if claim < timeTokens {
		return time.Time{}
	}
	return time.UnixMicro(claim)
}
