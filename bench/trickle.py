#!/usr/bin/env python3
"""CPU under a trickle: one client sends a PING every 100-150 us, each after the last answer.

    python3 bench/trickle.py BINDIR [SECONDS] [CLIENTS]   (default 10 s, 1 client)

Past arbiter's default rate limit (1000 commands/s) most PINGs are answered `ERROR
rate-limited`: one line each all the same, as the trickle the figure was first taken with.
Measures, one after the other on loopback, the CPU time the server process used per
second of wall time (100 % = one core) while CLIENTS clients each trickle `PING` (arbiter)
or `PING` (redis-server, RESP inline) with a 100-150 us pause after each answer:

- arbiter with its default flags (`--idle-spin 0`),
- arbiter with `--idle-spin 200` (spinning opted in),
- redis-server (apt-get install redis-server), `--save "" --appendonly no`.

The pause is a busy wait in the client (a sleep that short overshoots), so the client's
own CPU is not measured. Loopback only; every wait is bounded.
"""
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def trickle(port, request, reply, stop, counts, i):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(5)
    buf = b""
    n = 0
    rng = random.Random(i)
    s.sendall(request)
    while reply not in buf:  # arbiter's WELCOME comes first
        data = s.recv(4096)
        if not data:
            raise cl.Failure("the server closed the trickle's connection")
        buf += data
    buf = buf.split(reply, 1)[1]
    while not stop.is_set():
        s.sendall(request)
        # One line answers each request: the reply, or past the rate limit (arbiter's
        # default 1000/s) `ERROR rate-limited`, which is work for the server all the same.
        while b"\n" not in buf:
            data = s.recv(4096)
            if not data:
                raise cl.Failure("the server closed the trickle's connection")
            buf += data
        buf = buf.split(b"\n", 1)[1]
        n += 1
        until = time.perf_counter() + rng.uniform(100e-6, 150e-6)
        while time.perf_counter() < until:
            pass
    counts[i] = n
    s.close()


def measure(name, proc, port, request, reply, seconds, clients):
    stop = threading.Event()
    counts = [0] * clients
    threads = [threading.Thread(target=trickle, args=(port, request, reply, stop, counts, i), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1)  # warm up
    c0, w0 = cpu_seconds(proc.pid), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu_seconds(proc.pid), time.monotonic()
    stop.set()
    for t in threads:
        t.join(timeout=10)
    rate = sum(counts) / (seconds + 1)
    print(f"{name}: {100 * (c1 - c0) / (w1 - w0):.1f} % of a core, about {rate:,.0f} requests/s", flush=True)


def main():
    bindir = Path(sys.argv[1]).resolve()
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    cl.install_cleanup()
    work = cl.temp_dir("trickle.")
    for name, extra in (("arbiter (default)", []), ("arbiter --idle-spin 200", ["--idle-spin", "200"])):
        (port,) = cl.free_ports(1)
        proc = cl.spawn([str(bindir / "arbiter"), "--port", str(port), "--host", "127.0.0.1", "--log-level", "warn"] + extra,
                        work / f"arbiter-{port}.log")
        cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=2)[0] == 200, 30, "arbiter to answer /healthz")
        try:
            measure(name, proc, port, b"PING t\n", b"PONG t\n", seconds, clients)
        finally:
            cl.kill_group(proc)
    redis = shutil.which("redis-server")
    if not redis:
        return print("redis-server: not installed (apt-get install redis-server)")
    (port,) = cl.free_ports(1)
    proc = cl.spawn([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], work / "redis.log")
    cl.wait_until(lambda: probe_redis(port), 30, "redis-server to answer")
    try:
        measure("redis-server", proc, port, b"PING\r\n", b"+PONG\r\n", seconds, clients)
    finally:
        cl.kill_group(proc)


def probe_redis(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


if __name__ == "__main__":
    main()
