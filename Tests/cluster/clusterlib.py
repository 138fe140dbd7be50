"""A 3-member etcd and arbiter nodes on loopback, for the cluster end-to-end tests,
bench/cluster.sh and the kiosk failover browser test (Python 3.11, standard library only).

etcd is started the way Tests/cluster/etcd3.sh starts it: free ports asked of the
kernel, a temporary data dir, each member in its own session (setsid) so that a kill -9
of its group kills that member only, raft timing --heartbeat-interval 50
--election-timeout 500 (docs/CLUSTER.md says why), and its history compacted every 5 s. Every process started here is
registered in PROCESSES and killed by cleanup(), which install_cleanup() runs on every
exit path: normal end, an exception, SIGINT (Ctrl-C), SIGTERM, SIGHUP.

Nodes are started with the cluster flags of docs/GUIDE.md:
    arbiter --cluster URLS --node n1 --advertise 127.0.0.1:P --port P --host 127.0.0.1
            --cluster-key FILE --cluster-ttl 3 --config panels.json
and are ready when GET /healthz answers 200.

Every wait here is bounded by a deadline; nothing loops forever.
"""

import atexit
import collections
import base64
import json
import os
import re
import shutil
import signal
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

PROCESSES = []          # every subprocess.Popen started here, killed by cleanup()
TEMP_DIRS = []          # removed by cleanup()
_cleaned = False


class Failure(Exception):
    """A guarantee was broken or the harness could not do its work: the message says what."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ------------------------------------------------------------------ cleanup on every path

def cleanup():
    global _cleaned
    if _cleaned:
        return
    _cleaned = True
    for proc in PROCESSES:
        kill_group(proc)
    for path in TEMP_DIRS:
        if os.environ.get("CLUSTER_KEEP_DIRS"):
            print(f"kept {path}", file=sys.stderr)
        else:
            shutil.rmtree(path, ignore_errors=True)


def kill_group(proc):
    """SIGCONT then SIGKILL the process's own group (it was started in a new session)."""
    if proc.poll() is not None:
        return
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def install_cleanup():
    atexit.register(cleanup)

    def on_signal(signum, _frame):
        cleanup()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)


# Nodes' log lines get the monotonic time they were read at, to set beside the
# observers' lines (bench/nemesis.py): the server's own lines carry no time.
STAMP_NODE_LOGS = False


def spawn(argv, log_path, env=None, stamped=False):
    """Starts argv in its own session, output to log_path (appended), registered for cleanup.
    With `stamped`, each line is prefixed with time.monotonic() as it is read."""
    if not stamped:
        with open(log_path, "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                    start_new_session=True, env=env)
        PROCESSES.append(proc)
        return proc
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, env=env)

    def copy():
        with open(log_path, "ab") as out:
            for line in proc.stdout:
                out.write(f"{time.monotonic():.6f} ".encode() + line)
                out.flush()

    threading.Thread(target=copy, daemon=True).start()
    PROCESSES.append(proc)
    return proc


def temp_dir(prefix):
    path = tempfile.mkdtemp(prefix=prefix)
    TEMP_DIRS.append(path)
    return Path(path)


