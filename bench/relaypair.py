"""Two cluster nodes on one etcd member, one of them under callgrind: what
bench/relay-callgrind.py and bench/relay-fanout-callgrind.py share.

n1 starts first and leads panel `busy` (16 taps, each its own group); n2 relays to it.
The profiled node runs under valgrind with a cluster TTL of 10 s (it runs tens of times
slower there). `NODE_ARGS` adds flags to both nodes. `counted(action)` zeroes the profiled
node's counters, runs `action`, dumps them and returns the total and the seconds it took:
callgrind_control is given the node's pid, or it would zero and dump every callgrind
process on the machine.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

BUTTONS = 16


class RelayPair:
    def __init__(self, bindir, profiled, prefix, node_args=()):
        if not shutil.which("valgrind") or not shutil.which("etcd"):
            sys.exit(f"{prefix} needs valgrind and etcd")
        self.bindir = Path(bindir).resolve()
        self.profiled = profiled
        self.work = cl.temp_dir(prefix + ".")
        self.node_args = list(node_args) + os.environ.get("NODE_ARGS", "").split()
        self.client, self.peer, self.port1, self.port2 = cl.free_ports(4)
        self.procs = []
        self.pid = None
        self.dumps = 0

    def start(self):
        busy = {"id": "busy", "title": "Busy", "buttons":
                [{"id": f"b{i}", "kind": "tap", "group": f"g{i}", "timeout_ms": 0} for i in range(1, BUTTONS + 1)]}
        self.config = self.work / "panels.json"
        self.config.write_text(json.dumps({"panels": [busy]}))
        self.key = self.work / "cluster.key"
        self.key.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
        os.chmod(self.key, 0o600)
        c, p = self.client, self.peer
        self.procs.append(cl.spawn(["etcd", "--name", "m1", "--data-dir", str(self.work / "etcd"),
                                    "--listen-client-urls", f"http://127.0.0.1:{c}", "--advertise-client-urls", f"http://127.0.0.1:{c}",
                                    "--listen-peer-urls", f"http://127.0.0.1:{p}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{p}",
                                    "--initial-cluster", f"m1=http://127.0.0.1:{p}"], self.work / "etcd.log"))
        time.sleep(2)
        self._node("n1", self.port1)
        time.sleep(3)
        self._node("n2", self.port2)
        time.sleep(5)
        leader = subprocess.run(["etcdctl", "--endpoints", f"http://127.0.0.1:{c}", "get", "--print-value-only",
                                 "/arbiter/panels/busy/leader"], capture_output=True, text=True).stdout.strip()
        if leader != "n1":
            sys.exit(f"panel busy is led by {leader!r}, not n1: nothing is relayed")

    def _node(self, name, port):
        argv = [str(self.bindir / "arbiter"), "--cluster", f"http://127.0.0.1:{self.client}", "--node", name,
                "--advertise", f"127.0.0.1:{port}", "--port", str(port), "--host", "127.0.0.1", "--cluster-key", str(self.key),
                "--cluster-ttl", "10", "--config", str(self.config), "--log-level", "info"] + self.node_args
        if name == self.profiled:
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.work}/cg.out", "--dump-instr=no"] + argv
        self.procs.append(cl.spawn(argv, self.work / f"{name}.log"))
        if name == self.profiled:
            self.pid = str(self.procs[-1].pid)
        cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=3)[0] == 200, 120, f"{name} to answer /healthz", interval=0.5)

    def counted(self, action):
        """The profiled node's instructions while `action` runs, and its seconds."""
        subprocess.run(["callgrind_control", "-z", self.pid], capture_output=True)
        started = time.monotonic()
        action()
        seconds = time.monotonic() - started
        subprocess.run(["callgrind_control", "-d", self.pid], capture_output=True)
        self.dumps += 1
        dump = self.work / f"cg.out.{self.dumps}"
        cl.wait_until(lambda: dump.exists(), 30, f"{dump} to be written", interval=0.2)
        time.sleep(0.5)
        totals = subprocess.run(["callgrind_annotate", str(dump)], capture_output=True, text=True).stdout
        return next(int(line.split()[0].replace(",", "")) for line in totals.splitlines() if "PROGRAM TOTALS" in line), seconds

    def stop(self):
        for proc in reversed(self.procs):
            cl.kill_group(proc)
