package admin

import (
	"fmt"

	"github.com/seed-53d105c9/courier/worker"
)

// invalid is the *worker.ValidationError naming field.
func invalid(field, format string, args ...any) error {
	return &worker.ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// validateRef checks a queue name and a job id.
func validateRef(queue, id string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	return worker.ValidateID(id)
}
