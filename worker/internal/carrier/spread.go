package carrier

import (
	"context"
	"errors"
	"time"
)

// The leaderships of a queue's partitions spread over the processes that
// serve it. A process that leads more of a queue's partitions than its
// share (the partitions divided by the processes serving the queue,
// rounded up) hands the leadership of one partition over every
// spreadInterval, and waits spreadBackoff before it stands for it again,
// so a process with fewer takes it over. Partition 0 is never handed over
// for this. Before it stands for a partition, a process that leads some
// of the queue's partitions already waits a little per partition it
// leads (spreadDelay), so that at a fleet's start the processes leading
// fewer win the elections.
const (
	spreadInterval = 10 * time.Second
	spreadBackoff  = 3 * time.Second
	spreadDelay    = 50 * time.Millisecond
)

// errHandOver ends a leadership term handed over to spread leaderships.
var errHandOver = errors.New("leadership handed over to spread the partitions' leaders")

// led counts the partitions of group this process leads.
func (c *Carrier) led(group string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.queues {
		if q.Group == group && c.leading[q.Name] {
			n++
		}
	}
	return n
}

// partitionsOf counts the partitions of group this process serves.
func (c *Carrier) partitionsOf(group string) int {
	n := 0
	for _, q := range c.queues {
		if q.Group == group {
			n++
		}
	}
	return n
}

// waitShare waits before q's election while this process leads other
// partitions of q's Group (spreadDelay per partition), and for
// spreadBackoff after it handed q over. It reports false when ctx ended.
func (c *Carrier) waitShare(ctx context.Context, q Queue) bool {
	if q.Group == "" {
		return true
	}
	c.mu.Lock()
	backoff := c.handedOver[q.Name]
	delete(c.handedOver, q.Name)
	c.mu.Unlock()
	d := time.Duration(c.led(q.Group)) * spreadDelay
	if backoff {
		d += spreadBackoff
	}
	return d == 0 || sleep(ctx, d)
}

// spreadLoop hands q over when this process leads more of its Group's
// partitions than its share, q being the one of highest name among those
// it leads (never partition 0).
func (c *Carrier) spreadLoop(ctx context.Context, q Queue) error {
	if !q.partition() || c.cfg.FleetSize == nil {
		return nil
	}
	for sleep(ctx, spreadInterval) {
		procs, err := c.cfg.FleetSize(ctx, q.Group)
		if err != nil || procs <= 1 {
			continue
		}
		parts := c.partitionsOf(q.Group)
		share := (parts + procs - 1) / procs
		if c.led(q.Group) <= share || !c.lastLed(q) {
			continue
		}
		c.mu.Lock()
		c.handedOver[q.Name] = true
		c.mu.Unlock()
		return errHandOver
	}
	return nil
}

// lastLed reports whether q is, of its Group's partitions i ≥ 1 this
// process leads, the last in the Carrier's order.
func (c *Carrier) lastLed(q Queue) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := ""
	for _, o := range c.queues {
		if o.Group == q.Group && o.partition() && c.leading[o.Name] {
			last = o.Name
		}
	}
	return last == q.Name
}
