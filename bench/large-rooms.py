#!/usr/bin/env python3
"""Large rooms: a mass disconnect, and JOIN/LEAVE churn, against the real binary.

    python3 bench/large-rooms.py BINDIR [disconnect N...] [churn MEMBERS SECONDS]
    (default: disconnect 1000 2500 5000, then churn 2000 5)

Starts BINDIR/arbiter on a free loopback port with its default panel (presence counted
above 100 members) and measures, one fresh server per case:

- disconnect N: N line clients JOIN `demo` and keep reading; a non-member sends `PING`
  every 10 ms throughout. All N close at once (a venue's Wi-Fi dropping). Prints the worst
  PING round trip in the 3 s after the close, the server's RSS before the joins, with the
  members, and 3 s after the close, and how many presence lines each member read.
- churn MEMBERS SECONDS: MEMBERS clients JOIN and keep reading; one more session loops
  `JOIN demo` / `LEAVE demo` as fast as the default rate limit lets it for SECONDS.
  Prints the presence lines (JOINED, LEFT, PRESENCE) per member per second, worst member
  and worst one-second window.

Loopback only; every wait is bounded. Raises its own open-file limit.
"""
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start(bindir, work):
    (port,) = cl.free_ports(1)
    proc = cl.spawn([str(bindir / "arbiter"), "--port", str(port), "--host", "127.0.0.1", "--log-level", "warn"],
                    work / f"arbiter-{port}.log")
    cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=2)[0] == 200, 30, "arbiter to answer /healthz")
    return proc, port


class Members:
    """N joined line clients on one selector, read by a thread that counts presence lines."""

    def __init__(self, port, n, deadline_s=120):
        self.sel = selectors.DefaultSelector()
        self.socks = []
        self.buffers = {}
        self.presence = {}          # fd -> [timestamps of presence lines]
        self.joined = set()
        self.lock = threading.Lock()
        self.stop = False
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.setblocking(False)
            s.sendall(f"HELLO k{i}\nJOIN demo\n".encode())
            self.socks.append(s)
            self.buffers[s.fileno()] = b""
            self.presence[s.fileno()] = []
            self.sel.register(s, selectors.EVENT_READ)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            with self.lock:
                if len(self.joined) == n:
                    return
            time.sleep(0.05)
        raise cl.Failure(f"only {len(self.joined)} of {n} members had their snapshot in {deadline_s} s")

    def run(self):
        while not self.stop:
            for key, _ in self.sel.select(timeout=0.05):
                s = key.fileobj
                try:
                    data = s.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(s)
                    continue
                fd = s.fileno()
                buf = self.buffers[fd] + data
                *lines, self.buffers[fd] = buf.split(b"\n")
                now = time.monotonic()
                for line in lines:
                    if line.startswith(b"OK JOIN "):
                        with self.lock:
                            self.joined.add(fd)
                    elif line.startswith((b"PRESENCE ", b"JOINED ", b"LEFT ")):
                        self.presence[fd].append(now)

    def close_all(self):
        self.stop = True
        self.thread.join(timeout=5)
        for s in self.socks:
            try:
                self.sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()


def pinger(port, stop, samples):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    f = s.makefile("rb")
    s.sendall(b"PING hello\n")
    for _ in range(10):
        if f.readline().startswith(b"PONG"):
            break
    while not stop.is_set():
        sent = time.monotonic()
        s.sendall(b"PING t\n")
        line = f.readline()
        if not line.startswith(b"PONG"):
            raise cl.Failure(f"the non-member's PING got {line!r}")
        samples.append((sent, time.monotonic() - sent))
        time.sleep(0.01)
    s.close()


def disconnect(bindir, work, n):
    proc, port = start(bindir, work)
    try:
        before = rss_kib(proc.pid)
        members = Members(port, n)
        time.sleep(0.5)
        with_members = rss_kib(proc.pid)
        stop, samples = threading.Event(), []
        t = threading.Thread(target=pinger, args=(port, stop, samples), daemon=True)
        t.start()
        time.sleep(0.5)
        lines_before = sum(len(v) for v in members.presence.values())
        closed_at = time.monotonic()
        members.close_all()
        time.sleep(3)
        stop.set()
        t.join(timeout=15)
        after = rss_kib(proc.pid)
        worst = max((rtt for sent, rtt in samples if sent >= closed_at - 0.05), default=float("nan"))
        print(f"disconnect {n}: worst PING {worst * 1000:.1f} ms over {len(samples)} pings; "
              f"RSS {before // 1024} MiB before the joins, {with_members // 1024} MiB with the members, "
              f"{after // 1024} MiB 3 s after the close; {lines_before / n:.1f} presence lines per member while joining",
              flush=True)
    finally:
        cl.kill_group(proc)


def churn(bindir, work, n, seconds):
    proc, port = start(bindir, work)
    try:
        members = Members(port, n)
        time.sleep(0.5)
        for v in members.presence.values():
            v.clear()
        spammer = socket.create_connection(("127.0.0.1", port))
        spammer.settimeout(5)
        spammer.sendall(b"HELLO spammer\n")
        start_t = time.monotonic()
        end = start_t + seconds
        sent = 0
        drained = threading.Thread(target=lambda: drain(spammer, end + 1), daemon=True)
        drained.start()
        # The default rate limit: 1000 commands/s with a burst of 2000. Paced at 1000/s.
        while time.monotonic() < end:
            spammer.sendall(b"JOIN demo\nLEAVE demo\n" * 5)
            sent += 10
            time.sleep(max(0.0, start_t + sent / 1000 - time.monotonic()))
        time.sleep(0.5)
        members.close_all()
        spammer.close()
        per_member = [sorted(t for t in v if start_t <= t <= end + 0.2) for v in members.presence.values()]
        worst_total = max(len(v) for v in per_member)
        worst_window = 0
        for v in per_member:
            j = 0
            for i in range(len(v)):
                while v[i] - v[j] > 1.0:
                    j += 1
                worst_window = max(worst_window, i - j + 1)
        print(f"churn on {n} members, {sent} JOIN/LEAVE commands in {seconds} s: worst member read {worst_total} presence "
              f"lines ({worst_total / seconds:.1f}/s); worst one-second window {worst_window}", flush=True)
    finally:
        cl.kill_group(proc)


def drain(s, until):
    while time.monotonic() < until:
        try:
            if not s.recv(1 << 16):
                return
        except (socket.timeout, OSError):
            return


def main():
    bindir = Path(sys.argv[1]).resolve()
    args = sys.argv[2:] or ["disconnect", "1000", "2500", "5000", "churn", "2000", "5"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    cl.install_cleanup()
    work = cl.temp_dir("large-rooms.")
    i = 0
    while i < len(args):
        if args[i] == "disconnect":
            i += 1
            while i < len(args) and args[i].isdigit():
                disconnect(bindir, work, int(args[i]))
                i += 1
        elif args[i] == "churn":
            churn(bindir, work, int(args[i + 1]), float(args[i + 2]))
            i += 3
        else:
            sys.exit(__doc__)


if __name__ == "__main__":
    main()
