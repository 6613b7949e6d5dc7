//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// lockFile does not lock where the OS has no flock (Windows and others):
// there, starting one herald serve per SQLite database is the operator's
// care.
func lockFile(*os.File) error { return nil }
