#!/usr/bin/python3
"""bench-events.py SOCK_DIR EVENTS IDS WINDOW PIDS...: the reactor bench's
driver, used the same way against gsalt-master and a real salt-master.

Fires EVENTS events tagged bench/<i> with data {"id": <one of IDS>, "n": i}
on the master's event pull socket (Salt's IPC frame: a msgpack map
{"head": {}, "body": tag + "\\n\\n" + msgpack(data)}), keeping at most
WINDOW events ahead of the job returns and at most WINDOW/len(IDS) ahead of
each identity's returns (the next event goes to the next identity in turn
with room: one identity falling behind on a loaded machine is not sent more
jobs than its receive queue holds, 128 publishes for a swarm identity,
while the others' returns keep the total window open), and counts the salt/job/<jid>/new
and salt/job/<jid>/ret/<id> events on the pub socket. Prints one line of
key=value results: jobs returned, seconds from the first event to the last
return, jobs/s, the CPU seconds the PIDS (the master's processes) used
meanwhile and the driver's own CPU seconds. Each distinct tag keeps gsalt's per-(tag, reactor file, minion)
loop limiter out of the measurement. Only the standard library and msgpack.
"""
import os
import select
import socket
import sys
import time

import msgpack

sock_dir, total, ids, window = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4])
pids = [int(p) for p in sys.argv[5:]]
hz = os.sysconf("SC_CLK_TCK")


def cpu():
    t = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return t / hz


def connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.path.join(sock_dir, name))
    return s


sub = connect("master_event_pub.ipc")
push = connect("master_event_pull.ipc")
time.sleep(0.5)  # let the publisher register the subscriber
unpacker = msgpack.Unpacker(raw=True)
new = ret = 0
seen = set()
per_id = max(1, window // len(ids))
ahead = {i.encode(): 0 for i in ids}  # jobs fired to each identity, not yet returned
turn = 0


def drain(timeout):
    global new, ret
    r, _, _ = select.select([sub], [], [], timeout)
    if not r:
        return False
    chunk = sub.recv(1 << 20)
    if not chunk:
        raise SystemExit("bench-events: master closed the pub socket")
    unpacker.feed(chunk)
    for frame in unpacker:
        body = frame.get(b"body", b"")
        tag = body.split(b"\n\n", 1)[0]
        if not tag.startswith(b"salt/job/"):
            continue
        parts = tag.split(b"/")
        if len(parts) == 4 and parts[3] == b"new":
            new += 1
        elif len(parts) >= 5 and parts[3] == b"ret" and parts[2] not in seen:
            seen.add(parts[2])
            ret += 1
            who = b"/".join(parts[4:])
            if who in ahead:
                ahead[who] -= 1
    return True


packer = msgpack.Packer(use_bin_type=True)
c0 = cpu()
d0 = sum(os.times()[:2])
t0 = time.monotonic()
fired = 0
last = t0


def pick():
    """The next identity in turn with room in its window, or None."""
    global turn
    for _ in range(len(ids)):
        i = ids[turn]
        turn = (turn + 1) % len(ids)
        if ahead[i.encode()] < per_id:
            return i
    return None


while ret < total:
    if fired < total and fired - ret < window:
        batch = []
        for _ in range(min(200, total - fired, window - (fired - ret))):
            who = pick()
            if who is None:
                break
            ahead[who.encode()] += 1
            data = packer.pack({"id": who, "n": fired, "_stamp": "2026-01-01T00:00:00.000000"})
            body = b"bench/%d\n\n" % fired + data
            batch.append(packer.pack({"head": {}, "body": body}))
            fired += 1
        if batch:
            push.sendall(b"".join(batch))
            drain(0)
            continue
    if drain(5.0):
        last = time.monotonic()
    elif time.monotonic() - last > 20:
        break
t1 = time.monotonic()
c1 = cpu()
d1 = sum(os.times()[:2])
el = max(last, t0) - t0 if ret < total else t1 - t0
print(f"events={fired} published={new} returned={ret} seconds={el:.2f} jobs_per_s={ret / el if el else 0:.0f} master_cpu={c1 - c0:.2f} driver_cpu={d1 - d0:.2f}")
