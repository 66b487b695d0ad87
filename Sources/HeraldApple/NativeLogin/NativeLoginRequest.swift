import Realms
import Storage
import TokenIssuer

/// One native-login attempt as the route decoded it. Holds the identity token and raw nonce:
/// never log it.
public struct NativeLoginRequest: Sendable {
    public var realmID: String
    /// The JWT from `ASAuthorizationAppleIDCredential.identityToken`.
    public var identityToken: String
    public var clientID: String
    /// The raw nonce; the token carries its lowercase hex SHA-256.
    public var rawNonce: String?
    /// Present: complete a pending third-party authorization (branch B).
    public var downstreamState: String?
    /// Only Apple's first authorization returns a name.
    public var fullName: PersonName
    /// The client IP (rate limiting, session IP binding).
    public var clientIP: String

    /// A request as decoded by the route.
    public init(realmID: String, identityToken: String, clientID: String, rawNonce: String?, downstreamState: String?,
                fullName: PersonName = PersonName(), clientIP: String) {
        self.realmID = realmID
        self.identityToken = identityToken
        self.clientID = clientID
        self.rawNonce = rawNonce
        self.downstreamState = downstreamState
        self.fullName = fullName
        self.clientIP = clientIP
    }
}

/// A successful native login.
public enum NativeLoginResult: Sendable {
    /// Branch A: the first-party app's own session.
    case session(IssuedTokens, isNewUser: Bool)
    /// Branch B: the pending authorization completed; redirect the user agent here.
    case downstream(redirectURI: String, accountID: String, isNewUser: Bool)

    /// The account that logged in.
    public var accountID: String {
        switch self {
        case .session(let tokens, _): tokens.accountID
        case .downstream(_, let accountID, _): accountID
        }
    }

    public var isNewUser: Bool {
        switch self {
        case .session(_, let isNew), .downstream(_, _, let isNew): isNew
        }
    }
}

/// What branch B hands to Grants: consume the pending authorization of `downstreamState` (the
/// handle /authorize returned) and issue a one-time code for the account.
public struct DownstreamCompletionRequest: Sendable {
    public let realmID: String
    public let issuer: String
    public let clientID: String
    public let downstreamState: String
    public let accountID: String
    public let authTime: Int64
}

/// Completes branch B inside the login's write transaction (`db`, after account resolution,
/// under the savepoint that a refusal rolls back) and returns the redirect URI (with `code`,
/// `state`, `iss`). Synchronous: it runs on the database's thread. Throw
/// `NativeLoginError(.invalidDownstreamState)` when the handle is unknown, used, expired or of
/// another client (the account resolution is undone, the replay claim still commits); rethrow
/// storage errors unchanged (the whole transaction rolls back); any other error answers 500.
public typealias DownstreamCompleter = @Sendable (any SQLExecutor, DownstreamCompletionRequest) throws -> String
