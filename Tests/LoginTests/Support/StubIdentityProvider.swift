import Login
import Realms
import Storage
import Synchronization

/// A provider for in-process login tests: every token answers what the test scripted for it
/// (verified as someone, refused with a reason, too large, or the provider unavailable), so
/// `IdentityTokenLogin`'s branches, refusals and retries run without keys or HTTP. A token
/// nobody scripted is refused as `unknown_token`.
final class StubIdentityProvider: Sendable {
    /// The audience every verified token matched, unless the test says otherwise.
    static let audience = "com.example.stub.app"

    /// The stub's single-use marks live in a table of their own (no module's), as a provider's do.
    static let migrations = [
        Migration(module: "login_tests_stub", version: 1, name: "stub token replays", statements: [
            "CREATE TABLE stub_token_replays (token TEXT PRIMARY KEY)",
        ]),
    ]

    private let answers = Mutex<[String: IdentityVerification]>([:])
    private let verifications = Mutex(0)

    /// `token` verifies as `subject` (with `email`), matching `audience`; single-use.
    func verifies(_ token: String, subject: String, email: String? = nil, emailVerified: Bool = false,
                  audience: String = StubIdentityProvider.audience) {
        let claims = ProviderIdentityClaims(provider: StubVerifier.provider, subject: subject, email: email,
                                            emailVerified: emailVerified, isPrivateEmail: false)
        script(token, .verified(claims, audience: audience, replay: StubReplayClaim(token: token)))
    }

    /// `token` is refused by the check named `reason`.
    func refuses(_ token: String, reason: String) { script(token, .rejected(reason: reason)) }

    /// `token` is over the provider's own limit.
    func findsTooLarge(_ token: String) { script(token, .tooLarge) }

    /// The provider's keys cannot be had for `token`.
    func isUnavailable(for token: String, retryAfterSeconds: Int) {
        script(token, .unavailable(retryAfterSeconds: retryAfterSeconds))
    }

    /// How many tokens were handed to the verifier so far.
    var verificationCount: Int { verifications.withLock { $0 } }

    fileprivate func answer(for token: String) -> IdentityVerification {
        verifications.withLock { $0 += 1 }
        return answers.withLock { $0[token] } ?? .rejected(reason: "unknown_token")
    }

    private func script(_ token: String, _ answer: IdentityVerification) {
        answers.withLock { $0[token] = answer }
    }
}

/// The stub provider's `IdentityTokenVerifier`: always configured, answers as scripted.
struct StubVerifier: IdentityTokenVerifier {
    /// The realm's settings of the stub provider: there are none to read.
    struct Configuration: Sendable {}

    static let provider = "stub"
    static let maximumTokenBytes = 256

    let identities: StubIdentityProvider

    func enabledConfiguration(_ db: any SQLExecutor, realm: Realm) throws -> Configuration? { Configuration() }

    func verify(token: String, rawNonce: String?, realm: Realm, configuration: Configuration) async
        -> IdentityVerification {
        identities.answer(for: token)
    }
}

/// A scripted token's single-use mark, recorded by the login's write transaction.
struct StubReplayClaim: ReplayClaim {
    let token: String

    func record(in db: any SQLExecutor) throws -> Bool {
        try db.execute("INSERT INTO stub_token_replays (token) VALUES (?) ON CONFLICT (token) DO NOTHING", .text(token)) > 0
    }

    /// As Apple's claim: one statement, sent with the login's first reads.
    var statement: (sql: String, parameters: [SQLValue])? {
        ("INSERT INTO stub_token_replays (token) VALUES (?) ON CONFLICT (token) DO NOTHING RETURNING token", [.text(token)])
    }

    func isRecorded(in db: any SQLExecutor) throws -> Bool {
        try db.queryOne("SELECT 1 AS used FROM stub_token_replays WHERE token = ?", .text(token)) != nil
    }
}
