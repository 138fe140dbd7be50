#!/usr/bin/env bash
# A 3-member etcd cluster on loopback, for the cluster checks.
#
#   etcd3.sh run CMD...     start 3 members on free high ports (data under a temp dir),
#                           run CMD with ETCD_ENDPOINTS, ETCD3_DIR and ETCD3_CTL set,
#                           stop every member and remove the dir on exit, CMD's status
#   etcd3.sh stop DIR N     kill -9 member N (1-3), as a crash would
#   etcd3.sh start DIR N    start member N again on its old data and ports
#   etcd3.sh leader DIR OUT write the number (1-3) of etcd's current raft leader and the
#                           highest raft term any member reports to OUT ("0 T": no leader)
#
# Raft timing: ETCD3_HEARTBEAT_MS and ETCD3_ELECTION_MS, default 50 and 500 (etcd's own
# defaults are 100 and 1000). On loopback a heartbeat takes well under a millisecond, and
# etcd's guide asks for an election timeout of about ten heartbeats; halving both halves
# how long the cluster is leaderless after its leader dies, which is what an arbiter leader
# must ride out inside its safe window (docs/CLUSTER.md). Between machines on a LAN the
# same values suit; over a WAN keep etcd's defaults or larger.
#
# History: compacted every ETCD3_COMPACTION (default 5s, periodic), far more often than a
# site would (README: every hour), so every check runs with old revisions gone and shows
# the nodes never need one (their watch starts at the current revision).
#
# Needs Debian's etcd-server and etcd-client (etcd, etcdctl on PATH).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

start_member() { # DIR N
  local dir=$1 n=$2
  setsid bash "$dir/m$n.cmd" >>"$dir/m$n.log" 2>&1 < /dev/null &
  echo $! >"$dir/m$n.pid"
  disown $! 2>/dev/null || true
}

stop_member() { # DIR N
  local dir=$1 n=$2 pid
  pid=$(cat "$dir/m$n.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  # setsid made the wrapper a group leader: the group is that member only.
  kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$dir/m$n.pid"
}

leader_member() { # DIR OUT
  local dir=$1 out=$2 n status leader=0 term=0 t
  for n in 1 2 3; do
    [ -f "$dir/m$n.pid" ] || continue
    status=$(ETCDCTL_API=3 etcdctl --endpoints="$(cat "$dir/m$n.url")" --command-timeout=1s endpoint status 2>/dev/null || true)
    # Columns: endpoint, ID, version, DB size, IS LEADER, IS LEARNER, RAFT TERM, ...
    [ "$(echo "$status" | awk -F', ' '{print $5}')" = "true" ] && leader=$n
    t=$(echo "$status" | awk -F', ' '{print $7}')
    [ -n "$t" ] && [ "$t" -gt "$term" ] && term=$t
  done
  echo "$leader $term" >"$out"
}

case "${1:-}" in
  stop) stop_member "$2" "$3" ;;
  start) start_member "$2" "$3" ;;
  leader) leader_member "$2" "$3" ;;
  run)
    shift
    command -v etcd >/dev/null || { echo "etcd3.sh: etcd not found (apt-get install etcd-server etcd-client)" >&2; exit 2; }
    dir=$(mktemp -d /tmp/etcd3.XXXXXX)
    cleanup() {
      for n in 1 2 3; do stop_member "$dir" "$n"; done
      rm -rf "$dir"
    }
    trap cleanup EXIT
    # Six free ports, asked of the kernel, released just before etcd binds them.
    read -r -a ports <<<"$(python3 -c '
import socket
socks = [socket.socket() for _ in range(6)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()')"
    initial=""
    for n in 1 2 3; do initial+="${initial:+,}m$n=http://127.0.0.1:${ports[$((2*n-1))]}"; done
    endpoints=""
    for n in 1 2 3; do
      client=${ports[$((2*n-2))]}; peer=${ports[$((2*n-1))]}
      endpoints+="${endpoints:+,}http://127.0.0.1:$client"
      echo "http://127.0.0.1:$client" >"$dir/m$n.url"
      cat >"$dir/m$n.cmd" <<CMD
exec etcd --name m$n --data-dir "$dir/m$n.data" \
  --listen-client-urls http://127.0.0.1:$client --advertise-client-urls http://127.0.0.1:$client \
  --listen-peer-urls http://127.0.0.1:$peer --initial-advertise-peer-urls http://127.0.0.1:$peer \
  --initial-cluster $initial --initial-cluster-state new --initial-cluster-token arbiter-check-$$ \
  --heartbeat-interval ${ETCD3_HEARTBEAT_MS:-50} --election-timeout ${ETCD3_ELECTION_MS:-500} \
  --auto-compaction-mode periodic --auto-compaction-retention ${ETCD3_COMPACTION:-5s}
CMD
      start_member "$dir" "$n"
    done
    healthy=""
    for _ in $(seq 1 100); do
      if ETCDCTL_API=3 etcdctl --endpoints="$endpoints" --command-timeout=1s endpoint health >/dev/null 2>&1; then healthy=yes; break; fi
      sleep 0.2
    done
    if [ -z "$healthy" ]; then
      echo "etcd3.sh: the cluster did not become healthy in 20 s" >&2
      tail -n 20 "$dir"/m*.log >&2 || true
      exit 1
    fi
    echo "etcd3.sh: 3 members at $endpoints ($dir)"
    status=0
    ETCD_ENDPOINTS="$endpoints" ETCD3_DIR="$dir" ETCD3_CTL="$here/etcd3.sh" "$@" || status=$?
    [ "$status" -eq 0 ] || tail -n 5 "$dir"/m*.log >&2 || true
    exit "$status"
    ;;
  *)
    echo "usage: etcd3.sh run CMD... | stop DIR N | start DIR N | leader DIR OUT" >&2
    exit 2
    ;;
esac
