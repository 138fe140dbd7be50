#!/usr/bin/env python3
"""User-space instructions per relayed request, counted by valgrind's callgrind on one node.

    python3 bench/relay-callgrind.py BINDIR [CYCLES] [n1|n2]

One etcd member and two nodes on loopback; n1 starts first and leads panel `busy`, n2
relays to it. arbiter-load drives CYCLES (default 4000) DOWN/UP cycles over one
connection through n2 while the chosen node (default n2, the relaying node) runs under
callgrind; counters are zeroed after a warm-up and dumped after the run, so the profile
is the relayed requests plus what the node does in the background meanwhile (lease
keepalives, the watch). Valgrind cannot read the DWARF of a Swift release build, so BINDIR's
`arbiter` should be stripped of debug info first (`strip -g`; the symbols stay).
`NODE_ARGS` adds flags to both nodes (e.g. `NODE_ARGS="--idle-spin 0"` to compare a build
from before spinning became opt-in with one after). Read the result with `callgrind_annotate [--inclusive=yes] <workdir>/cg.out.1`.
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relaypair import BUTTONS, RelayPair  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: relay-callgrind.py BINDIR [CYCLES] [n1|n2]")
    bindir = Path(sys.argv[1]).resolve()
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    profiled = sys.argv[3] if len(sys.argv) > 3 else "n2"
    if profiled not in ("n1", "n2"):
        sys.exit("usage: relay-callgrind.py BINDIR [CYCLES] [n1|n2]")
    pair = RelayPair(bindir, profiled, "relay-callgrind")

    def load(n):
        result = subprocess.run([str(bindir / "arbiter-load"), "contend", "--hosts", f"127.0.0.1:{pair.port2}", "--panel", "busy",
                                 "--buttons", str(BUTTONS), "--connections", "1", "--observers", "0", "--cycles", str(n), "--json"],
                                capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            sys.exit(f"arbiter-load failed: {result.stderr[-500:]}")
    try:
        pair.start()
        load(200)
        total, _ = pair.counted(lambda: load(cycles))
        print(f"relay-callgrind: {profiled}: {total // (2 * cycles)} user-space instructions per relayed request "
              f"({total} over {2 * cycles} requests, background included); profile: {pair.work}/cg.out.1")
    finally:
        pair.stop()


if __name__ == "__main__":
    main()
