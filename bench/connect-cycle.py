#!/usr/bin/env python3
"""Connection setup and teardown latency of a running arbiter, one phase at a time.

Usage: bench/connect-cycle.py PORT [CYCLES] [THREADS]     (server: arbiter --ws-echo)

Each cycle opens a connection to 127.0.0.1:PORT, upgrades it on /ws?echo=1, sends one
text message, sends a close frame and waits for the server's FIN, and times each phase:
  handshake  connect + upgrade request -> 101 response
  echo       text frame -> its echo
  close      close frame -> the server's close frame
  eof        server's close frame -> end of stream (the server closed the socket)
Prints p50/p99/max per phase. With THREADS > 1 the figures include the client's own
GIL contention; THREADS=1 measures the server's turnaround alone.
"""
import base64
import os
import socket
import sys
import threading
import time

MASK = b"\x01\x02\x03\x04"


def frame(opcode, payload):
    masked = bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + MASK + masked


def read_until(sock, buf, done):
    while not done(buf):
        data = sock.recv(4096)
        if not data:
            raise EOFError("connection closed early")
        buf += data
    return buf


def cycle(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    t0 = time.monotonic()
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /ws?echo=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % (port, key)).encode())
    buf = read_until(s, b"", lambda b: b"\r\n\r\n" in b).split(b"\r\n\r\n", 1)[1]
    t1 = time.monotonic()
    s.sendall(frame(0x1, b"ping"))
    buf = read_until(s, buf, lambda b: len(b) >= 6)[6:]
    t2 = time.monotonic()
    s.sendall(frame(0x8, b"\x03\xe8"))
    read_until(s, buf, lambda b: len(b) >= 4)
    t3 = time.monotonic()
    while s.recv(4096):
        pass
    t4 = time.monotonic()
    s.close()
    return (t1 - t0, t2 - t1, t3 - t2, t4 - t3)


def main():
    port = int(sys.argv[1])
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    samples, errors, lock = [], [], threading.Lock()

    def worker():
        for _ in range(cycles):
            try:
                r = cycle(port)
                with lock:
                    samples.append(r)
            except (OSError, EOFError) as e:
                with lock:
                    errors.append(repr(e))

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if not samples:
        sys.exit("no cycle completed: %s" % errors[:3])
    for k, name in enumerate(["handshake", "echo", "close", "eof"]):
        v = sorted(x[k] for x in samples)
        print("%-9s n=%d  p50 %.2f ms  p99 %.2f ms  max %.1f ms" % (
            name, len(v), v[len(v) // 2] * 1e3, v[int(len(v) * 0.99)] * 1e3, v[-1] * 1e3))
    print("errors %d %s" % (len(errors), errors[:3]))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
