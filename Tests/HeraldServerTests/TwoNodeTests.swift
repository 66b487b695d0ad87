import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Issue #9: every guarantee Herald makes on one node holds across nodes, because everything
/// that decides an answer lives in PostgreSQL (sessions, codes, pending authorizations, the
/// replay store, rate-limit windows, configuration, signing keys), never in node memory.
@Suite("Two nodes on one PostgreSQL")
struct TwoNodeTests {
    @Test("a login on node A refreshes on node B, and each node accepts the other's access tokens")
    func loginOnARefreshOnB() async throws {
        try await TwoNodeFixture.with { nodes in
            let login = try await nodes.a.loginOK()
            #expect(try await nodes.b.me(login["accessToken"]?.stringValue).status == 200)
            let refreshed = try await nodes.b.refresh(login["refreshToken"]?.stringValue ?? "")
            try expectStatus(200, refreshed)
            #expect(try await nodes.a.me(refreshed.string("accessToken")).status == 200)
            // The rotated-out token is reuse on either node.
            #expect(try await nodes.a.refresh(login["refreshToken"]?.stringValue ?? "").code == "refresh_token_revoked")
            #expect(try await nodes.b.refresh(refreshed.string("refreshToken")).code == "refresh_token_revoked")
        }
    }

    @Test("one refresh token presented 20 times at once, split across both nodes: exactly one 200, the family revoked on both")
    func concurrentRefreshAcrossNodes() async throws {
        try await TwoNodeFixture.with { nodes in
            let token = try await nodes.a.loginOK()["refreshToken"]?.stringValue ?? ""
            let fixtures = nodes.nodes
            let results = await concurrently(20) { index in try fixtures[index % 2].refreshBlocking(token) }
            let responses = try results.map { try $0.get() }
            let statuses = responses.map(\.status)
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(responses.filter { $0.status != 200 }.allSatisfy { $0.status == 401 && $0.code == "refresh_token_revoked" },
                    "\(responses.map { "\($0.status) \($0.code ?? "-")" })")
            let winner = try #require(responses.first { $0.status == 200 })
            for node in nodes.nodes {
                #expect(try await node.refresh(winner.string("refreshToken")).code == "refresh_token_revoked")
                #expect(try await node.me(winner.string("accessToken")).code == "token_revoked")
            }
            let state = try await nodes.b.herald.application.services.database.read { db in
                (try db.query("SELECT revoke_reason FROM sessions").map { try $0.optionalString("revoke_reason") },
                 try db.queryOne("SELECT COUNT(*) AS n FROM refresh_tokens")?.int("n"))
            }
            #expect(state.0 == ["reuse"])
            #expect(state.1 == 2, "the presented token and exactly one replacement")
        }
    }

    @Test("an authorization started on node A completes through node B, and its code is exchanged on node A once")
    func thirdPartyFlowAcrossNodes() async throws {
        try await TwoNodeFixture.with(realmFields: ["loginUrl": .string(OAuthFixture.loginURL)]) { nodes in
            try expectStatus(201, await nodes.a.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": .string(OAuthFixture.publicClient), "name": "SPA", "confidential": false,
                "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
            ]))
            let onA = OAuthFixture(herald: nodes.a.herald, secret: "", otherSecret: "")
            try expectStatus(200, await onA.authorize(state: "flow-2n", json: true))
            let handle = onA.downstreamState(for: "flow-2n")

            let nonce = nodes.b.freshNonce()
            let login = try await nodes.b.login(token: nodes.b.token(subject: "sub.two.nodes", nonce: nonce), nonce: nonce,
                                                clientID: OAuthFixture.publicClient,
                                                extra: ["downstreamState": .string(handle)])
            try expectStatus(200, login)
            let code = try #require(queryParameters(login.string("redirectUri"))["code"])

