#!/usr/bin/env python3
"""Webhook figures (docs/BENCHMARKS.md, "Webhooks"), against a release build:

1. fire -> receiver latency: a tap button's FIRED with a hook on it, one press at a time,
   from the DOWN leaving the client to the POST reaching a local receiver;
2. lock cycles on 100 tap buttons (arbiter-load contend) while a hook watches `fired` of a
   hold button pressed 5 times a second: no hook, a receiver answering at once, one never
   answering; alternated, median of ROUNDS;
3. a hook on every `pressed` with a receiver answering at once: deliveries per second,
   lock cycles, the backlog at the end (/api/hooks; max_pending at its ceiling, so none is
   dropped) and how long it then takes to drain.

Usage: python3 bench/hooks.py [bindir]   (default .build/release; ROUNDS=3, PRESSES=500, DRAIN_S=120)
"""
import asyncio, json, os, queue, socket, statistics, subprocess, sys, tempfile, threading, time

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
ROUNDS = int(os.environ.get("ROUNDS", "3"))
PRESSES = int(os.environ.get("PRESSES", "500"))
DRAIN_S = int(os.environ.get("DRAIN_S", "120"))
arrivals = queue.Queue()
mode = {"answer": True}
counts = {"received": 0}


class Receiver(asyncio.Protocol):
    """A receiver as fast as one Python thread allows: keeps connections open, answers 204
    at once (or never), records each arrival's time."""

    def connection_made(self, transport):
        self.transport = transport
        self.buffer = b""

    def data_received(self, data):
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15:].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length:]
            arrivals.put(time.perf_counter_ns())
            counts["received"] += 1
            if mode["answer"]:
                self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")


def receiver():
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(Receiver, "127.0.0.1", 0))
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return server.sockets[0].getsockname()[1]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(config, directory):
    path = os.path.join(directory, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    port = free_port()
    p = subprocess.Popen([f"{BIN}/arbiter", "--config", path, "--port", str(port), "--rate", "0", "--log-level", "warn"])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return p, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not start")


def lines(sock):
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        yield line.decode()


def expect(reader, prefix):
    for line in reader:
        if line.startswith(prefix):
            return line
    raise SystemExit(f"no {prefix}")


def latency(port, directory):
    config = {"panels": [{"id": "lat", "buttons": [{"id": "b1"}],
                          "hooks": [{"url": f"http://127.0.0.1:{port}/", "events": ["fired"]}]}]}
    p, server = start(config, directory)
    s = socket.create_connection(("127.0.0.1", server))
    reader = lines(s)
    s.sendall(b"HELLO bench\n")
    expect(reader, "OK HELLO")
    samples = []
    for i in range(PRESSES + 50):
        t0 = time.perf_counter_ns()
        s.sendall(b"DOWN lat b1\n")
        arrived = arrivals.get(timeout=10)
        expect(reader, "GRANTED")
        s.sendall(b"UP lat b1\n")
        expect(reader, "OK UP")
        if i >= 50:
            samples.append((arrived - t0) / 1000)
    p.terminate()
    p.wait()
    samples.sort()
    return samples[len(samples) // 2], samples[int(len(samples) * 0.99)]


def contend(server_port, pid):
    out = subprocess.run([f"{BIN}/arbiter-load", "contend", "--connections", "100", "--observers", "0", "--duration", "5",
                          "--warmup", "1", "--json", "--server-pid", str(pid), "--port", str(server_port)],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)["cycles_per_s"])


def presser(server_port, stop):
    s = socket.create_connection(("127.0.0.1", server_port))
    reader = lines(s)
    s.sendall(b"HELLO sos\n")
    expect(reader, "OK HELLO")
    while not stop.is_set():
        s.sendall(b"DOWN load sos\n")
        expect(reader, "FIRED load sos")
        s.sendall(b"UP load sos\n")
        expect(reader, "OK UP")
        time.sleep(0.2)


def api_hooks(server_port):
    s = socket.create_connection(("127.0.0.1", server_port))
    s.sendall(b"GET /api/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])["hooks"][0]


def main():
    port = receiver()
    with tempfile.TemporaryDirectory() as directory:
        p50, p99 = latency(port, directory)
        print(f"fire -> receiver: p50 {p50:.0f} us, p99 {p99:.0f} us ({PRESSES} presses, one at a time)")
        load = json.loads(subprocess.run([f"{BIN}/arbiter-load", "config", "--buttons", "100"], capture_output=True, text=True,
                                         check=True).stdout)
        panel = load["panels"][0]
        panel["id"] = "load"
        panel["buttons"].append({"id": "sos", "kind": "hold", "hold_ms": 50, "group": "emergency"})
        hook = {"url": f"http://127.0.0.1:{port}/", "events": ["fired"], "buttons": ["sos"], "timeout_ms": 5000}
        variants = {"no hook": None, "hook, receiver answers": True, "hook, receiver never answers": False}
        results = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name, answer in variants.items():
                panel.pop("hooks", None)
                if answer is not None:
                    panel["hooks"] = [hook]
                    mode["answer"] = answer
                p, server = start(load, directory)
                stop = threading.Event()
                t = threading.Thread(target=presser, args=(server, stop), daemon=True)
                t.start()
                results[name].append(contend(server, p.pid))
                stop.set()
                t.join(timeout=5)
                p.terminate()
                p.wait()
        base = statistics.median(results["no hook"])
        for name, runs in results.items():
            m = statistics.median(runs)
            print(f"lock cycles/s, 100 connections, {name}: {m:,.0f} (min {min(runs):,.0f}, max {max(runs):,.0f}), {m / base:.3f}x")
        mode["answer"] = True
        # max_pending at its ceiling: the backlog is what the run left, not what fit.
        panel["hooks"] = [{"url": f"http://127.0.0.1:{port}/", "events": ["pressed"], "max_pending": 1000000}]
        p, server = start(load, directory)
        before = counts["received"]
        cycles = contend(server, p.pid)
        status = api_hooks(server)
        drained_at, t0 = None, time.monotonic()
        while time.monotonic() - t0 < DRAIN_S:
            if api_hooks(server)["pending"] == 0:
                drained_at = time.monotonic() - t0
                break
            time.sleep(0.1)
        received = counts["received"] - before
        p.terminate()
        p.wait()
        drain = f"drained in {drained_at:.1f} s" if drained_at is not None else f"not drained after {DRAIN_S} s"
        print(f"hook on every pressed: {cycles:,.0f} lock cycles/s; {status['delivered'] / 6:,.0f} deliveries/s over the 6 s run; "
              f"backlog at the end {status['pending']:,}, dropped {status['dropped']}; {drain}; {received:,} received in all")


if __name__ == "__main__":
    main()
