package testkit

import "github.com/heraldpush/herald/push/pushtest"

// Clock is a push.Clock that runs with real time but can be moved
// forward, for testing deadlines such as the queue-wait limit: the clock
// of package pushtest's harness.
type Clock = pushtest.Clock
