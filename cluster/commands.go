package cluster

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// CommandCounter counts the commands a Redis client sends (a pipeline's
// commands one by one) and its round trips (a pipeline is one): what a
// node costs the shared Redis. Add it to a client with AddHook.
type CommandCounter struct {
	commands   atomic.Int64
	roundTrips atomic.Int64
}

var _ redis.Hook = (*CommandCounter)(nil)

// Commands returns the commands sent so far.
func (c *CommandCounter) Commands() int64 { return c.commands.Load() }

// RoundTrips returns the round trips made so far.
func (c *CommandCounter) RoundTrips() int64 { return c.roundTrips.Load() }

// DialHook implements redis.Hook.
func (c *CommandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (c *CommandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		c.roundTrips.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		c.roundTrips.Add(1)
		return next(ctx, cmds)
	}
}
