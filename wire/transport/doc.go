// Package transport carries ZeroMQ (ZMTP 3.x, NULL mechanism) frames between a
// Salt-compatible master and its minions. It deals only in frames ([]byte and
// [][]byte) and knows nothing about msgpack, crypto or Salt jobs.
//
// It provides the four socket roles Salt uses over TCP:
//
//   - [PubServer]: the master's PUB socket (port 4505), with a bounded queue per
//     subscriber so one slow minion cannot stall the others.
//   - [Subscriber]: the minion's SUB socket, which owns reconnection and
//     re-subscription and reports every re-connection on [Subscriber.Reconnected].
//   - [ReqServer]: the master's ROUTER socket (port 4506), which answers each
//     request on the connection it arrived on and runs a bounded worker pool.
//   - [Request] and [ReqClient]: a fresh REQ connection per request, as Salt does.
//
// # Relationship to zmq4
//
// github.com/go-zeromq/zmq4 is the ZMTP engine: its Open performs the greeting and
// the NULL handshake and its Conn encodes and decodes frames. This package does not
// use zmq4's socket types (NewPub, NewSub, NewRouter, NewReq) because, in v0.17.0,
// they run the handshake synchronously in the accept loop (one silent client blocks
// every later client), do not recover from a restarted peer, write to subscribers
// serially and, most importantly, panic inside their own goroutines on a single
// malformed READY command or a huge frame length (which would crash the process).
// Instead every TCP connection is wrapped in a guard (see guard.go) that parses the
// byte stream zmq4 is about to read: it checks the greeting, validates the READY
// metadata, refuses frames and messages above [Limits] before zmq4 allocates
// anything, hands zmq4 a frame only once its bytes have actually arrived (so memory
// is proportional to data received, not to lengths announced), swallows
// PING/PONG (answering PINGs itself) and turns ZMTP 3.1 SUBSCRIBE/CANCEL commands
// into 3.0 subscription messages. Calls into zmq4 are additionally protected by
// recover. Handshakes run concurrently, one goroutine per connection, under
// [Limits.HandshakeTimeout].
//
// No zmq4 transport is registered and the package keeps no package-level mutable
// state.
//
// zmq4 announces ZMTP 3.0 in its greeting, so libzmq peers send subscriptions as
// 3.0 messages (0x01 + topic) rather than SUBSCRIBE commands; both forms are
// accepted.
package transport