            let tokens = try await onA.exchange(code)
            try expectStatus(200, tokens)
            let claims = try await onA.verifiedClaims(tokens.string("id_token"))
            #expect(claims["nonce"] == "n-0S6_WzA2Mj")
            // Single use holds across nodes: B refuses the code A already redeemed.
            let again = try await OAuthFixture(herald: nodes.b.herald, secret: "", otherSecret: "").exchange(code)
            #expect(again.status == 400)
            #expect(again.json["error"] == "invalid_grant")
            // The pending authorization was consumed too: its state cannot complete twice.
            let nonce2 = nodes.a.freshNonce()
            let replayedState = try await nodes.a.login(token: nodes.a.token(subject: "sub.two.nodes", nonce: nonce2),
                                                        nonce: nonce2, clientID: OAuthFixture.publicClient,
                                                        extra: ["downstreamState": .string(handle)])
            #expect(replayedState.code == "invalid_downstream_state", "\(replayedState.status) \(replayedState.text)")
        }
    }

    @Test("failed logins spread over both nodes count against one rate limit")
    func sharedRateLimit() async throws {
        try await TwoNodeFixture.with(realmFields: ["rateLimit": ["failuresPerWindow": 4, "windowSeconds": 300]],
                                      clock: NativeLoginFixture.clockInsideOneWindow()) { nodes in
            for attempt in 0..<4 {
                let node = nodes.nodes[attempt % 2]
                let nonce = node.freshNonce()
                let bad = try await node.login(token: node.token(nonce: nonce) { $0.claims["aud"] = "com.other.app" }, nonce: nonce)
                #expect(bad.status == 401)
            }
            for node in nodes.nodes {
                let nonce = node.freshNonce()
                let limited = try await node.login(token: node.token(nonce: nonce), nonce: nonce)
                #expect(limited.status == 429)
                #expect(limited.code == "rate_limited")
            }
        }
    }

    @Test("an Apple identity token accepted by node A is refused as a replay by node B")
    func replayRefusedByTheOtherNode() async throws {
        try await TwoNodeFixture.with { nodes in
            let nonce = nodes.a.freshNonce()
            let token = nodes.a.token(nonce: nonce)
            try expectStatus(200, await nodes.a.login(token: token, nonce: nonce))
            let replay = try await nodes.b.login(token: token, nonce: nonce)
            #expect(replay.status == 401)
            #expect(replay.json["details"]?["reason"] == "replayed")
        }
    }

    @Test("a client disabled through node A is refused by node B at once (its remembered settings are checked in the write)")
    func clientDisabledOnAIsRefusedByB() async throws {
        try await TwoNodeFixture.with { nodes in
            let before = try await nodes.b.loginOK()
            try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme/clients/\(NativeLoginFixture.firstParty)",
                                                      json: ["enabled": false]))
            // The staleness bound is zero: no wait, no retry, though B remembered the client.
            let nonce = nodes.b.freshNonce()
            let login = try await nodes.b.login(token: nodes.b.token(nonce: nonce), nonce: nonce)
            #expect(login.status == 400)
            #expect(login.json["details"]?["fields"]?["clientId"] != nil)
            let refresh = try await nodes.b.refresh(before["refreshToken"]?.stringValue ?? "")
            #expect(refresh.status == 401)
        }
    }

    @Test("an audience added through node A is accepted by node B at once, and refused at once when removed again")
    func audienceChangedOnAIsObeyedByB() async throws {
        try await TwoNodeFixture.with { nodes in
            // B remembers the realm's settings from this login.
            try await nodes.b.loginOK()
            func provider(_ audiences: [String]) async throws {
                try expectStatus(200, await nodes.a.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                    "enabled": true, "clientId": "com.example.herald.web", "audiences": .array(audiences.map(JSONValue.string)),
                ]))
            }
            func loginOnB(audience: String) async throws -> TestHTTPClient.Response {
                let nonce = nodes.b.freshNonce()
                return try await nodes.b.login(token: nodes.b.token(nonce: nonce) { $0.claims["aud"] = .string(audience) },
                                               nonce: nonce)
            }
            try await provider([AppleTokenMinter.defaultAudience, "com.example.second.app"])
            try expectStatus(200, await loginOnB(audience: "com.example.second.app"))
            try await provider([AppleTokenMinter.defaultAudience])
            let refused = try await loginOnB(audience: "com.example.second.app")
            #expect(refused.status == 401, "\(refused.status) \(refused.text)")
            try expectStatus(200, await loginOnB(audience: AppleTokenMinter.defaultAudience))
        }
    }

    @Test("a realm disabled through node A is not found on node B at once, and serves again once re-enabled")
    func realmDisabledOnAIsObeyedByB() async throws {
        try await TwoNodeFixture.with { nodes in
            try await nodes.b.loginOK()
            try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false]))
            let nonce = nodes.b.freshNonce()
            let login = try await nodes.b.login(token: nodes.b.token(nonce: nonce), nonce: nonce)
            #expect(login.status == 404, "\(login.status) \(login.text)")
            try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": true]))
            try await nodes.b.loginOK()
        }
    }

    @Test("refreshes on node B start from its remembered realm and client, yet obey at once a secret rotated and a realm disabled through node A")
    func rememberedRefreshSettingsAreCheckedInTheWrite() async throws {
        try await TwoNodeFixture.with(realmFields: ["loginUrl": .string(OAuthFixture.loginURL)]) { nodes in
            let created = try await nodes.a.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": .string(OAuthFixture.confidentialClient), "name": "Backend", "confidential": true,
                "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
            ])
            try expectStatus(201, created)
            let secret = created.string("clientSecret")
            let onA = OAuthFixture(herald: nodes.a.herald, secret: secret, otherSecret: "")
            let onB = OAuthFixture(herald: nodes.b.herald, secret: secret, otherSecret: "")
            let code = try await onA.code(client: OAuthFixture.confidentialClient, accountID: try await onA.account())
            let exchanged = try await onB.exchange(code, basic: (OAuthFixture.confidentialClient, secret))
            try expectStatus(200, exchanged)
            func refreshOnB(_ token: String, secret: String) async throws -> TestHTTPClient.Response {
                try await onB.post("token", [("grant_type", "refresh_token"), ("refresh_token", token)],
                                   basic: (OAuthFixture.confidentialClient, secret))
            }
            // Twice: the second starts from what B remembered of the first.
            var refreshed = try await refreshOnB(exchanged.string("refresh_token"), secret: secret)
            try expectStatus(200, refreshed)
            refreshed = try await refreshOnB(refreshed.string("refresh_token"), secret: secret)
            try expectStatus(200, refreshed)

            let rotated = try await nodes.a.admin("POST", "/api/admin/realms/acme/clients/\(OAuthFixture.confidentialClient)/secret")
            try expectStatus(200, rotated)
            let oldSecret = try await refreshOnB(refreshed.string("refresh_token"), secret: secret)
            #expect(oldSecret.status == 401, "\(oldSecret.status) \(oldSecret.text)")
            #expect(oldSecret.json["error"] == "invalid_client")
            refreshed = try await refreshOnB(refreshed.string("refresh_token"), secret: rotated.string("clientSecret"))
            try expectStatus(200, refreshed)

            // The session API's refresh too: B remembers the realm, A disables it.
            let login = try await nodes.a.loginOK()
            try expectStatus(200, await nodes.b.refresh(login["refreshToken"]?.stringValue ?? ""))
            try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false]))
            let session = try await nodes.b.refresh(login["refreshToken"]?.stringValue ?? "")
            #expect(session.status == 404, "\(session.status) \(session.text)")
            let token = try await refreshOnB(refreshed.string("refresh_token"), secret: rotated.string("clientSecret"))
            #expect(token.status == 404, "\(token.status) \(token.text)")
        }
    }

    @Test("code exchanges on node B start from its remembered realm and client, yet obey at once a secret rotated and a realm disabled through node A; the refused exchange leaves its code unburnt")
    func rememberedCodeExchangeSettingsAreCheckedInTheWrite() async throws {
        try await TwoNodeFixture.with(realmFields: ["loginUrl": .string(OAuthFixture.loginURL)]) { nodes in
            let client = OAuthFixture.confidentialClient
            let created = try await nodes.a.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": .string(client), "name": "Backend", "confidential": true,
                "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
            ])
            try expectStatus(201, created)
            let secret = created.string("clientSecret")
            let onA = OAuthFixture(herald: nodes.a.herald, secret: secret, otherSecret: "")
            let onB = OAuthFixture(herald: nodes.b.herald, secret: secret, otherSecret: "")
            let account = try await onA.account()
            // B remembers the realm and the client from its first exchange.
            try expectStatus(200, await onB.exchange(try await onA.code(client: client, accountID: account), basic: (client, secret)))

            let rotated = try await nodes.a.admin("POST", "/api/admin/realms/acme/clients/\(client)/secret")
            try expectStatus(200, rotated)
            let code = try await onA.code(client: client, accountID: account)
            let oldSecret = try await onB.exchange(code, basic: (client, secret))
            #expect(oldSecret.status == 401, "\(oldSecret.status) \(oldSecret.text)")
            #expect(oldSecret.json["error"] == "invalid_client")
            let newSecret = rotated.string("clientSecret")
            try expectStatus(200, await onB.exchange(code, basic: (client, newSecret)))

            try expectStatus(200, await onB.exchange(try await onA.code(client: client, accountID: account), basic: (client, newSecret)))
            let last = try await onA.code(client: client, accountID: account)
            try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false]))
            let disabled = try await onB.exchange(last, basic: (client, newSecret))
            #expect(disabled.status == 404, "\(disabled.status) \(disabled.text)")
        }
    }

    @Test("/authorize on node B starts from its remembered realm and client, yet obeys at once a redirect URI added and removed through node A")
    func rememberedAuthorizeSettingsAreObeyedAtOnce() async throws {
        try await TwoNodeFixture.with(realmFields: ["loginUrl": .string(OAuthFixture.loginURL)]) { nodes in
            let other = "https://app.example/other"
            try expectStatus(201, await nodes.a.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": .string(OAuthFixture.publicClient), "name": "SPA", "confidential": false,
                "redirectUris": [.string(OAuthFixture.redirect)], "allowedScopes": ["openid", "profile", "email"],
            ]))
            let onB = OAuthFixture(herald: nodes.b.herald, secret: "", otherSecret: "")
            // B remembers the realm and the client from this one.
            try expectStatus(200, await onB.authorize(state: "b-1", json: true))
            // Refused from memory, so decided again on what is stored: accepted at once.
            func setRedirects(_ uris: [String]) async throws {
                try expectStatus(200, await nodes.a.admin("PATCH", "/api/admin/realms/acme/clients/\(OAuthFixture.publicClient)",
                                                          json: ["redirectUris": .array(uris.map { .string($0) })]))
            }
            try await setRedirects([OAuthFixture.redirect, other])
            try expectStatus(200, await onB.authorize(state: "b-2", ["redirect_uri": other], json: true))
            // Accepted from memory, but the write finds the stamp changed: refused at once.
            try await setRedirects([OAuthFixture.redirect])
            let removed = try await onB.authorize(state: "b-3", ["redirect_uri": other], json: true)
            #expect(removed.status == 400, "\(removed.status) \(removed.text)")
            #expect(removed.json["error"] == "invalid_request")
            try expectStatus(200, await onB.authorize(state: "b-4", json: true))
        }
    }

    @Test("a key rotated on node A is in node B's JWKS before A signs with it, B accepts tokens signed with it and signs with it at once")
    func keyRotationVisibleOnB() async throws {
        try await TwoNodeFixture.with { nodes in
            // B signs once before the rotation, so it remembers the realm's key it then used.
            let before = try await nodes.b.loginOK()
            let rotated = try await nodes.a.admin("POST", "/api/admin/realms/acme/keys/rotate", reason: "two nodes")
            try expectStatus(201, rotated)
            let newKid = try #require(rotated.json["kid"]?.stringValue)
            let jwks = try await nodes.b.send("GET", "/api/oauth/acme/jwks.json")
            #expect(jwks.json["keys"]?.arrayValue?.contains { $0["kid"]?.stringValue == newKid } == true)

            let login = try await nodes.a.loginOK()
            let accessToken = try #require(login["accessToken"]?.stringValue)
            #expect(try CompactJWS(parsing: accessToken).header.kid == newKid)
            #expect(try await nodes.b.me(accessToken).status == 200)
            let onB = try await nodes.b.loginOK()
            #expect(try CompactJWS(parsing: try #require(onB["accessToken"]?.stringValue)).header.kid == newKid)
            let refreshedOnB = try await nodes.b.refresh(before["refreshToken"]?.stringValue ?? "")
            try expectStatus(200, refreshedOnB)
            #expect(try CompactJWS(parsing: refreshedOnB.string("accessToken")).header.kid == newKid)
        }
    }

    @Test("40 concurrent logins of new and then returning users, split across both nodes, all succeed")
    func concurrentLoginsAcrossNodes() async throws {
        try await TwoNodeFixture.with { nodes in
            let fixtures = nodes.nodes
            for round in ["new", "returning"] {
                let nonces = (0..<40).map { _ in nodes.a.freshNonce() }
                let tokens = (0..<40).map { index in
                    nodes.a.token(subject: "concurrent.\(index)", nonce: nonces[index], email: "c\(index)@example.com")
                }
                let results = await concurrently(40) { index in
                    try fixtures[index % 2].loginBlocking(token: tokens[index], nonce: nonces[index])
                }
                let statuses = try results.map { try $0.get().status }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(round): \(statuses)")
                let isNew = try results.map { try $0.get().json["isNewUser"]?.boolValue }
                #expect(isNew.allSatisfy { $0 == (round == "new") }, "\(round)")
            }
            let accounts = try await nodes.a.herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM accounts")?.int("n")
            }
            #expect(accounts == 40)
        }
    }

    @Test("twenty concurrent first logins of one person, split across both nodes, make exactly one account")
    func concurrentFirstLoginsOfOnePersonAcrossNodes() async throws {
        try await TwoNodeFixture.with { nodes in
            let fixtures = nodes.nodes
            let requests = (0..<20).map { _ -> (String, String) in
                let nonce = nodes.a.freshNonce()
                return (nodes.a.token(subject: "sub.race.2n", nonce: nonce, email: "race2n@example.com"), nonce)
            }
            let results = await concurrently(20) { index in
                try fixtures[index % 2].loginBlocking(token: requests[index].0, nonce: requests[index].1)
            }
            let responses = try results.map { try $0.get() }
            #expect(responses.allSatisfy { $0.status == 200 }, "\(responses.map(\.status))")
            #expect(Set(responses.map { $0.string("userId") }).count == 1)
            #expect(responses.filter { $0.json["isNewUser"] == true }.count == 1)
            let rows = try await nodes.b.herald.application.services.database.read { db in
                (try db.queryOne("SELECT COUNT(*) AS n FROM accounts")?.int("n"),
                 try db.query("SELECT account_id FROM identities").map { try $0.string("account_id") })
            }
            #expect(rows.0 == 1)
            #expect(rows.1 == [responses[0].string("userId")], "one identity, on the one account")
        }
    }
}

