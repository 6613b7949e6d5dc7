package queue

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

// ReserveTask exposes reserveTask to the tests.
func (q *Redis) ReserveTask(ctx context.Context, typ, tid string, payload []byte, due time.Time, ids []string) (bool, error) {
	return q.reserveTask(ctx, typ, tid, payload, due, ids)
}

// TaskOptions exposes taskOptions to the tests.
func (q *Redis) TaskOptions(id string) []asynq.Option { return q.taskOptions(id) }

// WriteAlone exposes writeAlone to the tests.
func (q *Redis) WriteAlone(ctx context.Context, id, dead string) (int, error) {
	return q.writeAlone(ctx, id, dead)
}
