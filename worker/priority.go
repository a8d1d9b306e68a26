package worker

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Priority is a job's priority: among a queue's due jobs, a higher level
// is claimed first, and within a level the earliest run-at; no job starts
// before its run-at, whatever its level. The order among levels is strict,
// or shared by QueueOptions.PriorityWeights. The zero value is
// PriorityNormal.
type Priority int8

// The priority levels.
const (
	PriorityLow    Priority = -1
	PriorityNormal Priority = 0
	PriorityHigh   Priority = 1
)

// String returns "low", "normal" or "high".
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	}
	return fmt.Sprintf("Priority(%d)", int8(p))
}

// ParsePriority reads "low", "normal" or "high" (any case); "" is normal.
func ParsePriority(s string) (Priority, error) {
	switch strings.ToLower(s) {
	case "low":
		return PriorityLow, nil
	case "", "normal":
		return PriorityNormal, nil
	case "high":
		return PriorityHigh, nil
	}
	return 0, invalid("Priority", "%q is not a priority; use low, normal or high", s)
}

func (p Priority) validate() error {
	if p < PriorityLow || p > PriorityHigh {
		return invalid("Priority", "%d is not a priority; use PriorityLow, PriorityNormal or PriorityHigh", int8(p))
	}
	return nil
}

// PriorityWeights protect a queue's lower priority levels from starving:
// each claim shares its jobs among the levels that have jobs due, in
// proportion to their weights (0 to 1000 each): with {8, 3, 1} and a
// backlog at every level, about 8 of 12 jobs started are high. A level
// with nothing due leaves its share to the others; a weight of 0 runs a
// level only when the others have nothing due. The zero value is strict
// priority.
type PriorityWeights struct {
	High, Normal, Low int
}

func (w PriorityWeights) validate() error {
	if w == (PriorityWeights{}) {
		return nil
	}
	for _, v := range []int{w.High, w.Normal, w.Low} {
		if v < 0 || v > store.MaxWeight {
			return invalid("PriorityWeights", "each weight must be 0 to %d (got %d, %d, %d)", store.MaxWeight, w.High, w.Normal, w.Low)
		}
	}
	return nil
}

// MaxUniqueFor is the longest JobSpec.UniqueFor and QueueOptions.IDRetention.
const MaxUniqueFor = store.MaxUniqueFor

// validateUnique checks the unique fields of spec.
func validateUnique(spec *JobSpec) error {
	if err := validateIDAs("Key", spec.Key); err != nil {
		return err
	}
	if err := validateIDAs("UniqueKey", spec.UniqueKey); err != nil {
		return err
	}
	switch {
	case spec.UniqueFor < 0:
		return invalid("UniqueFor", "must not be negative (got %s)", spec.UniqueFor)
	case spec.UniqueFor > MaxUniqueFor:
		return invalid("UniqueFor", "%s is over the limit of %s", spec.UniqueFor, MaxUniqueFor)
	case spec.UniqueFor > 0 && spec.UniqueFor < time.Millisecond:
		return invalid("UniqueFor", "must be at least 1ms (got %s)", spec.UniqueFor)
	case spec.UniqueFor > 0 && spec.UniqueKey == "":
		return invalid("UniqueFor", "needs a unique key: the window holds one")
	case spec.UniqueAfterFinish && spec.UniqueFor == 0:
		return invalid("UniqueAfterFinish", "needs a window to count from the finish")
	}
	return nil
}

// validateIDAs checks v, when set, by the id rules (ValidateID), naming
// field in the error.
func validateIDAs(field, v string) error {
	if v == "" {
		return nil
	}
	return validateIDField(field, v)
}

// validateIDField checks v by the id rules (ValidateID), naming field in
// the error.
func validateIDField(field, v string) error {
	err := ValidateID(v)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return invalid(field, "%s", ve.Reason)
	}
	return err
}
