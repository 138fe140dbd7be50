import ArbiterCluster
import ArbiterWire
import Testing
@testable import ArbiterEtcd

/// Answers captured from etcd 3.4.23's gateway (Debian's etcd-server), and the request
/// bodies it accepted.
@Suite struct GatewayJSONTests {
    func parse(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test func aWonCampaignIsASucceededTxnWhoseRevisionIsTheTerm() throws {
        let json = try parse(
            #"{"header":{"cluster_id":"1511932369191479037","member_id":"454174273020010300","revision":"2","raft_term":"2"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"2"}}}]}"#
        )
        #expect(try EtcdJSONResponse.txn(json) == EtcdTxnResponse(succeeded: true, revision: 2, results: [.put]))
    }

    @Test func aLostCampaignLeavesSucceededOutAndCarriesTheHolder() throws {
        let json = try parse(
            #"{"header":{"cluster_id":"1511932369191479037","member_id":"454174273020010300","revision":"2","raft_term":"2"},"responses":[{"response_range":{"header":{"revision":"2"},"kvs":[{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ==","lease":"2250852245721187335"}],"count":"1"}}]}"#
        )
        let txn = try EtcdJSONResponse.txn(json)
        #expect(!txn.succeeded)
        #expect(
            txn.rangeResult(0) == [EtcdKeyValue(key: [0x61], value: [0x31], createRevision: 2, modRevision: 2, version: 1, lease: 2_250_852_245_721_187_335)])
    }

    @Test func anEmptyRangeHasNoKvs() throws {
        let json = try parse(#"{"header":{"cluster_id":"1","member_id":"4","revision":"2","raft_term":"2"}}"#)
        #expect(try EtcdJSONResponse.range(json) == EtcdRangeResponse(revision: 2, kvs: []))
    }

    @Test func deletesCountAsStrings() throws {
        let json = try parse(#"{"header":{"revision":"3"},"succeeded":true,"responses":[{"response_delete_range":{"header":{"revision":"3"},"deleted":"1"}}]}"#)
        #expect(try EtcdJSONResponse.txn(json).results == [.delete(deleted: 1)])
    }

    @Test func leaseGrantAndKeepalive() throws {
        let grant = try parse(#"{"header":{"revision":"1"},"ID":"2250852245721187333","TTL":"3"}"#)
        #expect(try EtcdJSONResponse.lease(grant) == EtcdLease(id: 2_250_852_245_721_187_333, ttlSeconds: 3))
        let gone = try parse(#"{"result":{"header":{"revision":"2"},"ID":"12345"}}"#)
        #expect(try EtcdJSONResponse.lease(try #require(gone["result"])).ttlSeconds == 0)
    }

    @Test func errorsMapToTheCasesTheClusterActsOn() throws {
        let notFound = try parse(#"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#)
        #expect(EtcdJSONResponse.error(notFound, httpStatus: 404) == .leaseNotFound)
        let noLeader = try parse(#"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#)
        #expect(EtcdJSONResponse.error(noLeader, httpStatus: 503) == .unavailable("etcdserver: no leader"))
        let timedOut = try parse(#"{"error":"etcdserver: request timed out","code":14}"#)
        guard case .unavailable = EtcdJSONResponse.error(timedOut, httpStatus: 503) else { Issue.record("not unavailable"); return }
        let other = try parse(#"{"error":"etcdserver: too many operations in txn request","code":3}"#)
        #expect(EtcdJSONResponse.error(other, httpStatus: 400) == .server(code: 3, message: "etcdserver: too many operations in txn request"))
    }

    @Test func watchEventsLeaveTheTypeOutForPuts() throws {
        let json = try parse(
            #"{"header":{"revision":"3"},"events":[{"kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ==","lease":"7"}},{"type":"DELETE","kv":{"key":"YQ==","mod_revision":"3"},"prev_kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ=="}}]}"#
        )
        let events = try EtcdJSONResponse.events(json)
        #expect(events.map(\.kind) == [.put, .delete])
        #expect(events[0].kv.lease == 7)
        #expect(events[1].kv.modRevision == 3)
        #expect(events[1].previous?.createRevision == 2)
    }

    @Test func malformedAnswersAreNamedNotGuessed() throws {
        #expect(throws: EtcdError.self) { try EtcdJSONResponse.range(try parse(#"{"header":{"revision":"x"}}"#)) }
        #expect(throws: EtcdError.self) { try EtcdJSONResponse.range(try parse(#"{"header":{"revision":"1"},"kvs":[{"key":"not base64!"}]}"#)) }
    }

    @Test func requestBodiesHaveTheGatewaysShape() throws {
        let campaign = EtcdTxn(compare: [.createRevision("a", .equal, 0)], success: [.put("a", "1", lease: 9)], failure: [.range("a")])
        let body = try parse(EtcdJSONRequest.txn(campaign))
        #expect(
            body
                == (try parse(
                    #"{"compare":[{"result":"EQUAL","target":"CREATE","create_revision":"0","key":"YQ=="}],"success":[{"request_put":{"key":"YQ==","value":"MQ==","lease":"9"}}],"failure":[{"request_range":{"key":"YQ=="}}]}"#
                )))
        let watch = try parse(EtcdJSONRequest.watch(.prefix("a"), startRevision: 5))
        #expect(watch == (try parse(#"{"create_request":{"key":"YQ==","range_end":"Yg==","start_revision":"5","prev_kv":true}}"#)))
        #expect(try parse(EtcdJSONRequest.leaseGrant(ttlSeconds: 3)) == (try parse(#"{"TTL":"3","ID":"0"}"#)))
    }

    @Test func endpointsParseOrSayWhy() throws {
        #expect(
            try EtcdEndpoint.parseList("http://10.0.0.1:2379,http://[::1]:2380/").get() == [
                EtcdEndpoint(host: "10.0.0.1", port: 2379), EtcdEndpoint(host: "::1", port: 2380),
            ])
        guard case .failure(let https) = EtcdEndpoint.parse("https://e1:2379") else { Issue.record("https accepted"); return }
        #expect(https.description.contains("TLS"))
        guard case .failure = EtcdEndpoint.parse("http://e1") else { Issue.record("no port accepted"); return }
        guard case .failure = EtcdEndpoint.parse("http://e1:70000") else { Issue.record("bad port accepted"); return }
    }
}
