// Package nats bridges gsalt-master's event bus and NATS
// (github.com/nats-io/nats.go). It has no Salt counterpart: Salt's
// closest pieces are event returners and the reactor's input, and the
// bridge keeps both unchanged: a reactor file written for events fired by
// event.send works with events arriving from NATS.
//
// Both directions:
//
//   - Mirror (publish: True): every bus event whose tag passes
//     include/exclude is published on <subject_prefix>.<tag with / as .>,
//     e.g. salt/job/<jid>/ret/<id> on salt.salt.job.<jid>.ret.<id>. The
//     body is the event data as JSON (encoding: json, the default; bytes
//     become strings) or msgpack (encoding: msgpack, Salt's own packing
//     with bin types); headers Gsalt-Tag (the tag verbatim) and
//     Gsalt-Origin (the bridge's id) ride along.
//   - Fire (fire: True): a message on <subject_prefix>.fire.<tail> is
//     fired on the bus with the tag <tail with . as />, or with the tag in
//     its Gsalt-Tag header when it has one. A message on a subject of a
//     subscribe mapping is fired with the mapping's tag template filled in.
//
// # Subjects and tags
//
// A tag becomes a subject by replacing "/" with "."; a "." inside a tag
// segment stays, so a minion id like web1.example.com spans three tokens
// (subscribe with ">" to catch them). Characters a subject cannot hold
// are escaped (tag_escape: True, the default): ASCII control characters,
// space, DEL, "*", ">" and "%" itself become %XX (upper-case hex) and an
// empty segment ("//", a leading or trailing "/") becomes a lone "%"; so
// salt/beacon/m1/inotify//srv/x is salt.salt.beacon.m1.inotify.%.srv.x.
// With tag_escape: False such events are not mirrored (counted in
// Stats.Skipped). Subjects over MaxSubjectLen bytes are skipped too.
// Fire subjects are unescaped the same way, so a tag mirrored without dots
// of its own can be fired back by publishing on <prefix>.fire.<its
// mirror's tail>. Events whose mirror would fall in <prefix>.fire are not
// mirrored (they would be fired again), and a bridge ignores inbound
// messages with its own Gsalt-Origin, so a mapping that overlaps the
// mirrored subjects does not loop.
//
// Mappings (subscribe) turn foreign subjects into tags. The subject is a
// NATS pattern ("*" one token, ">" the rest); the tag template refers to
// the wildcards by position: {1} the first wildcard's token, {2} the
// second, ... (a ">" capture is the rest of the subject with "." as "/"),
// {0} or {subject} the whole subject with "." as "/", {{ and }} literal
// braces. Captures are inserted as they are (not unescaped). Example:
// subject dc1.*.configure with tag nats/configure/{1} fires
// nats/configure/sw1 for a message on dc1.sw1.configure. A message that
// matches several mappings (or a mapping and the fire subject) is fired
// once per match.
//
// Event data of inbound messages: a body that is a JSON object is the data
// (key order kept); with encoding msgpack a msgpack map is too; any other
// body (a configuration text, say) is data["payload"] (a string when
// UTF-8, else bytes; absent when the body is empty). data["nats_subject"]
// holds the subject unless the body already has that key.
//
// # Delivery
//
// Core NATS (no jetstream): at most once. Inbound subscriptions queue at
// most queue_size messages (and 64 MiB); the NATS client drops beyond that
// and the bridge logs it. queue_group makes masters sharing it split the
// inbound messages instead of each firing every one.
//
// JetStream (jetstream: set): inbound subjects are read from a stream
// through a durable pull consumer, so messages published while the master
// is down are fired when it starts; each message is acknowledged after it
// was fired on the bus (a message that cannot be fired is terminated; one
// fired while the bus is closing is redelivered), so delivery is at least
// once. The stream is created when missing (create: True) with the
// inbound subjects (or jetstream.subjects), file storage, max_age and
// max_msgs limits; an inbound subject an existing stream does not cover
// (a mapping added later) is added to it (with create: False a warning
// is logged instead). start_delay
// postpones consuming so that minions and proxies reconnect to a restarted
// master before reactions to stored events publish to them. Masters that
// share a durable name share the work; distinct names each get every
// message. The mirror is always core NATS publishing (a stream an admin
// defines over the mirrored subjects stores them as well).
//
// A NATS outage never blocks the bus: the mirror reads from its own bus
// subscription of queue_size events (overflow is dropped and counted by
// the bus), publishes into the client's outage buffer of reconnect_buffer
// bytes (overflow dropped, counted in Stats.PublishDropped, logged on the
// first and every 1000th), and the connection is retried forever with an
// exponential backoff from reconnect_wait to reconnect_wait_max seconds
// (with jitter). An unreachable server at start is retried the same way;
// only configuration errors (matching ErrConfig) stop the master.
//
// # Options (the master's nats mapping)
//
//	url                  server URL or list (nats://h:4222, tls://h:4222); servers: more
//	name                 connection name (default "gsalt-master <id>")
//	subject_prefix       default "salt"
//	publish              mirror the bus (default True)
//	include, exclude     tag globs (fnmatch) to mirror (default ['*'], [])
//	encoding             json (default) or msgpack
//	tag_escape           escape tags a subject cannot hold (default True) or skip them
//	fire                 fire <prefix>.fire.> into the bus (default True)
//	fire_include         tag globs allowed to be fired from NATS (default ['*'])
//	fire_exclude         tag globs never fired from NATS
//	subscribe            list of {subject, tag, queue_group} mappings
//	queue_group          queue group of the inbound subscriptions
//	jetstream            True or {stream: GSALT, durable: gsalt-<id>, create: True,
//	                     subjects: [...], max_age: 604800, max_msgs: 100000,
//	                     ack_wait: 30, max_deliver: 10, start_delay: 0}
//	tls                  {cert, key, ca, server_name, insecure_skip_verify}
//	user, password       user credentials
//	token                token
//	creds                credentials file (JWT + seed)
//	nkey                 nkey seed file
//	queue_size           bounded queues (default 10000)
//	reconnect_wait       first reconnect delay, seconds (default 0.5)
//	reconnect_wait_max   reconnect delay cap, seconds (default 30)
//	reconnect_buffer     bytes buffered while disconnected (default 8 MiB)
//	connect_timeout      seconds (default 5)
//
// Unknown keys and wrong types are errors (ErrConfig), so a typo does not
// silently disable a part of the bridge.
package nats
