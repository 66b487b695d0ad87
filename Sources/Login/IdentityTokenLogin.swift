import Foundation
import Grants
import Realms
import Storage
import TokenIssuer

/// A login with a provider's identity token, end to end (ARCHITECTURE.md), the same for every
/// door (a native app's post, the web callback) and every provider (`Verifier`): pre-checks
/// (realm, failure limit, provider, client, branch) → the provider's verification → one write
/// transaction: the replay claim, account resolution, then branch A (TokenIssuer starts the
/// first-party app's session) or branch B (Grants completes the third party's pending
/// authorization). Failed attempts count against the realm's (realm, client IP) limit.
public struct IdentityTokenLogin<Verifier: IdentityTokenVerifier>: Sendable {
    /// Attempts of the login transaction when concurrent logins of one person collide.
    static var maximumWriteAttempts: Int { 3 }

    private let database: any Database
    private let verifier: Verifier
    private let sessions: SessionStore
    private let issuers: RealmIssuers
    private let limiter: LoginAttemptLimiter
    private let resolver: AccountResolver
    private let downstream: DownstreamAuthorizations
    private let now: @Sendable () -> Date

    /// A login over `database`: `verifier` checks the provider's tokens, `sessions` starts
    /// branch A's sessions, `downstream` completes branch B's pending authorizations (their
    /// redirect carries the realm's issuer from `issuers`).
    public init(database: any Database, verifier: Verifier, sessions: SessionStore, issuers: RealmIssuers,
                limiter: LoginAttemptLimiter, downstream: DownstreamAuthorizations, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.verifier = verifier
        self.sessions = sessions
        self.issuers = issuers
        self.limiter = limiter
        resolver = AccountResolver(now: now)
        self.downstream = downstream
        self.now = now
    }

    /// The provider name stored on identities, logged and counted.
    public var provider: String { Verifier.provider }

    /// Runs one attempt. Throws `LoginError` only.
    public func login(_ request: LoginRequest) async throws(LoginError) -> LoginResult {
        // One reader turn for everything the pre-checks need (realm, failure count, provider,
        // client): each database call is a hop to a database thread and back.
        let context: LoginContext<Verifier.Configuration>
        do {
            guard InputRules.isSlug(request.realmID) else { throw LoginError(.realmNotFound) }
            let limiter = self.limiter
            let verifier = self.verifier
            let found = try await database.read { db -> LoginContext<Verifier.Configuration>? in
                guard let realm = try RealmStore.load(db, id: request.realmID), realm.enabled else { return nil }
                return LoginContext(
                    realm: realm,
                    blockedFor: try limiter.retryAfter(db, realmID: realm.id, clientIP: request.clientIP,
                                                       limit: realm.rateLimit),
                    configuration: try verifier.enabledConfiguration(db, realm: realm),
                    client: try ClientAppStore.load(db, realmID: realm.id, clientID: request.clientID))
            }
            guard let found else { throw LoginError(.realmNotFound) }
            context = found
        } catch let error as LoginError {
            throw error
        } catch {
            throw LoginError.failure(error)
        }
        let realm = context.realm
        if let blockedFor = context.blockedFor { throw LoginError(.rateLimited, retryAfterSeconds: blockedFor) }
        do {
            return try await attempt(request, context: context)
        } catch {
            if error.countsAsFailure {
                // A failing counter must not turn a clear 4xx into a 500; the attempt is refused anyway.
                // The failure event commits with the count. The client id only once it was
                // found: a caller can type anything into that field.
                let event = NewSecurityEvent(realmID: realm.id, type: .loginFailed, at: now().unixSeconds,
                                             reason: error.reason, accountID: error.accountID,
                                             clientID: context.client?.clientId, clientIP: request.clientIP)
                try? await limiter.recordFailure(realmID: realm.id, clientIP: request.clientIP, limit: realm.rateLimit,
                                                 event: event)
            }
            throw error
        }
    }

