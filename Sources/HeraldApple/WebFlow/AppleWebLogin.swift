import Foundation
import Grants
import JOSE
import Login
import Realms
import Storage

/// Sign in with Apple in a browser or WebView (Android, HarmonyOS, mobile web), audience the
/// Services ID: `start` sends the browser to Apple with a server-side `state` and a nonce
/// Herald made, both bound to the browser that began; `complete` takes Apple's answer in that
/// browser (credentials come by `form_post`, a query carries only Apple's errors), exchanges
/// the code with a freshly signed client secret, and hands the ID token to the same login as
/// native apps (verification, replay, account resolution, branch A or B) — one pipeline, two doors.
public struct AppleWebLogin: Sendable {
    /// How Apple's answer ended.
    public enum Outcome: Sendable {
        case loggedIn(LoginResult, returnTo: String?)
        /// Apple reported an error (`user_cancelled_authorize` and others): a normal ending.
        case appleError(String, returnTo: String?)
        /// Unknown, used or expired `state`, or one another browser began.
        case invalidState
        /// The request carried no browser binding (a cookie blocked or lost): the state, if
        /// any, was not looked at.
        case noBrowserBinding
        /// The client no longer registers the `returnTo` the flow began with (an admin removed
        /// it, or the client is gone or disabled): nothing is handed to it.
        case returnToWithdrawn
        /// Neither `code` nor `id_token`.
        case missingCredentials(returnTo: String?)
        /// Apple's token endpoint could not be used (not configured, unreachable, refused).
        case exchangeFailed(AppleAPIFailure, returnTo: String?)
        case loginFailed(LoginError, returnTo: String?)
    }

    private let database: any Database
    private let states: WebSignInStates
    private let credentials: AppleCredentials
    private let apple: AppleAPIClient
    private let authorizeURL: URL
    private let login: IdentityTokenLogin<AppleIdentityVerifier>
    private let vault: AppleTokenVault
    private let now: @Sendable () -> Date

    public init(database: any Database, masterKey: MasterKey, apple: AppleAPIClient,
                login: IdentityTokenLogin<AppleIdentityVerifier>,
                vault: AppleTokenVault, now: @escaping @Sendable () -> Date) {
        self.database = database
        states = WebSignInStates(.apple, database: database, now: now)
        credentials = AppleCredentials(database: database, masterKey: masterKey, now: now)
        self.apple = apple
        authorizeURL = apple.baseURL.appendingPathComponent("auth/authorize")
        self.login = login
        self.vault = vault
        self.now = now
    }

    /// The URL of Apple's authorize page for this sign-in, begun by the browser holding
    /// `browserBinding`. Refusals throw `WebSignInStart.Refusal`.
    public func start(_ start: WebSignInStart, browserBinding: String) async throws -> URL {
        let provider = try await start.check(database, at: now().unixSeconds) { db, realm in
            // The web flow needs a Return URL registered with Apple.
            try AppleProviderStore.load(db, realmID: realm.id).flatMap { $0.enabled && !$0.returnUrls.isEmpty ? $0 : nil }
        }
        let redirectURI = provider.returnUrls[0]
        let nonce = SecureRandom.token(byteCount: 32)
        let state = try await states.begin(realmID: start.realmID, WebSignInStates.Pending(
            clientID: start.clientID, downstreamState: start.downstreamState, returnTo: start.returnTo, nonce: nonce),
            browserBinding: browserBinding)
        let query: [(String, String)] = [
            ("response_type", "code id_token"), ("response_mode", "form_post"),
            ("scope", provider.scopes.joined(separator: " ")), ("client_id", provider.clientId),
            ("redirect_uri", redirectURI), ("state", state), ("nonce", SHA256.hexDigest(nonce)),
        ]
        return URL(string: RedirectURI.appending(query, to: authorizeURL.absoluteString)) ?? authorizeURL
    }

    /// Completes the login Apple answered with `parameters` (the callback's form or query) in
    /// the browser holding `browserBinding`.
    public func complete(realmID: String, parameters: [String: String], browserBinding: String?,
                         clientIP: String) async throws -> Outcome {
        guard let browserBinding else { return .noBrowserBinding }
        guard InputRules.isSlug(realmID), let state = parameters["state"],
              let pending = try await states.take(realmID: realmID, state: state, browserBinding: browserBinding),
              let nonce = pending.nonce else {
            return .invalidState
        }
        guard try await WebSignInStart.returnToStillRegistered(pending, realmID: realmID, database: database) else {
            return .returnToWithdrawn
        }
        if let error = parameters["error"], !error.isEmpty {
            // Apple's codes are short ASCII words; anything else is not echoed.
            let safe = error.utf8.count <= 64 && error.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) }
            return .appleError(safe ? error : "apple_error", returnTo: pending.returnTo)
        }
        let code = parameters["code"].flatMap { $0.isEmpty ? nil : $0 }
        var identityToken = parameters["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        guard code != nil || identityToken != nil else { return .missingCredentials(returnTo: pending.returnTo) }

        let provider = try await database.read { db in try AppleProviderStore.load(db, realmID: realmID) }
        var appleRefreshToken: String?
        if let code, let provider, let redirectURI = provider.returnUrls.first {
            // The token from Apple's own endpoint (over TLS, for this code) is the one verified.
            let secret: String
            switch await credentials.clientSecret(realmID: realmID, clientID: provider.clientId) {
            case .failure(let failure): return .exchangeFailed(failure, returnTo: pending.returnTo)
            case .success(let value): secret = value
            }
            switch await apple.exchange(code: code, clientID: provider.clientId, clientSecret: secret,
                                        redirectURI: redirectURI) {
            case .failure(let failure): return .exchangeFailed(failure, returnTo: pending.returnTo)
            case .success(let grant):
                guard let token = grant.idToken else { return .exchangeFailed(.invalid, returnTo: pending.returnTo) }
                identityToken = token
                appleRefreshToken = grant.refreshToken
            }
        }
        guard let identityToken else { return .missingCredentials(returnTo: pending.returnTo) }
        let request = LoginRequest(realmID: realmID, identityToken: identityToken, clientID: pending.clientID,
                                   rawNonce: nonce, downstreamState: pending.downstreamState,
                                   fullName: Self.name(fromUser: parameters["user"]), clientIP: clientIP)
        let result: LoginResult
        do {
            result = try await login.login(request)
        } catch {
            return .loginFailed(error, returnTo: pending.returnTo)
        }
        if let appleRefreshToken, let provider {
            // The same hand-off as a native login's code, but with the token itself: this door's
            // exchange had to happen before the login (it is what yields the ID token), so there
            // is nothing left to queue. Failing to keep it does not undo the login; the account
            // simply has none to revoke.
            _ = await vault.keep(.refreshToken(appleRefreshToken), realmID: realmID, accountID: result.accountID,
                                 clientID: provider.clientId)
        }
        return .loggedIn(result, returnTo: pending.returnTo)
    }

    /// The name in Apple's first-authorization `user` JSON (`{"name":{"firstName","lastName"},"email"}`).
    static func name(fromUser text: String?) -> PersonName {
        guard let text, text.utf8.count <= 4096, let user = (try? JSONValue.parse(Array(text.utf8)))?.objectValue,
              let name = user["name"]?.objectValue else { return PersonName() }
        func part(_ key: String) -> String? {
            guard let value = name[key]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty,
                  value.count <= InputRules.maxNameLength else { return nil }
            return value
        }
        return PersonName(givenName: part("firstName"), familyName: part("lastName"))
    }
}
