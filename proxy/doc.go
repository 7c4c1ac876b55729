// Package proxy serves network devices as Salt proxy minions, many devices in one process.
//
// Not implemented yet: see README.md for what works today.
package proxy
