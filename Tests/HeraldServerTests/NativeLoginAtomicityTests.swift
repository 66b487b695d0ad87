import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Native login commits the replay claim, the account resolution and branch A's session or
/// branch B's code in one write transaction: a login refused after its token was claimed
/// leaves no account, session or code behind, yet its token stays consumed.
@Suite("Apple native login, one transaction")
struct NativeLoginAtomicityTests {
    @Test("a new user whose session cannot start (no active signing key) gets no account, and the token stays used",
          arguments: Backend.allCases)
    func sessionFailureUndoesTheAccountButKeepsTheClaim(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let database = fixture.herald.application.services.database
            let before = try await Self.counts(database)
            // A realm without an active key: a real failure of the session start, after the
            // account resolution has already inserted the account and its identity.
            try await Self.setKeyStatus(database, from: "active", to: "retired")

            let nonce = fixture.freshNonce()
            let token = fixture.token(subject: "sub.atomic", nonce: nonce, email: "atomic@example.com")
            let failed = try await fixture.login(token: token, nonce: nonce)
            #expect(failed.status == 500)
            #expect(failed.code == "internal_error")
            #expect(try await Self.counts(database) == before)

            try await Self.setKeyStatus(database, from: "retired", to: "active")
            let replayed = try await fixture.login(token: token, nonce: nonce)
            #expect(replayed.status == 401)
            #expect(replayed.json["details"]?["reason"]?.stringValue == "replayed")
            #expect(try await Self.counts(database) == before)

            // The account was undone, not left half made: the next login of the subject creates it.
            let fresh = try await fixture.loginOK(subject: "sub.atomic", email: "atomic@example.com")
            #expect(fresh["isNewUser"] == true)
            let after = try await Self.counts(database)
            #expect(after.accounts == before.accounts + 1 && after.identities == before.identities + 1)
            #expect(after.sessions == before.sessions + 1)
        }
    }

    @Test("a login refused by realm policy (registration disabled) still consumes its token", arguments: Backend.allCases)
    func policyRefusalConsumesTheToken(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let database = fixture.herald.application.services.database
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme", json: ["registrationEnabled": false]))
            let before = try await Self.counts(database)
            let nonce = fixture.freshNonce()
            let token = fixture.token(subject: "sub.closed", nonce: nonce, email: "closed@example.com")
            let refused = try await fixture.login(token: token, nonce: nonce)
            #expect(refused.status == 409)
            #expect(refused.code == "registration_disabled")

            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme", json: ["registrationEnabled": true]))
            let replayed = try await fixture.login(token: token, nonce: nonce)
            #expect(replayed.status == 401)
            #expect(replayed.json["details"]?["reason"]?.stringValue == "replayed")
            #expect(try await Self.counts(database) == before)
        }
    }

    @Test("a disabled account's refused login consumes its token; the account and its sessions are untouched", arguments: Backend.allCases)
    func disabledAccountConsumesTheToken(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let database = fixture.herald.application.services.database
            let first = try await fixture.loginOK(subject: "sub.off")
            let id = first["userId"]?.stringValue ?? ""
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)",
                                                       json: ["status": "disabled"]))
            let before = try await Self.counts(database)
            let nonce = fixture.freshNonce()
            let token = fixture.token(subject: "sub.off", nonce: nonce)
            let refused = try await fixture.login(token: token, nonce: nonce)
            #expect(refused.status == 403)
            #expect(refused.code == "account_disabled")

            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)",
                                                       json: ["status": "active"]))
            let replayed = try await fixture.login(token: token, nonce: nonce)
            #expect(replayed.status == 401)
            #expect(replayed.json["details"]?["reason"]?.stringValue == "replayed")
            #expect(try await Self.counts(database) == before)
        }
    }

    // MARK: - Branch B

    @Test("a first login with an unknown, foreign or used downstream state creates no account and no code, and its token stays used",
          arguments: Backend.allCases)
    func refusedStateCreatesNoAccount(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let oauth = try await Self.thirdParty(fixture)
            let database = fixture.herald.application.services.database
            try expectStatus(200, await oauth.authorize(state: "st-used", json: true))
            try expectStatus(200, await Self.branchB(fixture, subject: "sub.first.user", state: oauth.downstreamState(for: "st-used")))
            try expectStatus(200, await oauth.authorize(state: "st-foreign", json: true))
            let before = try await Self.counts(database)

            for (index, (state, client)) in [("st-never-issued", OAuthFixture.publicClient),
                                             ("st-foreign", NativeLoginFixture.thirdParty),
                                             ("st-used", OAuthFixture.publicClient)].enumerated() {
                let subject = "sub.refused.\(index)"
                let nonce = fixture.freshNonce()
                let token = fixture.token(subject: subject, nonce: nonce, email: "refused\(index)@example.com")
                let refused = try await Self.branchB(fixture, token: token, nonce: nonce,
                                                     state: oauth.downstreamState(for: state), client: client)
                #expect(refused.status == 400, "\(state): \(refused.text)")
                #expect(refused.code == "invalid_downstream_state")
                #expect(try await Self.counts(database) == before, "\(state)")
                let listed = try await fixture.admin("GET", "/api/admin/realms/acme/accounts?email=refused\(index)%40example.com")
                #expect(listed.json["items"]?.arrayValue?.isEmpty == true, "\(state): \(listed.text)")

                // The token was seen: presenting it again (now for branch A) is a replay.
                let again = try await fixture.login(token: token, nonce: nonce)
                #expect(again.status == 401)
                #expect(again.json["details"]?["reason"]?.stringValue == "replayed")
            }
            // The refusal by another client did not consume the pending authorization.
            try expectStatus(200, await Self.branchB(fixture, subject: "sub.foreign.owner", state: oauth.downstreamState(for: "st-foreign")))
            #expect(try await Self.counts(database).codes == before.codes + 1)
        }
    }

    @Test("a returning user's login with an invalid downstream state fills neither a missing name nor email", arguments: Backend.allCases)
    func refusedStateLeavesAReturningAccountAsItWas(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let oauth = try await Self.thirdParty(fixture)
            let id = try #require(try await fixture.loginOK(subject: "sub.fill", email: nil)["userId"]?.stringValue)
            let fullName: JSONValue = ["givenName": "Grace", "familyName": "Hopper"]

            let refused = try await Self.branchB(fixture, subject: "sub.fill", email: "grace@example.com",
                                                 state: oauth.downstreamState(for: "st-unknown"), fullName: fullName)
            #expect(refused.status == 400)
            #expect(refused.code == "invalid_downstream_state")
            var account = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)")
            #expect(account.json["email"] == "sub.fill@apple.placeholder", "\(account.text)")
            #expect(account.json["name"]?["givenName"] ?? .null == .null, "\(account.text)")
            #expect(account.json["name"]?["familyName"] ?? .null == .null, "\(account.text)")

            // A valid state does fill them (so the refused one was undone, not ignored).
            try expectStatus(200, await oauth.authorize(state: "st-fill", json: true))
            let completed = try await Self.branchB(fixture, subject: "sub.fill", email: "grace@example.com",
                                                   state: oauth.downstreamState(for: "st-fill"), fullName: fullName)
            try expectStatus(200, completed)
            account = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)")
            #expect(account.json["email"] == "grace@example.com", "\(account.text)")
            #expect(account.json["name"]?["givenName"] == "Grace", "\(account.text)")
            #expect(account.json["name"]?["familyName"] == "Hopper", "\(account.text)")
        }
    }

    @Test("a valid downstream state completes in the login's transaction; its code exchanges once", arguments: Backend.allCases)
    func validStateCompletes(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let oauth = try await Self.thirdParty(fixture)
            let database = fixture.herald.application.services.database
            let before = try await Self.counts(database)
            try expectStatus(200, await oauth.authorize(state: "st-valid", json: true))
            let login = try await Self.branchB(fixture, subject: "sub.valid", state: oauth.downstreamState(for: "st-valid"))
            try expectStatus(200, login)
            let redirect = login.string("redirectUri")
            #expect(redirect.hasPrefix(OAuthFixture.redirect + "?code=ac_"))
            let parameters = queryParameters(redirect)
            #expect(parameters["state"] == "st-valid")
            #expect(parameters["iss"] == oauth.issuer)
            let after = try await Self.counts(database)
            #expect(after.accounts == before.accounts + 1 && after.codes == before.codes + 1)

            let code = try #require(parameters["code"])
            let tokens = try await oauth.exchange(code)
            try expectStatus(200, tokens)
            let claims = try await oauth.verifiedClaims(tokens.string("access_token"))
            let account = try await fixture.admin("GET", "/api/admin/realms/acme/accounts?email=someone%40example.com")
            #expect(claims["sub"] == account.json["items"]?.arrayValue?.first?["id"])
            let again = try await oauth.exchange(code)
            #expect(again.status == 400)
            #expect(again.json["error"] == "invalid_grant")
        }
    }

    @Test("concurrent first logins sharing one downstream state: one redirect with a code, one account; the others change nothing",
          arguments: Backend.allCases)
    func concurrentLoginsShareOneState(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let oauth = try await Self.thirdParty(fixture)
            let database = fixture.herald.application.services.database
            try expectStatus(200, await oauth.authorize(state: "st-race", json: true))
            let handle = oauth.downstreamState(for: "st-race")
            let before = try await Self.counts(database)
            let count = 8
            let requests = (0..<count).map { index in
                let nonce = fixture.freshNonce()
                return (fixture.token(subject: "sub.race.\(index)", nonce: nonce, email: "race\(index)@example.com"), nonce)
            }
            let results = await concurrently(count) { index in
                try fixture.loginBlocking(token: requests[index].0, nonce: requests[index].1, clientID: OAuthFixture.publicClient,
                                          extra: ["downstreamState": .string(handle)])
            }
            let responses = try results.map { try $0.get() }
            let winners = responses.filter { $0.status == 200 }
            #expect(winners.count == 1, "\(responses.map { "\($0.status) \($0.code ?? "")" })")
            #expect(responses.allSatisfy { $0.status == 200 || $0.code == "invalid_downstream_state" },
                    "\(responses.map { "\($0.status) \($0.code ?? "")" })")
            #expect(winners.allSatisfy { queryParameters($0.string("redirectUri"))["code"]?.hasPrefix("ac_") == true })
            let after = try await Self.counts(database)
            #expect(after.accounts == before.accounts + 1 && after.identities == before.identities + 1)
            #expect(after.codes == before.codes + 1)
        }
    }

    /// The third-party public client of `OAuthFixture` in the fixture's realm.
    static func thirdParty(_ fixture: NativeLoginFixture) async throws -> OAuthFixture {
        try expectStatus(201, await fixture.admin("POST", "/api/admin/realms/acme/clients", json: [
            "clientId": .string(OAuthFixture.publicClient), "name": "SPA", "confidential": false,
            "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
        ]))
        return OAuthFixture(herald: fixture.herald, secret: "", otherSecret: "")
    }

    /// A branch B native login of `subject` (a fresh token) presenting `state` as its downstream state.
    static func branchB(_ fixture: NativeLoginFixture, subject: String, email: String? = "someone@example.com",
                        state: String, client: String = OAuthFixture.publicClient,
                        fullName: JSONValue? = nil) async throws -> TestHTTPClient.Response {
        let nonce = fixture.freshNonce()
        return try await branchB(fixture, token: fixture.token(subject: subject, nonce: nonce, email: email), nonce: nonce,
                                 state: state, client: client, fullName: fullName)
    }

    /// A branch B native login with `token`.
    static func branchB(_ fixture: NativeLoginFixture, token: String, nonce: String, state: String,
                        client: String = OAuthFixture.publicClient,
                        fullName: JSONValue? = nil) async throws -> TestHTTPClient.Response {
        var extra: [String: JSONValue] = ["downstreamState": .string(state)]
        if let fullName { extra["fullName"] = fullName }
        return try await fixture.login(token: token, nonce: nonce, clientID: client, extra: extra)
    }

    struct Counts: Equatable {
        var accounts: Int64
        var identities: Int64
        var sessions: Int64
        var refreshTokens: Int64
        var codes: Int64
    }

    static func counts(_ database: any Database) async throws -> Counts {
        try await database.read { db in
            func count(_ table: String) throws -> Int64 { try db.queryOne("SELECT COUNT(*) AS n FROM \(table)")?.int("n") ?? -1 }
            return Counts(accounts: try count("accounts"), identities: try count("identities"),
                          sessions: try count("sessions"), refreshTokens: try count("refresh_tokens"),
                          codes: try count("authorization_codes"))
        }
    }

    static func setKeyStatus(_ database: any Database, from old: String, to new: String) async throws {
        let changed = try await database.write { db in
            try db.execute("UPDATE signing_keys SET status = ? WHERE realm_id = ? AND status = ?",
                           .text(new), .text(NativeLoginFixture.realm), .text(old))
        }
        #expect(changed == 1)
    }
}
