import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Login
import Realms
import Storage
import TokenIssuer

/// A migrated database with realm `acme` (a signing key, the realm's policies as given) and its
/// clients, and the login pipeline over the stub provider, wired as the server wires Apple's:
/// - `app`: public first-party (branch A);
/// - `backend-app`: confidential first-party (tokens only at /token);
/// - `partner`: third party with a redirect URI (branch B);
/// - `retired-app`: first-party but disabled.
struct LoginFixture {
    static let realmID = "acme"
    static let partnerRedirectURI = "https://partner.example/callback"
    static let clientIP = "192.0.2.7"

    let fresh: FreshDatabase
    let clock = TestClock()
    let identities = StubIdentityProvider()
    let issuers = RealmIssuers(publicURL: "https://id.example")
    let login: IdentityTokenLogin<StubVerifier>
    let sessions: SessionStore
    let downstream: DownstreamAuthorizations
    let partner: ClientApp

    init(_ backend: Backend, realm changes: RealmChanges = RealmChanges()) async throws {
        fresh = try await FreshDatabase(backend, migrations: RealmsSchema.migrations + TokenIssuerSchema.migrations
            + LoginAttemptLimiter.migrations + GrantsSchema.migrations + StubIdentityProvider.migrations)
        let database = fresh.database, now = clock.closure
        let masterKey = MasterKey.generate()
        let ring = SigningKeyRing(database: database, masterKey: masterKey, now: now)
        let key = try ring.prepareKey(realmID: Self.realmID, algorithm: .es256)
        _ = try await RealmStore(database: database, now: now)
            .create(id: Self.realmID, changes: changes, context: ChangeContext(actor: "test")) { db, _ in
                try ring.activate(key, in: db)
            }
        let clients = ClientAppStore(database: database, sessionRevoker: SessionRevoker(now: now), now: now)
        for (id, changes) in [
            ("app", ClientAppChanges(name: "App", firstParty: true)),
            ("backend-app", ClientAppChanges(name: "Backend", firstParty: true, confidential: true)),
            ("retired-app", ClientAppChanges(name: "Retired", firstParty: true, enabled: false)),
        ] {
            _ = try await clients.create(realmID: Self.realmID, clientID: id, changes: changes,
                                         context: ChangeContext(actor: "test"))
        }
        partner = try await clients.create(realmID: Self.realmID, clientID: "partner",
                                           changes: ClientAppChanges(name: "Partner", redirectUris: [Self.partnerRedirectURI]),
                                           context: ChangeContext(actor: "test")).client
        sessions = SessionStore(database: database, signer: TokenSigner(masterKey: masterKey, issuers: issuers), now: now)
        downstream = DownstreamAuthorizations(database: database, now: now)
        login = IdentityTokenLogin(database: database, verifier: StubVerifier(identities: identities), sessions: sessions,
                                   issuers: issuers, limiter: LoginAttemptLimiter(database: database, now: now),
                                   downstream: downstream, now: now)
    }

    var database: any Database { fresh.database }

    /// A login of `token` by `clientID`, branch B when `downstreamState` is given.
    func request(_ token: String, clientID: String = "app", downstreamState: String? = nil,
                 realmID: String = LoginFixture.realmID) -> LoginRequest {
        LoginRequest(realmID: realmID, identityToken: token, clientID: clientID, rawNonce: nil,
                     downstreamState: downstreamState, clientIP: Self.clientIP)
    }

    /// The login's refusal of `request`, or nil when it succeeded.
    func refusal(of request: LoginRequest) async -> LoginError? {
        do {
            _ = try await login.login(request)
            return nil
        } catch {
            return error
        }
    }

    /// A pending authorization of `partner` with the backend's `state`, as /authorize records
    /// it; returns its downstream state handle.
    func pendingAuthorization(state: String) async throws -> String {
        let parameters: [(name: String, value: String)] = [
            ("response_type", "code"), ("client_id", "partner"), ("redirect_uri", Self.partnerRedirectURI),
            ("state", state), ("code_challenge", PKCE.challenge(for: String(repeating: "v", count: 43))),
            ("code_challenge_method", "S256"),
        ]
        let partner = self.partner
        guard case .accepted(let request) = try await AuthorizationRequest.validate(parameters, client: { _ in partner })
        else { throw LoginFixtureError.authorizationRefused }
        guard case .pending(let pending) = try await downstream.begin(realmID: Self.realmID, request) else {
            throw LoginFixtureError.authorizationRefused
        }
        return pending.downstreamState
    }

    /// Whether the authorization of `downstreamState` still waits for its login.
    func isPending(_ downstreamState: String) async throws -> Bool {
        let at = clock.now.unixSeconds
        return try await database.read { db in
            try DownstreamAuthorizations.isPending(db, realmID: Self.realmID, clientID: "partner",
                                                   downstreamState: downstreamState, at: at)
        }
    }

    /// The account (and client) the stored authorization code `code` was issued for.
    func codeHolder(_ code: String) async throws -> (accountID: String, clientID: String)? {
        try await database.read { db in
            try db.queryOne("SELECT account_id, client_id FROM authorization_codes WHERE code_hash = ?",
                            .blob(SHA256.hash(Array(code.utf8))))
                .map { (try $0.string("account_id"), try $0.string("client_id")) }
        }
    }

    /// The account linked to the stub identity `subject`.
    func account(subject: String) async throws -> Account? {
        try await database.read { db in
            try AccountStore.load(db, realmID: Self.realmID, provider: StubVerifier.provider, openID: subject)
        }
    }

    /// How many accounts the realm has.
    func accountCount() async throws -> Int {
        try await database.read { db in try db.query("SELECT id FROM accounts WHERE realm_id = ?", .text(Self.realmID)).count }
    }

    /// Failed attempts counted against the realm's limit, over all windows and client keys.
    func countedFailures() async throws -> Int64 {
        try await database.read { db in
            try db.query("SELECT failures FROM login_failures WHERE realm_id = ?", .text(Self.realmID))
                .reduce(0) { $0 + (try $1.int("failures")) }
        }
    }

    /// The realm's security events of `type`, newest first.
    func events(_ type: SecurityEventType) async throws -> [SecurityEvent] {
        try await SecurityEventLog(database: database).list(realmID: Self.realmID, type: type).items
    }

    /// Accounts: create one by hand, or disable one.
    var accounts: AccountStore {
        AccountStore(database: database, sessionRevoker: SessionRevoker(now: clock.closure), deletionHook: nil,
                     now: clock.closure)
    }

    /// The redirect URI's query parameters.
    static func queryParameters(_ uri: String) -> [String: String] {
        guard let query = URLComponents(string: uri)?.queryItems else { return [:] }
        return Dictionary(query.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }
}

/// The fixture could not set up what a test asked for.
enum LoginFixtureError: Error {
    case authorizationRefused
}
