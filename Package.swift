// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ButtonArbiter",
    products: [
        .executable(name: "arbiter", targets: ["arbiter"]),
        .executable(name: "arbiter-load", targets: ["arbiter-load"]),
        .library(name: "ArbiterClient", targets: ["ArbiterClient"]),
        .executable(name: "arbiter-watch", targets: ["arbiter-watch"]),
        .executable(name: "arbiter-press", targets: ["arbiter-press"]),
    ],
    targets: [
        // Pure state: no Foundation, no Dispatch, no clock reads.
        .target(name: "ArbiterCore"),
        // Pure byte codecs: no sockets.
        .target(name: "ArbiterWire", dependencies: ["ArbiterCore"]),
        // Cluster mode's pure logic: the etcd API as values, an in-memory etcd, the lease
        // and leadership state machines, the relay codec, the config digest. No Foundation, no
        // Dispatch, no clock reads.
        .target(name: "ArbiterCluster", dependencies: ["ArbiterCore", "ArbiterWire"]),
        // etcd's HTTP/JSON gateway over plain sockets, behind ArbiterCluster's EtcdAPI.
        .target(name: "ArbiterEtcd", dependencies: ["ArbiterCluster", "ArbiterWire", "ArbiterIO"]),
        // Drives ClusterNode for real: the lease on its own queue, steps on another.
        .target(name: "ArbiterClusterRuntime", dependencies: ["ArbiterCluster", "ArbiterCore", "ArbiterIO"]),
        // epoll, accept4 and the other calls Swift's Glibc module does not export.
        .target(name: "CSystem"),
        // The system calls, wrapped once for the server and the load generator: EINTR
        // retried, EAGAIN as would-block, errno kept. The event loop and its channels
        // (epoll, accept, reads, bounded output, flushing, closing), subclassed by the
        // server. No policy: nothing about panels, sessions or protocols.
        .target(name: "ArbiterIO", dependencies: ["CSystem", "ArbiterLock"]),
        // The package's one lock (`Locked`), for the server's modules and the client alike.
        .target(name: "ArbiterLock"),
        // Webhooks: each hook's outbox (pure, on a manual clock in tests), its senders
        // (our own HTTP/1.1 client; URLSession for https) and the store beside the journal.
        .target(name: "ArbiterHooks", dependencies: ["ArbiterCore", "ArbiterWire", "ArbiterIO"]),
        // The single-node server, its policy over ArbiterIO: reactors, connections, panels,
        // journal, metrics. It knows no cluster: `ServerCluster` and `PanelRole` are the
        // seams cluster mode fills.
        // The journal: one node's append-only file of grants and fences, its replay,
        // compaction and lock.
        .target(name: "ArbiterJournal", dependencies: ["ArbiterWire", "ArbiterIO"]),
        .target(
            name: "ArbiterServer",
            dependencies: ["ArbiterCore", "ArbiterWire", "ArbiterIO", "ArbiterHooks", "ArbiterJournal"],
            plugins: ["EmbedKiosk"]),
        // Cluster mode in the server: the node's wiring to its runtime (ClusterContext), each
        // panel's role as leader or follower (ClusterPanel), and the relay links between nodes.
        .target(
            name: "ArbiterClusterServer",
            dependencies: ["ArbiterServer", "ArbiterCore", "ArbiterWire", "ArbiterIO", "ArbiterCluster", "ArbiterClusterRuntime", "ArbiterHooks"]),
        // The Swift client library: Foundation and Dispatch only (and the package's lock),
        // nothing of the server.
        .target(name: "ArbiterClient", dependencies: ["ArbiterLock"]),
        // Command-line tools built on the client library alone.
        // What the client tools share: their command line and how they speak.
        .target(name: "ArbiterClientTool", path: "clients/swift/tool"),
        .executableTarget(name: "arbiter-watch", dependencies: ["ArbiterClient", "ArbiterClientTool"], path: "clients/swift/watch"),
        .executableTarget(name: "arbiter-press", dependencies: ["ArbiterClient", "ArbiterClientTool", "ArbiterLock"], path: "clients/swift/press"),
        // Build-time embedding of clients/kiosk into the server binary.
        .executableTarget(name: "kiosk-embed"),
        .plugin(name: "EmbedKiosk", capability: .buildTool(), dependencies: ["kiosk-embed"]),
        // Command-line parsing shared by arbiter and arbiter-load: one reader, one wording.
        .target(name: "ArbiterCLI", dependencies: ["ArbiterIO"]),
        // The executable: its command line (ArbiterOptions), config, signals, start.
        .executableTarget(
            name: "arbiter",
            dependencies: [
                "ArbiterServer", "ArbiterClusterServer", "ArbiterIO", "ArbiterCLI", "ArbiterWire", "CSystem", "ArbiterCluster", "ArbiterEtcd", "ArbiterJournal",
            ]),
        .testTarget(name: "ArbiterCoreTests", dependencies: ["ArbiterCore"]),
        .testTarget(name: "ArbiterWireTests", dependencies: ["ArbiterWire", "ArbiterCore"]),
        .testTarget(name: "ArbiterHooksTests", dependencies: ["ArbiterHooks", "ArbiterWire", "ArbiterCore", "ArbiterIO", "ArbiterTestSupport"]),
        // The wrappers and the event loop (with a test policy) against real sockets and files.
        .testTarget(name: "ArbiterIOTests", dependencies: ["ArbiterIO", "CSystem"]),
        // The shared flag reader, and arbiter's own options through @testable import.
        .testTarget(name: "ArbiterCLITests", dependencies: ["ArbiterCLI", "arbiter", "ArbiterServer", "ArbiterEtcd"]),
        .testTarget(name: "ArbiterClusterTests", dependencies: ["ArbiterCluster", "ArbiterCore", "ArbiterWire", "ArbiterIO"]),
        // Drives the real etcd client against Tests/cluster/etcd3.sh's 3 members (.ci/run).
        .executableTarget(
            name: "arbiter-etcd-check", dependencies: ["ArbiterEtcd", "ArbiterCluster", "ArbiterClusterRuntime", "ArbiterCore", "ArbiterIO"],
            path: "Tests/cluster/check"),
        // The in-memory etcd behind a lock, shared by the runtime's and the server's cluster tests.
        .target(name: "ArbiterClusterTestSupport", dependencies: ["ArbiterCluster", "ArbiterCore", "ArbiterIO"], path: "Tests/ArbiterClusterTestSupport"),
        .testTarget(
            name: "ArbiterClusterRuntimeTests",
            dependencies: ["ArbiterClusterRuntime", "ArbiterCluster", "ArbiterCore", "ArbiterClusterTestSupport", "ArbiterIO"]),
        .testTarget(name: "ArbiterEtcdTests", dependencies: ["ArbiterEtcd", "ArbiterCluster", "ArbiterWire", "ArbiterIO"]),
        // Loopback clients and a port-0 server for the socket tests.
        .target(name: "ArbiterTestSupport", dependencies: ["ArbiterServer", "ArbiterCore", "ArbiterWire", "ArbiterIO"], path: "Tests/ArbiterTestSupport"),
        .testTarget(
            name: "ArbiterServerTests",
            dependencies: [
                "ArbiterServer", "ArbiterClusterServer", "ArbiterWire", "ArbiterCore", "ArbiterIO", "ArbiterTestSupport", "ArbiterCluster",
                "ArbiterClusterRuntime", "ArbiterClusterTestSupport", "ArbiterJournal", "ArbiterHooks",
            ]),
        // The Swift client against servers (single, restarted, clustered) in this process.
        .testTarget(
            name: "ArbiterClientTests",
            dependencies: [
                "ArbiterClient", "ArbiterServer", "ArbiterClusterServer", "ArbiterCluster", "ArbiterCore", "ArbiterIO", "ArbiterTestSupport",
                "ArbiterClusterTestSupport", "ArbiterClientTool",
            ]),
        // Depends on the executable so `swift test` builds the binary it drives.
        .testTarget(name: "EndToEndTests", dependencies: ["arbiter", "ArbiterTestSupport", "ArbiterClient", "ArbiterHooks", "ArbiterWire"]),
        // The load generator and safety checker: real sockets through ArbiterIO, epoll via
        // CSystem, the server's codecs for WebSocket frames and config; never the server itself.
        .target(name: "ArbiterLoadKit", dependencies: ["ArbiterCore", "ArbiterWire", "ArbiterIO", "ArbiterCLI", "CSystem"], path: "clients/load/Kit"),
        .executableTarget(name: "arbiter-load", dependencies: ["ArbiterLoadKit", "ArbiterCLI"], path: "clients/load/Main"),
        // The arbitration layer alone on 1..n cores (bench/scaling.sh's second part).
        .executableTarget(name: "arbiter-cores", dependencies: ["ArbiterCore", "ArbiterIO"], path: "bench/cores"),
        // Depends on the executable too: the integration test starts the real binary.
        .testTarget(name: "ArbiterLoadTests", dependencies: ["ArbiterLoadKit", "ArbiterWire", "ArbiterCore", "arbiter"]),
    ],
    swiftLanguageModes: [.v6]
)