def _ephemeral_range():
    try:
        low, high = (int(x) for x in open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(n):
    """n distinct free loopback ports, bound and released just before use.

    Taken below the kernel's ephemeral range when there is room: a port from that range
    can be handed to some client's outgoing connection while its node is down, and the
    node, restarted after a kill, then finds its own port taken (nemesis run 98).
    """
    low, _ = _ephemeral_range()
    picked = []
    if low > 12000:
        rng = random.Random()
        for _ in range(200 * n):
            if len(picked) == n:
                break
            port = rng.randrange(10000, low)
            if port in picked:
                continue
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
                picked.append(port)
            except OSError:
                pass
            finally:
                s.close()
        if len(picked) == n:
            return picked
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_until(predicate, timeout, what, interval=0.05):
    """Polls predicate() until it returns something truthy; Failure after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# ------------------------------------------------------------------ etcd

class Etcd3:
    """Three etcd members on loopback; members are numbered 1-3 as in etcd3.sh."""

    def __init__(self, heartbeat_ms=50, election_ms=500, compaction="5s"):
        if not shutil.which("etcd") or not shutil.which("etcdctl"):
            raise Failure("etcd not found (apt-get install etcd-server etcd-client)")
        self.dir = temp_dir("etcd3.")
        ports = free_ports(6)
        self.client_ports = [ports[0], ports[2], ports[4]]
        self.peer_ports = [ports[1], ports[3], ports[5]]
        self.urls = [f"http://127.0.0.1:{p}" for p in self.client_ports]
        initial = ",".join(f"m{n}=http://127.0.0.1:{self.peer_ports[n - 1]}" for n in (1, 2, 3))
        token = f"arbiter-e2e-{os.getpid()}"
        self.argv = {}
        for n in (1, 2, 3):
            client, peer = self.client_ports[n - 1], self.peer_ports[n - 1]
            self.argv[n] = [
                "etcd", "--name", f"m{n}", "--data-dir", str(self.dir / f"m{n}.data"),
                "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", initial, "--initial-cluster-state", "new", "--initial-cluster-token", token,
                "--heartbeat-interval", str(heartbeat_ms), "--election-timeout", str(election_ms),
                # History compacted every few seconds, far more often than a site would
                # (README: an hour), so every run shows the nodes never need an old revision.
                "--auto-compaction-mode", "periodic", "--auto-compaction-retention", compaction,
            ]
        self.procs = {}

    @property
    def endpoints(self):
        return ",".join(self.urls)

    def start(self):
        for n in (1, 2, 3):
            self.start_member(n)
        wait_until(self.healthy, 20, "etcd to become healthy", interval=0.2)
        log(f"etcd: 3 members at {self.endpoints}")
        return self

    def start_member(self, n):
        self.procs[n] = spawn(self.argv[n], self.dir / f"m{n}.log")

    def kill_member(self, n):
        """kill -9, as a crash would."""
        proc = self.procs.pop(n, None)
        if proc:
            kill_group(proc)

    def pause_member(self, n):
        """SIGSTOP, as a frozen VM or a long stall would: its sockets stay open and silent."""
        self.procs[n].send_signal(signal.SIGSTOP)

    def resume_member(self, n):
        self.procs[n].send_signal(signal.SIGCONT)

    def alive(self):
        return sorted(n for n, p in self.procs.items() if p.poll() is None)

    def healthy(self, endpoints=None):
        result = subprocess.run(
            ["etcdctl", f"--endpoints={endpoints or self.endpoints}", "--command-timeout=1s", "endpoint", "health"],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, timeout=10)
        return result.returncode == 0

    def status(self):
        """{member number: (is leader, raft term)} of the members that answered."""
        out = {}
        for n in self.alive():
            try:
                result = subprocess.run(
                    ["etcdctl", f"--endpoints={self.urls[n - 1]}", "--command-timeout=1s", "endpoint", "status", "-w", "json"],
                    env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, timeout=5)
            except subprocess.TimeoutExpired:
                continue
            if result.returncode != 0:
                continue
            try:
                status = json.loads(result.stdout)[0]["Status"]
            except (ValueError, KeyError, IndexError):
                continue
            out[n] = (status.get("leader") == status["header"]["member_id"],
                      int(status.get("raftTerm", status["header"].get("raft_term", 0))))
        return out

    def leader_member(self, timeout=10):
        """The number of etcd's raft leader member (bounded wait for one to exist)."""
        def find():
            for n, (leading, _) in self.status().items():
                if leading:
                    return n
            return None
        return wait_until(find, timeout, "etcd to have a raft leader", interval=0.1)

    def get(self, key, timeout=2.0):
        """The value of `key` through the gateway (None: absent); tries each live member."""
        body = json.dumps({"key": base64.b64encode(key.encode()).decode()}).encode()
        last = None
        for n in self.alive():
            request = urllib.request.Request(self.urls[n - 1] + "/v3/kv/range", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    answer = json.loads(response.read())
            except (OSError, ValueError) as error:
                last = error
                continue
            kvs = answer.get("kvs") or []
            if not kvs:
                return None
            return base64.b64decode(kvs[0].get("value", "")).decode()
        raise Failure(f"no etcd member answered a range of {key}: {last}")

    def log_tail(self, n, lines=10):
        path = self.dir / f"m{n}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# ------------------------------------------------------------------ arbiter nodes

def http_get(port, path, timeout=2.0, host="127.0.0.1"):
    """(status, body) of GET http://host:port/path; (None, error text) when unreachable."""
    request = urllib.request.Request(f"http://{host}:{port}{path}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (OSError, ValueError) as error:
        return None, str(error)


class HoldingProxy:
    """A TCP relay from a loopback port to `target_port`, to cut one node off from etcd
    without touching anything else: `hold()` stops moving bytes both ways (they wait in
    the kernel's buffers, as on a network that lost its route: no reset, no FIN, the
    connections stay open), `release()` moves them again. A connection opened while held
    is accepted and carries nothing until then."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self):
        self.flowing.clear()

    def release(self):
        self.flowing.set()

    def close(self):
        self.flowing.set()
        try:
            self.listener.close()
        except OSError:
            pass

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client):
        self.flowing.wait()
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        # Without it a relayed frame written while an earlier one is unacknowledged waits
        # for that ACK (Nagle against delayed ACKs), tens of milliseconds per hop: queue
        # hand-offs, one chained frame after another, ran 30x slower through the proxy.
        for end in (client, upstream):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                self.flowing.wait()
                data = source.recv(65536)
                if not data:
                    break
                # Held between the read and the write too: nothing slips through.
                self.flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Node:
    """One arbiter node of the cluster, restartable on its port."""

    def __init__(self, binary, name, port, etcd, key_file, config_file, workdir, ttl=3, extra=()):
        self.binary = str(binary)
        self.name = name
        self.port = port
        self.etcd = etcd
        self.key_file = str(key_file)
        self.config_file = str(config_file)
        self.workdir = Path(workdir)
        self.ttl = ttl
        self.extra = list(extra)
        self.proc = None
        self.runs = 0
        self.log_path = None
        # With `proxied`, the node reaches each etcd member through its own HoldingProxy,
        # and other nodes reach it through `relay_proxy`.
        self.proxies = []
        self.relay_proxy = None

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def proxy_etcd(self):
        self.proxies = [HoldingProxy(port) for port in self.etcd.client_ports]
        # The address other nodes dial for relay links, and only they: clients use `port`.
        self.relay_proxy = HoldingProxy(self.port)

    def advertised(self):
        return f"127.0.0.1:{self.relay_proxy.port}" if self.relay_proxy else self.address

    def cut_from_nodes(self):
        """Every byte on the relay links into this node held; etcd and clients untouched."""
        self.relay_proxy.hold()

    def reconnect_to_nodes(self):
        self.relay_proxy.release()

    def etcd_endpoints(self):
        if self.proxies:
            return ",".join(f"http://127.0.0.1:{p.port}" for p in self.proxies)
        return self.etcd.endpoints

    def cut_from_etcd(self):
        """Every byte between this node and etcd held; clients and relay links untouched."""
        for proxy in self.proxies:
            proxy.hold()

    def reconnect_to_etcd(self):
        for proxy in self.proxies:
            proxy.release()

    def argv(self):
        return [self.binary, "--cluster", self.etcd_endpoints(), "--node", self.name, "--advertise", self.advertised(),
                "--port", str(self.port), "--host", "127.0.0.1", "--cluster-key", self.key_file,
                "--cluster-ttl", str(self.ttl), "--config", self.config_file, "--log-level", "info"] + self.extra

    def start(self, timeout=20):
        self.runs += 1
        self.log_path = self.workdir / f"{self.name}-{self.runs}.log"
        self.proc = spawn(self.argv(), self.log_path, stamped=STAMP_NODE_LOGS)

        def ready():
            if self.proc.poll() is not None:
                raise Failure(f"node {self.name} exited with status {self.proc.returncode}:\n{self.log_tail()}")
            status, _ = http_get(self.port, "/healthz", timeout=1)
            return status == 200
        wait_until(ready, timeout, f"node {self.name} to answer /healthz on {self.address}", interval=0.1)
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        if self.running():
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def log_text(self):
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def log_tail(self, lines=25):
        return "\n".join(self.log_text().splitlines()[-lines:])


class Cluster:
    """etcd (3 members) and `count` nodes n1..nN sharing one config and cluster key."""

    def __init__(self, binary, config, count=3, ttl=3, extra=(), proxied=False):
        self.binary = Path(binary).resolve()
        self.loader = self.binary.parent / "arbiter-load"
        self.workdir = temp_dir("arbiter-cluster.")
        self.config = config
        self.config_file = self.workdir / "panels.json"
        self.config_file.write_text(json.dumps(config, indent=1))
        self.key_file = self.workdir / "cluster.key"
        self.key_file.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
        os.chmod(self.key_file, 0o600)
        self.ttl = ttl
        self.etcd = Etcd3()
        ports = free_ports(count)
        self.nodes = [Node(self.binary, f"n{i + 1}", ports[i], self.etcd, self.key_file, self.config_file,
                           self.workdir, ttl=ttl, extra=extra) for i in range(count)]
        self.proxied = proxied

    def start(self):
        self.etcd.start()
        for node in self.nodes:
            if self.proxied:
                node.proxy_etcd()
            node.start()
        log("nodes: " + ", ".join(f"{n.name}={n.address}" for n in self.nodes)
            + (" (each reaching etcd through its own proxy)" if self.proxied else ""))
        return self


    def node(self, name):
        return next(n for n in self.nodes if n.name == name)

    def leader_name(self, panel):
        return self.etcd.get(f"/arbiter/panels/{panel}/leader")

    def leader_of(self, panel, timeout=15, among=None):
        """The node leading `panel` (waits, bounded, for a leader that is one of `among`)."""
        names = {n.name for n in (among or self.nodes)}

        def find():
            name = self.leader_name(panel)
            return name if name in names else None
        return self.node(wait_until(find, timeout, f"a leader of panel {panel} among {sorted(names)}", interval=0.1))

    def hosts(self, nodes=None):
        return ",".join(n.address for n in (nodes or self.nodes))

    def stop(self):
        for node in self.nodes:
            node.stop()
            for proxy in node.proxies + ([node.relay_proxy] if node.relay_proxy else []):
                proxy.close()
        for n in list(self.etcd.procs):
            self.etcd.kill_member(n)


# ------------------------------------------------------------------ line clients

class Seen(collections.namedtuple("Seen", "index at match")):
    """A line a `LineClient` waited for: its index, the monotonic time it arrived, the
    regex match. Unpacks as (index, at, match); `group()` reads the match."""

    def group(self, *groups):
        return self.match.group(*groups)


class LineClient:
    """A netcat-style session: text lines over TCP, every received line kept with its time."""

    def __init__(self, port, name, timeout=5.0):
        self.name = name
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.settimeout(None)
        self.lines = []   # (monotonic time received, line)
        self.closed = False
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.send(f"HELLO {name}")
        self.wait(rf"^OK HELLO name=\S+ ", timeout=timeout, what=f"{name}'s HELLO answered")

    def _read(self):
        buffer = b""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                buffer += data
                *complete, buffer = buffer.split(b"\n")
                with self.cond:
                    for raw in complete:
                        self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\r")))
                    self.cond.notify_all()
        except OSError:
            pass
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def send(self, line):
        try:
            self.sock.sendall((line + "\n").encode())
        except OSError as error:
            raise Failure(f"{self.name}: cannot send {line!r}: {error}")

    def mark(self):
        with self.cond:
            return len(self.lines)

    def texts(self, since=0, pattern=None):
        """The lines from `since` on, only those matching `pattern` if given."""
        with self.cond:
            lines = [line for _, line in self.lines[since:]]
        return [line for line in lines if pattern is None or re.search(pattern, line)]

    def wait(self, pattern, since=0, timeout=5.0, what=None):
        """The first line from `since` on matching `pattern` (a `Seen`); bounded."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            index = since
            while True:
                while index < len(self.lines):
                    match = regex.search(self.lines[index][1])
                    if match:
                        return Seen(index, self.lines[index][0], match)
                    index += 1
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    seen = "\n  ".join(line for _, line in self.lines[max(since, len(self.lines) - 15):])
                    state = "closed" if self.closed else f"after {timeout} s"
                    raise Failure(f"{self.name}: no line matching {pattern!r} ({what or ''}), {state}; last lines:\n  {seen}")
                self.cond.wait(left)

    def request(self, line, pattern, timeout=5.0, what=None):
        """Sends `line` and waits for the first line after it matching `pattern`."""
        since = self.mark()
        self.send(line)
        return self.wait(pattern, since=since, timeout=timeout, what=what or line)

    def join(self, panel, timeout=5.0, unavailable_for=10.0):
        """JOINs `panel`; the snapshot's (index of OK JOIN, its key=values). `ERROR
        unavailable` (no leader reachable yet: a relay link being dialled, a failover) is
        what its hint says, "try again": tried again every 0.2 s for `unavailable_for` s."""
        deadline = time.monotonic() + unavailable_for
        while True:
            index, _, match = self.request(f"JOIN {panel}", rf"^(OK JOIN {re.escape(panel)} .*|ERROR .*)$", timeout=timeout)
            line = match.group(1)
            if line.startswith("ERROR unavailable") and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            check(line.startswith("OK JOIN"), f"{self.name}: JOIN {panel} refused: {line}")
            return index, fields(line)

    def close(self):
        # Shut down first: the reader thread is blocked in recv on this socket, and a bare
        # close() then sends no FIN until that recv returns, so the node kept the session
        # (and its grants) open, and the next scenario met them (`--only b,c`).
        for step in (lambda: self.sock.shutdown(socket.SHUT_RDWR), self.sock.close):
            try:
                step()
            except OSError:
                pass


def fields(line):
    """key=value pairs of a protocol line."""
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


class Presser(threading.Thread):
    """Presses one button through one node in a loop (DOWN, then UP when granted), every
    reply recorded with the time its DOWN was sent and the time it was read."""

    def __init__(self, port, name, panel, button, pause=0.05):
        super().__init__(daemon=True)
        self.client = LineClient(port, name)
        self.panel, self.button, self.pause = panel, button, pause
        self.replies = []   # (sent, read, line)
        self.stopping = threading.Event()

    def run(self):
        pattern = rf"^(GRANTED|DENIED|QUEUED|ERROR)\b"
        while not self.stopping.is_set():
            sent = time.monotonic()
            try:
                index, read, match = self.client.request(f"DOWN {self.panel} {self.button}", pattern, timeout=5)
            except Failure as error:
                self.replies.append((sent, time.monotonic(), f"(no reply: {str(error).splitlines()[0]})"))
                if self.client.closed:
                    return
                continue
            line = self.client.texts(index)[0]
            self.replies.append((sent, read, line))
            if line.startswith("GRANTED"):
                fence = fields(line)["fence"]
                try:
                    self.client.request(f"UP {self.panel} {self.button} fence={fence}", r"^(OK UP|ERROR)\b", timeout=5)
                except Failure:
                    pass
            self.stopping.wait(self.pause)

    def stop(self):
        self.stopping.set()
        self.join(10)
        self.client.close()

    def first_grant_after(self, t0):
        for sent, read, line in self.replies:
            if sent >= t0 and line.startswith("GRANTED"):
                return read, line
        return None


# ------------------------------------------------------------------ arbiter-load

def run_load(loader, args, timeout):
    """Runs arbiter-load with --json; (exit status, parsed JSON or None, stdout+stderr)."""
    argv = [str(loader)] + list(args) + ["--json"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    PROCESSES.append(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        raise Failure(f"arbiter-load did not finish within {timeout} s:\n{err.decode(errors='replace')[-2000:]}")
    text = out.decode(errors="replace")
    result = None
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                result = json.loads(line)
                break
            except ValueError:
                pass
    return proc.returncode, result, text + err.decode(errors="replace")


class BackgroundLoad:
    """arbiter-load in a thread, so a scenario can kill things meanwhile."""

    def __init__(self, loader, args, timeout):
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(loader, args, timeout), daemon=True)
        self.thread.start()

    def _run(self, loader, args, timeout):
        try:
            self.result = run_load(loader, args, timeout)
        except Failure as error:
            self.error = error

    def join(self, timeout):
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise Failure(f"arbiter-load still running after {timeout} s")
        if self.error:
            raise self.error
        return self.result


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]
