//go:build !unix

package bench

import "time"

// selfCPU is 0 where the OS has no getrusage (Windows): the report's CPU
// figures read 0 there.
func selfCPU() time.Duration { return 0 }
