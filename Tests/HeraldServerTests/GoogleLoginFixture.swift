import Foundation
import HeraldTestSupport
import JOSE
@testable import HeraldServer

/// Google's fake keys, shared by every Google login test (RSA generation is slow).
let fakeGoogleKeys: FakeGoogleKeys = try! FakeGoogleKeys()

/// ``NativeLoginFixture``'s realm `acme` with, beside Apple, a fake Google JWKS server on
/// loopback and the realm's Google provider enabled for the minter's default client id.
final class GoogleLoginFixture: Sendable {
    static let clientID = GoogleTokenMinter.defaultClientID

    let base: NativeLoginFixture
    let google: FakeJWKSServer

    /// Starts everything on `backend`; `provider` is the Google provider's body (nil: none).
    static func with<T>(backend: Backend = .sqlite, realmFields: [String: JSONValue] = [:], clock: TestClock? = nil,
                        provider: [String: JSONValue]? = ["enabled": true, "clientIds": [.string(clientID)]],
                        _ body: (GoogleLoginFixture) async throws -> T) async throws -> T {
        let google = try FakeJWKSServer(document: fakeGoogleKeys.document)
        defer { google.stop() }
        return try await NativeLoginFixture.with(backend: backend, realmFields: realmFields, clock: clock,
                                                 configure: { $0.googleJWKSURL = google.url.absoluteString }) { base in
            if let provider {
                try expectStatus(200, await base.admin("PUT", "/api/admin/realms/acme/providers/google",
                                                       json: .object(provider)))
            }
            return try await body(GoogleLoginFixture(base: base, google: google))
        }
    }

    init(base: NativeLoginFixture, google: FakeJWKSServer) {
        self.base = base
        self.google = google
    }

    var minter: GoogleTokenMinter { GoogleTokenMinter(keys: fakeGoogleKeys, now: base.clock?.now ?? Date()) }

    /// A valid Google ID token for `subject` carrying `nonce` verbatim, changed by `customize`.
    func token(subject: String = GoogleTokenMinter.defaultSubject, nonce: String, email: String? = "ada@example.com",
               emailVerified: Bool = true, _ customize: (inout AppleTokenSpec) -> Void = { _ in }) -> String {
        minter.token { spec in
            spec.claims["sub"] = .string(subject)
            spec.claims["nonce"] = .string(nonce)
            spec.claims["email"] = email.map { .string($0) }
            spec.claims["email_verified"] = email == nil ? nil : .bool(emailVerified)
            customize(&spec)
        }
    }

    /// POSTs a Google native-login request.
    func login(token: String, nonce: String?, clientID: String = NativeLoginFixture.firstParty,
               extra: [String: JSONValue] = [:]) async throws -> TestHTTPClient.Response {
        var body: [String: JSONValue] = ["idToken": .string(token), "clientId": .string(clientID)]
        if let nonce { body["nonce"] = .string(nonce) }
        for (key, value) in extra { body[key] = value }
        return try await base.send("POST", "/api/oauth/acme/google/native-login", json: .object(body))
    }

    /// A successful first-party Google login with a token changed by `customize`; returns the response JSON.
    @discardableResult
    func loginOK(subject: String = GoogleTokenMinter.defaultSubject, email: String? = "ada@example.com",
                 emailVerified: Bool = true, _ customize: (inout AppleTokenSpec) -> Void = { _ in }) async throws
        -> [String: JSONValue] {
        let nonce = base.freshNonce()
        let response = try await login(token: token(subject: subject, nonce: nonce, email: email,
                                                    emailVerified: emailVerified, customize), nonce: nonce)
        guard response.status == 200 else { throw TestClientError("google login: \(response.status) \(response.text)") }
        return response.json
    }
}
