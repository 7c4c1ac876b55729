// Package pillar compiles per-minion pillar data from pillar_roots and top files.
//
// Not implemented yet: see README.md for what works today.
package pillar
