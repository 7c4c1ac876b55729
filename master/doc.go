// Package master is the gsalt master: keys, auth, jobs, the job cache and runners. It knows nothing of sockets; the wire layer carries its messages.
//
// Not implemented yet: see README.md for what works today.
package master
