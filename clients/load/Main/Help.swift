/// The `arbiter-load --help` text.
enum Help {
    static let text = """
        OVERVIEW: arbiter-load - load generator and safety checker for ButtonArbiter.

        Opens many real TCP connections (text lines, or WebSocket with the JSON form),
        drives one workload, prints throughput and latency percentiles, and checks every
        event it saw against the protocol's safety rules. With --redis it runs the
        equivalent workload against Redis instead, for comparison.

        USAGE: arbiter-load <workload> [options]

        WORKLOADS:
          contend   C connections loop DOWN/UP on B buttons (Redis: SET NX PX + DEL)
          fanout    P pressers loop DOWN/UP; N members receive every event
                    (Redis: PUBLISH to N SUBSCRIBErs)
          holds     hold and talk buttons pressed and released at random moments
          idle      open N connections, wait for every WELCOME, report the server's
                    memory per connection (needs --server-pid)
          queue     C contenders loop DOWN/UP on a queue group: a busy DOWN waits in line
                    and is granted by hand-off (config --buttons 1 --policy queue)
          buzz      buzzer rounds: a host ARMs, N players press on ARMED, one wins and
                    the rest are ranked (config --buttons 4 --groups 1 --policy buzzer);
                    members are told the first --announce places
          config    print a panel configuration for the server (arbiter --config FILE)

        OPTIONS:
          --host <ip>             Server address, IPv4 or IPv6 (default: 127.0.0.1).
          --port <port>           Server port (default: 7070).
          --hosts <h:p,h:p,...>   Several nodes of one cluster: connections are spread
                                  over them, and one whose node goes away reconnects to
                                  the next and goes on (IPv6 as [::1]:7070).
          --redis <host:port>     Run against Redis instead (contend, fanout, idle);
                                  IPv6 as [::1]:6379.
          --panel <id>            Panel under load (default: load).
          --panels <n>            contend: n independent panels <panel>1..<panel>n, the
                                  connections spread over them round-robin (default: 1,
                                  the one panel <panel>). config: print n such panels.
          --connections <n>       Pressers (contend, holds), members (fanout) or
                                  connections (idle). Defaults: 10, 100, 10, 1000.
          --members <n>           Same as --connections.
          --buttons <n>           contend: use the first n tap buttons (default: all;
                                  Redis: 100 keys). config: tap buttons to print.
          --pressers <n>          fanout: pressing connections (default: 1).
          --observers <n>         contend, holds: watching members per panel (default: 1).
                                  0: no member receives events (as with Redis); contend
                                  is then checked by the overlap check alone.
          --ws-fraction <f>       Share of connections that are WebSocket peers (default: 0).
          --duration <s>          Measured seconds (default: 5).
          --warmup <s>            Unmeasured seconds first (default: 0).
          --cycles <n>            Stop after n press cycles in all instead of --duration.
          --threads <n>           Generator threads (default: 1).
          --seed <n>              Random seed (default: 1).
          --server-pid <pid>      Server process for VmRSS (idle).
          --max-hold-ms <ms>      holds: a press is held 0..ms at random (default: 400).
          --connect-batch <n>     Connections set up at once (default: 256).
          --lock-ttl-ms <ms>      Redis contend: PX of the lock (default: 10000).
          --announce <n>          buzz: the buzzer group's announce, as configured: a
                                  BUZZED beyond rank n is a violation (default: 10).
          --no-check              Skip the safety checks (the event checker, and contend's
                                  overlap check of every grant, which needs no observer).
          --json                  Print the report as one JSON object.
          -h, --help              Show help information.

        CONFIG OPTIONS (arbiter-load config):
          --buttons <n>           Tap buttons b1..bn (default: 100, or 0 with --holds/--talks),
                                  each in its own group g1..gn unless --groups is given.
          --groups <n>            Spread the tap buttons over n groups.
          --panels <n>            Panels load1..loadn (named after --panel), each with
                                  these buttons.
          --holds <n>             Hold buttons h1..hn, each in its own group.
          --talks <n>             Talk buttons t1..tn, each in its own group.
          --hold-ms <ms>          hold_ms of the hold buttons (default: 200).
          --long-ms <ms>          long_ms of the talk buttons (default: 100).
          --min-talk-ms <ms>      min_talk_ms of the talk buttons (default: 50).
          --policy <p>            config: give every tap group the policy queue or buzzer.
          --max-queue <n>         config: max_queue of queue groups (default: 100000).
          --early-lockout-ms <ms> config: early_lockout_ms of buzzer groups (default: 20).
          --announce <n>          config: announce of buzzer groups, the places members
                                  are told (default: the server's, 10).

        A server's per-session rate limit (arbiter --rate, default 1000/s) is answered by
        retrying after a pause and counted as rate-limited; use arbiter --rate 0 for
        capacity runs.

        EXAMPLES:
          arbiter-load config --buttons 100 > load.json && arbiter --config load.json --rate 0 &
          arbiter-load contend --connections 100 --duration 10
          arbiter-load fanout --members 1000 --ws-fraction 0.5
          arbiter-load idle --connections 10000 --server-pid $(pidof arbiter)
          arbiter-load contend --redis 127.0.0.1:6379 --connections 100

        EXIT STATUS: 0 clean; 1 a safety violation (printed); 2 the run failed;
        3 the server answered with errors; 64 a bad command line.
        """
}
