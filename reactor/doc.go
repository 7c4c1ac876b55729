// Package reactor maps events on the master bus to reactions described in reactor SLS files.
//
// Not implemented yet: see README.md for what works today.
package reactor
