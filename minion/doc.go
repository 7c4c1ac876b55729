// Package minion is the gsalt minion: the connection to a master, the job runner and grains.
//
// Not implemented yet: see README.md for what works today.
package minion
