import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Branch A commits the replay claim, the account resolution and the session in one write
/// transaction: a login refused after its token was claimed leaves no account or session
/// behind, yet its token stays consumed.
@Suite("Apple native login, one transaction")
struct NativeLoginAtomicityTests {
    @Test("a new user whose session cannot start (no active signing key) gets no account, and the token stays used",
          arguments: Backend.allCases)
    func sessionFailureUndoesTheAccountButKeepsTheClaim(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let database = fixture.herald.application.context.database
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
            let database = fixture.herald.application.context.database
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
            let database = fixture.herald.application.context.database
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

    struct Counts: Equatable {
        var accounts: Int64
        var identities: Int64
        var sessions: Int64
        var refreshTokens: Int64
    }

    static func counts(_ database: any Database) async throws -> Counts {
        try await database.read { db in
            func count(_ table: String) throws -> Int64 { try db.queryOne("SELECT COUNT(*) AS n FROM \(table)")?.int("n") ?? -1 }
            return Counts(accounts: try count("accounts"), identities: try count("identities"),
                          sessions: try count("sessions"), refreshTokens: try count("refresh_tokens"))
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
