package push

// PendingJobReads returns how many workers wait for their jobs' next read
// together (see jobReads).
func PendingJobReads(e *Engine) int {
	e.reads.mu.Lock()
	defer e.reads.mu.Unlock()
	return len(e.reads.pending)
}
