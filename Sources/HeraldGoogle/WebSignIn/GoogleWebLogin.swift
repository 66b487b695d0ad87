import Foundation
import JOSE
import Login
import Realms
import Storage

/// Sign in with Google in a browser: Google's button (or One Tap) on a page Herald serves,
/// which posts the ID token (`credential`) back to Herald's `login_uri`. The same login as
/// native apps (verification, replay, account resolution, branch A or B), entered through
/// the web door.
///
/// Google's answer carries no `state` of ours, only the token, so the state is the nonce:
/// `start` keeps a row for a fresh 256-bit nonce, bound to the browser, and the page puts it in
/// Google's button (`data-nonce`); Google signs it into the token. `complete` finds the row by
/// the token's nonce, for the browser that began it only, and the login then requires the
/// verified token to carry exactly that nonce. A token minted for someone else's sign-in, or
/// delivered to another browser, finds no row.
public struct GoogleWebLogin: Sendable {
    /// The `google-web` module's schema.
    public static let migrations: [Migration] = [
        Migration(module: "google-web", version: 1, name: "web sign-in states",
                  statements: WebSignInStates.createTable(.google)),
    ]

    /// What the sign-in page hands Google's button.
    public struct Button: Sendable, Equatable {
        /// The realm's web client id: the first of its Google client ids.
        public let clientID: String
        /// The state, as the nonce Google signs into the token.
        public let nonce: String
    }

    /// How the browser's post ended.
    public enum Outcome: Sendable {
        case loggedIn(LoginResult, returnTo: String?)
        /// No sign-in of this browser waits for the token's nonce (unknown, used, expired,
        /// another browser's, or a token without a readable nonce).
        case invalidState
        /// The request carried no browser binding (a cookie blocked or lost).
        case noBrowserBinding
        /// The client no longer registers the `returnTo` the sign-in began with.
        case returnToWithdrawn
        case loginFailed(LoginError, returnTo: String?)
    }

    private let database: any Database
    private let states: WebSignInStates
    private let login: IdentityTokenLogin<GoogleIdentityVerifier>
    private let now: @Sendable () -> Date

    public init(database: any Database, login: IdentityTokenLogin<GoogleIdentityVerifier>,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        states = WebSignInStates(.google, database: database, now: now)
        self.login = login
        self.now = now
    }

    /// Keeps the sign-in `start` describes for the browser holding `browserBinding` and
    /// returns what the page's button needs. Refusals throw `WebSignInStart.Refusal`.
    public func start(_ start: WebSignInStart, browserBinding: String) async throws -> Button {
        let provider = try await start.check(database, at: now().unixSeconds) { db, realm in
            try GoogleProviderStore.load(db, realmID: realm.id).flatMap { $0.enabled ? $0 : nil }
        }
        let nonce = try await states.begin(realmID: start.realmID, WebSignInStates.Pending(
            clientID: start.clientID, downstreamState: start.downstreamState, returnTo: start.returnTo, nonce: nil),
            browserBinding: browserBinding)
        return Button(clientID: provider.clientIds[0], nonce: nonce)
    }

    /// Completes the sign-in whose token Google's button posted, in the browser holding
    /// `browserBinding` (the route has already checked Google's CSRF double-submit cookie).
    public func complete(realmID: String, credential: String, browserBinding: String?, clientIP: String) async throws
        -> Outcome {
        guard let browserBinding else { return .noBrowserBinding }
        // Read unverified only to find the row; the login verifies the token and requires this nonce.
        guard InputRules.isSlug(realmID), let nonce = Self.nonce(in: credential),
              let pending = try await states.take(realmID: realmID, state: nonce, browserBinding: browserBinding) else {
            return .invalidState
        }
        guard try await WebSignInStart.returnToStillRegistered(pending, realmID: realmID, database: database) else {
            return .returnToWithdrawn
        }
        let request = LoginRequest(realmID: realmID, identityToken: credential, clientID: pending.clientID,
                                   rawNonce: nonce, downstreamState: pending.downstreamState, fullName: PersonName(),
                                   clientIP: clientIP)
        do {
            return .loggedIn(try await login.login(request), returnTo: pending.returnTo)
        } catch {
            return .loginFailed(error, returnTo: pending.returnTo)
        }
    }

    /// The `nonce` claim of a compact JWS, unverified; nil when there is none to read.
    static func nonce(in credential: String) -> String? {
        guard let jws = try? CompactJWS(parsing: credential, maxLength: GoogleIdentityVerifier.maximumTokenBytes),
              let nonce = (try? jws.payloadObject())?["nonce"]?.stringValue, !nonce.isEmpty else { return nil }
        return nonce
    }
}
