#!/usr/bin/env python3
"""A reconnect storm: N line clients connect at once and each waits for its JOIN snapshot.

Usage: bench/reconnect-storm.py PORT [CLIENTS] [TIMEOUT_S] [join|ping]
       (default 10000 clients, 60 s, join)

Against a running arbiter on 127.0.0.1:PORT (loopback only). Every client opens a
non-blocking connection in one burst, as kiosks do when the server comes back, sends
`JOIN demo` and reads until `OK JOIN` (its snapshot), then keeps reading (and dropping)
the JOINED events of the others, as a kiosk does. `ping` sends `PING` and waits for
`PONG` instead: the connection path alone, without the panel's O(n^2) presence events. Prints the time until every client had its
snapshot, percentiles of the per-client time, and how many took a second or more (a
sign of a SYN dropped for a full accept queue and retried by the kernel after 1 s, 3 s,
7 s). Raise `ulimit -n` above CLIENTS first. Bounded by TIMEOUT_S.
"""
import errno
import resource
import selectors
import socket
import sys
import time


def main():
    port = int(sys.argv[1])
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    mode = sys.argv[4] if len(sys.argv) > 4 else "join"
    request, reply = (b"JOIN demo\n", b"OK JOIN ") if mode == "join" else (b"PING storm\n", b"PONG storm")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < clients + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, clients + 256), hard))
    selector = selectors.DefaultSelector()
    started = time.monotonic()
    state = {}
    for i in range(clients):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex(("127.0.0.1", port))
        if err not in (0, errno.EINPROGRESS):
            raise SystemExit(f"connect {i}: errno {err}")
        state[s] = {"sent": False, "buf": b"", "done": None}
        selector.register(s, selectors.EVENT_WRITE)
    burst = time.monotonic() - started
    pending = clients
    deadline = started + timeout
    while pending and time.monotonic() < deadline:
        for key, events in selector.select(timeout=0.5):
            s = key.fileobj
            st = state[s]
            if events & selectors.EVENT_WRITE and not st["sent"]:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    raise SystemExit("a connection failed")
                s.send(request)
                st["sent"] = True
                selector.modify(s, selectors.EVENT_READ)
                continue
            if events & selectors.EVENT_READ:
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                if not data:
                    raise SystemExit(f"closed before its snapshot: {st['buf'][-200:]!r}")
                if st["done"] is not None:
                    continue  # a kiosk keeps reading the others' events
                st["buf"] += data
                if b"\n" + reply in st["buf"] or st["buf"].startswith(reply):
                    st["done"] = time.monotonic() - started
                    st["buf"] = b""
                    pending -= 1
    times = sorted(st["done"] for st in state.values() if st["done"] is not None)
    for s in state:
        s.close()
    if not times:
        raise SystemExit("no client got its snapshot")

    def pct(p):
        return times[min(len(times) - 1, int(p / 100 * len(times)))]

    slow = sum(1 for t in times if t >= 1.0)
    print(f"clients {clients}  snapshots {len(times)}  connect burst {burst:.3f}s")
    print(f"all snapshots after {times[-1]:.3f}s  p50 {pct(50):.3f}s  p90 {pct(90):.3f}s  p99 {pct(99):.3f}s")
    print(f"clients that took >= 1 s: {slow}")
    return 0 if len(times) == clients else 1


if __name__ == "__main__":
    sys.exit(main())