    private func attempt(_ request: LoginRequest, context: LoginContext<Verifier.Configuration>)
        async throws(LoginError) -> LoginResult {
        let realm = context.realm
        guard request.identityToken.utf8.count <= Verifier.maximumTokenBytes else { throw LoginError(.tokenTooLarge) }
        guard let configuration = context.configuration else { throw LoginError(.providerNotConfigured) }
        guard let client = context.client, client.enabled else { throw LoginError(.unknownClient) }
        // Branch A issues session tokens to the app without client authentication, so it serves
        // public first-party clients only (the same rule as the session API that refreshes
        // them); a confidential client gets tokens only at /token, authenticated.
        if request.downstreamState == nil, !client.firstParty || client.confidential {
            throw LoginError(.clientNotAllowed)
        }

        // Signature and key work finish here, before the writer is taken.
        var verified: ProviderIdentityClaims
        let replay: (any ReplayClaim)?
        switch await verifier.verify(token: request.identityToken, rawNonce: request.rawNonce, realm: realm,
                                     configuration: configuration) {
        case .verified(let claims, let claim):
            verified = claims
            replay = claim
        case .rejected(let reason): throw LoginError(.invalidIdentityToken, providerReason: reason)
        case .tooLarge: throw LoginError(.tokenTooLarge)
        case .unavailable(let retryAfter):
            throw LoginError(.providerUnavailable, providerReason: "\(Verifier.provider)_unavailable",
                             retryAfterSeconds: retryAfter)
        }
        verified.name = request.fullName
        let identity = verified

        let authTime = now().unixSeconds
        var step: LoginStep?
        for attempt in 1...Self.maximumWriteAttempts where step == nil {
            do {
                // READ COMMITTED on PostgreSQL: the replay claim is a conditional upsert, the
                // account and identity are guarded by unique keys and branch B consumes its
                // pending authorization with a conditional UPDATE, so nothing here needs
                // SERIALIZABLE, whose index-page locks made concurrent logins fail each other.
                step = try await database.write(isolation: .readCommitted) { db -> LoginStep in
                    // The claim commits even when the login is refused below: a token seen once is
                    // never accepted again. Only a storage failure (rethrown, all rolled back) leaves it unclaimed.
                    if let replay, try !replay.record(in: db) { return .replayed }
                    do {
                        let step = try db.withSavepoint("login") {
                            try resolveAndComplete(db, realm: realm, client: client, identity: identity,
                                                   request: request, authTime: authTime)
                        }
                        // The success event commits with the session or code it records.
                        try Self.recordSuccess(db, step, realmID: realm.id, clientID: client.clientId,
                                               clientIP: request.clientIP, at: authTime)
                        return step
                    } catch let refusal as LoginError {
                        return .refused(refusal)
                    }
                }
            } catch let error as RealmsError where error.code == .conflict && attempt < Self.maximumWriteAttempts {
                // A concurrent login of the same person (same subject or email) created the
                // account or identity first; everything rolled back, and the next attempt
                // finds what it committed.
                continue
            } catch {
                throw LoginError.failure(error)
            }
        }
        guard let step else { throw LoginError(.internalFailure) }

        switch step {
        case .replayed: throw LoginError(.invalidIdentityToken, providerReason: LoginError.replayedReason)
        case .refused(let refusal): throw refusal
        case .downstream(let resolution, let redirectURI):
            return .downstream(redirectURI: redirectURI, accountID: resolution.account.id, isNewUser: resolution.isNewUser)
        case .session(let resolution, let prepared):
            do {
                return .session(try sessions.issue(prepared), isNewUser: resolution.isNewUser)
            } catch {
                throw LoginError(.internalFailure, accountID: resolution.account.id)
            }
        }
    }

    /// Records a successful login (`created` or `existing` account) in the login transaction.
    private static func recordSuccess(_ db: any SQLExecutor, _ step: LoginStep, realmID: String, clientID: String,
                                      clientIP: String, at: Int64) throws {
        let resolution: AccountResolution
        var sessionID: String?
        switch step {
        case .session(let resolved, let prepared):
            resolution = resolved
            sessionID = prepared.sessionID
        case .downstream(let resolved, _):
            resolution = resolved
        case .replayed, .refused:
            return
        }
        try SecurityEventLog.record(db, NewSecurityEvent(
            realmID: realmID, type: .loginSucceeded, at: at, reason: resolution.isNewUser ? "created" : "existing",
            accountID: resolution.account.id, clientID: clientID, sessionID: sessionID, clientIP: clientIP))
    }

    /// The part of the login transaction that is undone as a whole when refused: account
    /// resolution and then branch A's session or branch B's downstream completion (the
    /// pending authorization consumed, the code stored). Refusals are thrown as `LoginError`
    /// (the caller rolls back to its savepoint and commits the replay claim alone); storage
    /// errors are rethrown unchanged, so the whole transaction rolls back (and PostgreSQL can
    /// retry a serialization failure).
    private func resolveAndComplete(_ db: any SQLExecutor, realm: Realm, client: ClientApp,
                                    identity: ProviderIdentityClaims, request: LoginRequest,
                                    authTime: Int64) throws -> LoginStep {
        let resolution: AccountResolution
        do {
            resolution = try resolver.resolve(db, realm: realm, claims: identity)
        } catch let error as AccountResolutionError {
            switch error.code {
            case .registrationDisabled: throw LoginError(.registrationDisabled)
            case .accountDisabled: throw LoginError(.accountDisabled)
            }
        }
        // An account created by this login is undone with a refusal, so its id is not reported.
        let accountID: String? = resolution.isNewUser ? nil : resolution.account.id
        if let state = request.downstreamState {
            // Branch B: the code is committed with the account it is for, or neither is; a
            // refused state undoes the account's creation, link or update.
            do {
                let redirectURI = try downstream.completeDownstream(
                    in: db, realmID: realm.id, issuer: issuers.issuer(realmID: realm.id), clientID: client.clientId,
                    downstreamState: state, accountID: resolution.account.id, authTime: authTime)
                return .downstream(resolution, redirectURI: redirectURI)
            } catch let error as StorageError {
                throw error
            } catch let error as GrantsError where error.code == .invalidDownstreamState {
                throw LoginError(.invalidDownstreamState, accountID: accountID)
            } catch {
                throw LoginError(.internalFailure, accountID: accountID)
            }
        }
        do {
            let prepared = try sessions.startSession(
                in: db, SessionRequest(realm: realm, client: client, accountID: resolution.account.id,
                                       scope: client.allowedScopes, clientIP: request.clientIP, authTime: authTime),
                account: resolution.account, answer: .firstParty)
            return .session(resolution, prepared)
        } catch let error as StorageError {
            throw error
        } catch let error as TokenError where error.code == .accountDisabled {
            throw LoginError(.accountDisabled, accountID: accountID)
        } catch {
            throw LoginError(.internalFailure, accountID: accountID)
        }
    }
}
