import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Realms
import Storage
import Synchronization
import Testing
@testable import HeraldServer

@Suite("OAuth: branch B downstream completion")
struct OAuthDownstreamTests {
    @Test("completing a pending authorization returns the redirect URI with an ac_ code, the state and iss, once", arguments: Backend.allCases)
    func completesOnce(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            _ = try await fixture.authorize(state: "x y&z=1")
            let redirect = try await fixture.complete(state: "x y&z=1", accountID: "acct-1")
            #expect(redirect.hasPrefix(OAuthFixture.redirect + "?code=ac_"))
            let parameters = queryParameters(redirect)
            #expect(parameters["state"] == "x y&z=1")
            #expect(parameters["iss"] == fixture.issuer)
            let code = try #require(parameters["code"])
            #expect(code.utf8.count >= 3 + 43)
            #expect(!redirect.contains(" "))

            await #expect(throws: GrantsError(.invalidDownstreamState,
                                              "No pending authorization matches this downstream state")) {
                _ = try await fixture.complete(state: "x y&z=1", accountID: "acct-1")
            }
            // Stored only as a hash.
            let rows = try await herald.application.services.database.read { db in
                try db.query("SELECT code_hash FROM authorization_codes")
            }
            #expect(rows.count == 1)
            #expect(try rows[0].bytes("code_hash") == SHA256.hash(Array(code.utf8)))
        }
    }

    /// Issue #20: a redirect URI the admin removed still received codes from pending
    /// authorizations, and its codes still exchanged. Both steps revalidate it now.
    @Test("a redirect URI removed after /authorize receives no code, and its codes exchange for nothing", arguments: Backend.allCases)
    func removedRedirectURIIsRevalidated(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let account = try await fixture.account()
            let code = try await fixture.code(accountID: account)
            _ = try await fixture.authorize(state: "pending-before-removal")
            let removed = try await herald.admin("PATCH", "/api/admin/realms/\(OAuthFixture.realm)/clients/\(OAuthFixture.publicClient)",
                                                 json: ["redirectUris": ["https://app.acme.example/q?x=1"]])
            #expect(removed.status == 200)
            await #expect(throws: GrantsError(.invalidDownstreamState,
                                              "The pending authorization's client or redirect_uri is no longer registered")) {
                _ = try await fixture.complete(state: "pending-before-removal", accountID: account)
            }
            let exchanged = try await fixture.exchange(code)
            #expect(exchanged.status == 400)
            #expect(exchanged.json["error"]?.stringValue == "invalid_grant")
        }
    }

    /// Issue #38 item 9: pending states were unique per realm, so any client could claim
    /// another backend's predictable `state` first and keep it pending.
    @Test("two clients may hold the same state at once; the same client still gets \"state is already pending\"",
          arguments: Backend.allCases)
    func pendingStatesArePerClient(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let account = try await fixture.account()
            let squatter = try await fixture.authorize(client: OAuthFixture.publicClient, state: "predictable", json: true)
            #expect(squatter.status == 200)
            let backendOwn = try await fixture.authorize(client: OAuthFixture.confidentialClient, state: "predictable", json: true)
            #expect(backendOwn.status == 200, "\(backendOwn.text)")
            let again = try await fixture.authorize(client: OAuthFixture.publicClient, state: "predictable", json: true)
            #expect(again.status == 400)
            #expect(again.json["error"]?.stringValue == "invalid_request")
            #expect(again.json["error_description"]?.stringValue == "state is already pending")
            // Each completes with its own handle, for its own client.
            let squatterHandle = try #require(squatter.json["downstreamState"]?.stringValue)
            let backendHandle = try #require(backendOwn.json["downstreamState"]?.stringValue)
            #expect(squatterHandle != backendHandle)
            let redirect = try await fixture.complete(client: OAuthFixture.confidentialClient, state: "predictable",
                                                      handle: backendHandle, accountID: account)
            #expect(queryParameters(redirect)["state"] == "predictable" && queryParameters(redirect)["code"] != nil)
            _ = try await fixture.complete(client: OAuthFixture.publicClient, state: "predictable", handle: squatterHandle,
                                           accountID: account)
        }
    }

    @Test("a client deleted and created again under its id completes no earlier authorization and redeems no earlier code",
          arguments: Backend.allCases)
    func recreatedClientInheritsNothing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let account = try await fixture.account()
            let code = try await fixture.code(accountID: account)
            _ = try await fixture.authorize(state: "pending-before-recreation")
            let path = "/api/admin/realms/\(OAuthFixture.realm)/clients"
            #expect(try await herald.admin("DELETE", "\(path)/\(OAuthFixture.publicClient)").status == 204)
            #expect(try await herald.admin("POST", path, json: [
                "clientId": .string(OAuthFixture.publicClient), "name": "again",
                "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
            ]).status == 201)
            await #expect(throws: GrantsError(.invalidDownstreamState,
                                              "The pending authorization's client or redirect_uri is no longer registered")) {
                _ = try await fixture.complete(state: "pending-before-recreation", accountID: account)
            }
            let exchanged = try await fixture.exchange(code)
            #expect(exchanged.status == 400)
            #expect(exchanged.json["error"]?.stringValue == "invalid_grant")
            // The new registration's own flows work.
            #expect(try await fixture.exchange(try await fixture.code(accountID: account)).status == 200)
        }
    }

    @Test("a registered redirect URI with a query gets the parameters appended with &", arguments: Backend.allCases)
    func appendsToExistingQuery(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let response = try await fixture.authorize(["redirect_uri": "https://app.acme.example/q?x=1"])
            #expect(response.header("Location")?.hasPrefix(OAuthFixture.loginURL) == true)
            let redirect = try await fixture.complete(accountID: "acct-1")
            #expect(redirect.hasPrefix("https://app.acme.example/q?x=1&code=ac_"))
            #expect(queryParameters(redirect)["x"] == "1")
        }
    }

    @Test("another client, an unknown state and an expired pending authorization are invalid_downstream_state", arguments: Backend.allCases)
    func refusesMismatches(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            _ = try await fixture.authorize()
            for (client, state) in [(OAuthFixture.confidentialClient, "st-123"), (OAuthFixture.publicClient, "other")] {
                do {
                    _ = try await fixture.complete(client: client, state: state, accountID: "acct-1")
                    Issue.record("completed with \(client) \(state)")
                } catch let error as GrantsError {
                    #expect(error.code == .invalidDownstreamState)
                }
            }
            clock.advance(by: 600)
            do {
                _ = try await fixture.complete(accountID: "acct-1")
                Issue.record("completed an expired authorization")
            } catch let error as GrantsError {
                #expect(error.code == .invalidDownstreamState)
            }
        }
    }

    @Test("the same state in another realm is a different authorization", arguments: Backend.allCases)
    func realmScoped(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            _ = try await fixture.authorize()
            let database = herald.application.services.database
            let grants = DownstreamAuthorizations(database: database, now: herald.application.services.now)
            await #expect(throws: GrantsError.self) {
                _ = try await database.write(isolation: .readCommitted) { db in
                    let client = try #require(try ClientAppStore.load(db, realmID: OAuthFixture.realm, clientID: OAuthFixture.publicClient))
                    return try grants.completeDownstream(in: db, realmID: "other", issuer: "x", client: client,
                                                         downstreamState: fixture.downstreamState(for: "st-123"), accountID: "a",
                                                         authTime: 0)
                }
            }
            _ = try await fixture.complete(accountID: "acct-1")
        }
    }

    /// Two consumers of one state under READ COMMITTED on PostgreSQL (native login's isolation),
    /// forced to overlap: the second UPDATE waits on the first one's row lock and then decides
    /// on the row as the first left it. SQLite has one writer, so it cannot interleave there.
    @Test("under READ COMMITTED a consumer waiting on another's row lock gets the state only if the other rolls back",
          arguments: [false, true])
    func singleUseUnderReadCommitted(firstCommits: Bool) async throws {
        try await RunningHerald.with(backend: .postgres) { herald in
            let fixture = try await OAuthFixture.make(herald)
            _ = try await fixture.authorize()
            let database = herald.application.services.database
            let grants = DownstreamAuthorizations(database: database, now: herald.application.services.now)
            let issuer = fixture.issuer
            let handle = fixture.downstreamState(for: "st-123")
            @Sendable func consume(_ db: any SQLExecutor) throws -> String {
                let client = try #require(try ClientAppStore.load(db, realmID: OAuthFixture.realm, clientID: OAuthFixture.publicClient))
                let completion = try grants.completeDownstream(in: db, realmID: OAuthFixture.realm, issuer: issuer,
                                                               client: client, downstreamState: handle,
                                                               accountID: "acct-1", authTime: 0)
                return completion.redirectURI
            }
            struct Undo: Error {}
            let consumed = Atomic<Bool>(false)
            let release = DispatchSemaphore(value: 0)
            // The first transaction consumes the state and holds its row lock until released
            // (blocking the database's own connection thread, not the cooperative pool).
            let first = Task {
                try await database.write(isolation: .readCommitted) { db -> String in
                    let redirect = try consume(db)
                    consumed.store(true, ordering: .sequentiallyConsistent)
                    // Bounded, so a failing test cannot hang the database's close.
                    _ = release.wait(timeout: .now() + 30)
                    if !firstCommits { throw Undo() }
                    return redirect
                }
            }
            try await Self.poll("the first transaction consumed the state") { consumed.load(ordering: .sequentiallyConsistent) }
            let second = Task { try await database.write(isolation: .readCommitted) { db in try consume(db) } }
            try await Self.poll("the second transaction waits on the row lock") {
                try await database.read { db in try db.queryOne("""
                    SELECT COUNT(*) AS n FROM pg_locks
                    WHERE NOT granted AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())
                    """)?.int("n") } ?? 0 > 0
            }
            release.signal()

            let firstResult = await first.result
            let secondResult = await second.result
            if firstCommits {
                #expect(try firstResult.get().contains("code=ac_"))
                #expect(throws: GrantsError(.invalidDownstreamState, "No pending authorization matches this downstream state")) {
                    try secondResult.get()
                }
            } else {
                #expect(throws: Undo.self) { try firstResult.get() }
                #expect(try secondResult.get().contains("code=ac_"))
            }
            let codes = try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM authorization_codes")?.int("n") }
            #expect(codes == 1)
        }
    }

    /// Waits until `condition` holds, failing after 10 s.
    static func poll(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestClientError("timed out: \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

@Suite("OAuth: discovery")
struct OAuthDiscoveryTests {
    @Test("the openid-configuration names the realm's endpoints, S256, the realm's algorithm and iss support", arguments: Backend.allCases)
    func document(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme", ["signingAlgorithm": "RS256"])
            let response = try await herald.request("GET", "/api/oauth/acme/.well-known/openid-configuration")
            #expect(response.status == 200)
            let document = response.json
            let issuer = herald.application.services.issuers.issuer(realmID: "acme")
            #expect(issuer.hasSuffix("/api/oauth/acme"))
            #expect(document["issuer"]?.stringValue == issuer)
            #expect(document["authorization_endpoint"]?.stringValue == issuer + "/authorize")
            #expect(document["token_endpoint"]?.stringValue == issuer + "/token")
            #expect(document["userinfo_endpoint"]?.stringValue == issuer + "/userinfo")
            #expect(document["revocation_endpoint"]?.stringValue == issuer + "/revoke")
            #expect(document["introspection_endpoint"]?.stringValue == issuer + "/introspect")
            #expect(document["jwks_uri"]?.stringValue == issuer + "/jwks.json")
            #expect(document["response_types_supported"] == ["code"])
            #expect(document["grant_types_supported"] == ["authorization_code", "refresh_token"])
            #expect(document["code_challenge_methods_supported"] == ["S256"])
            #expect(document["subject_types_supported"] == ["public"])
            #expect(document["id_token_signing_alg_values_supported"] == ["RS256"])
            #expect(document["token_endpoint_auth_methods_supported"] == ["client_secret_basic", "client_secret_post", "none"])
            #expect(document["authorization_response_iss_parameter_supported"] == true)
            #expect(document["scopes_supported"]?.arrayValue?.contains("openid") == true)
            #expect(document["claims_supported"]?.arrayValue?.contains("email_verified") == true)
        }
    }
}

@Suite("OAuth: discovery follows the published keys")
struct OAuthDiscoveryAlgorithmTests {
    static func discovery(_ herald: RunningHerald) async throws -> [String: JSONValue] {
        let response = try await herald.request("GET", "/api/oauth/acme/.well-known/openid-configuration")
        #expect(response.status == 200)
        return response.json
    }

    /// The `alg` of every key in the realm's jwks.json, in its order.
    static func publishedAlgorithms(_ herald: RunningHerald) async throws -> [String] {
        let response = try await herald.request("GET", "/api/oauth/acme/jwks.json")
        return response.json["keys"]?.arrayValue?.compactMap { $0["alg"]?.stringValue } ?? []
    }

    /// A verifier that trusts discovery must accept tokens of the retired key while jwks.json
    /// still publishes it, and stop listing its algorithm once it is gone.
    @Test("after signingAlgorithm changes, discovery lists the new and the retired key's algorithms until the old key is unpublished")
    func listsEveryPublishedAlgorithm() async throws {
        let clock = TestClock()
        try await RunningHerald.with(now: clock.closure) { herald in
            try await herald.createRealm("acme", ["signingAlgorithm": "ES256"])
            #expect(try await Self.discovery(herald)["id_token_signing_alg_values_supported"] == ["ES256"])

            let patched = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["signingAlgorithm": "EdDSA"])
            #expect(patched.status == 200)
            #expect(try await Self.discovery(herald)["id_token_signing_alg_values_supported"] == ["EdDSA", "ES256"])
            #expect(try await Self.publishedAlgorithms(herald) == ["EdDSA", "ES256"])

            // Past the retired key's publishUntil (TTLs + leeway, well under a day) it leaves both.
            clock.advance(by: 86_400)
            #expect(try await Self.publishedAlgorithms(herald) == ["EdDSA"])
            #expect(try await Self.discovery(herald)["id_token_signing_alg_values_supported"] == ["EdDSA"])
        }
    }

    @Test("claims_supported names every claim userinfo can return, given_name and family_name included")
    func claimsCoverUserinfo() async throws {
        try await RunningHerald.with { herald in
            try await herald.createRealm("acme")
            let claims = Set(try await Self.discovery(herald)["claims_supported"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(claims.isSuperset(of: ["given_name", "family_name", "name", "picture", "email", "email_verified", "sub"]))
            // The Userinfo schema is what the endpoint answers (schemathesis checks that); every
            // property it can hold must be advertised.
            let spec = try OpenAPIDocumentTests.spec()
            let userinfo = spec["components"]?["schemas"]?["Userinfo"]?["properties"]?.pairs?.map(\.key) ?? []
            #expect(!userinfo.isEmpty)
            #expect(Set(userinfo).subtracting(claims).sorted() == [])
        }
    }
}
