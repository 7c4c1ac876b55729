package master

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// SubscriptionWaiter is implemented by a Publisher that can tell when a
// subscriber's subscriptions are applied (transport.PubServer: by the
// subscriber's ZMTP identity, a gsalt minion's id, or else by waiting for
// the connections that are still to subscribe).
type SubscriptionWaiter interface {
	// WaitSubscribed waits until the peer id subscribed to a prefix of
	// each of topics (with none: to anything), or until no connection
	// that may be its subscription is left unsubscribed; it reports
	// whether it saw id's own subscription.
	WaitSubscribed(ctx context.Context, id string, topics ...[]byte) bool
}

// startSubscribeWait bounds how long a minion's start event waits for the
// minion's publish subscription.
const startSubscribeWait = 5 * time.Second

// maxStartWaits bounds the start events waiting for their minion's
// subscription at once; past it an event is fired without waiting.
const maxStartWaits = 4096

// fireAfterSubscription fires a minion's start event once the minion's
// publish subscription is applied (awaitSubscription), on a goroutine of
// its own, then calls then (when not nil): the request worker that
// carried the event is not held, so a cold start of thousands of
// minions, each event waiting up to startSubscribeWait, does not hold the
// request workers that returns and the CLI need. handleAES answers the
// event's request in then (transport.Later), so a minion that waits for
// that answer before it says it is ready (a gsalt minion, a gsalt-proxy
// device, Salt's minion logging "ready to receive requests") is ready
// only once a publish can reach it.
func (m *Master) fireAfterSubscription(id, tag string, load *payload.Map, then func()) {
	if then == nil {
		then = func() {}
	}
	if _, ok := m.pub.(SubscriptionWaiter); !ok || m.ctx.Err() != nil {
		m.fire(tag, load)
		then()
		return
	}
	if m.startWaits.Add(1) > maxStartWaits {
		m.startWaits.Add(-1)
		m.fire(tag, load)
		then()
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer m.startWaits.Add(-1)
		m.awaitSubscription(m.ctx, id)
		m.fire(tag, load)
		then()
	}()
}

// heldStart is aesMinionEvent's answer for a start event: handleAES fires
// it once the minion's subscription is applied and answers the request
// then.
type heldStart struct {
	id, tag string
	load    *payload.Map
}

// idTopic is the publish topic of one minion with zmq_filtering: the hex
// SHA-1 of its id (Salt's hexid).
func idTopic(id string) []byte {
	h := sha1.Sum([]byte(id))
	return []byte(hex.EncodeToString(h[:]))
}

// isStartTag reports whether tag is one of the start events minion id
// fires once it subscribed to the publisher.
func isStartTag(tag, id string) bool {
	return tag == "minion_start" || tag == "salt/minion/"+id+"/start"
}

// awaitSubscription holds a minion's start event until the publisher has
// applied that minion's subscription. A minion fires its start event
// after it sent its subscription, on another connection; a busy master
// could otherwise act on the event (a reactor publishing a job to the
// minion, a client publishing right after the minion said it started)
// before it read the subscription, and the publish would not reach the
// minion. Salt's minion fires the event in the same order (after its SUB
// socket connected and its pillar came); Salt's master is slow enough
// that it rarely loses the race. A gsalt minion names itself in its SUB
// handshake; libzmq's SUB (a Salt minion) does not, and then the event
// waits for the publish connections still in their handshake or not yet
// subscribed. The wait is bounded by startSubscribeWait; a minion already
// subscribed, or with no connection to wait for (gsalt-proxy devices
// share one), does not wait.
func (m *Master) awaitSubscription(ctx context.Context, id string) {
	w, ok := m.pub.(SubscriptionWaiter)
	if !ok {
		return
	}
	var topics [][]byte
	if m.cfg.ZMQFiltering {
		topics = [][]byte{[]byte("broadcast"), idTopic(id)}
	}
	ctx, cancel := context.WithTimeout(ctx, startSubscribeWait)
	defer cancel()
	if !w.WaitSubscribed(ctx, id, topics...) && ctx.Err() != nil {
		m.log.Info("a minion's publish subscription did not arrive in time; firing its start event anyway",
			"id", id, "waited", startSubscribeWait)
	}
}
