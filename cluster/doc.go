// Package cluster holds what lets several Herald processes on one Redis
// act as one service: completion notices over Redis pub/sub (Notifier), so
// that the node holding a request's synchronous wait hears when a worker
// on any node settles its job, and the per-key rate limit kept in Redis
// (RateLimiter), so that every node counts against one budget. Node builds
// both with the asynq queue (queue.Redis) and makes an engine's options
// use them.
package cluster
