import Foundation
import Realms
import Storage
import TokenIssuer

/// Apple native login, end to end (ARCHITECTURE.md): pre-checks (realm, provider, client,
/// branch) → identity-token verification → one write transaction: replay claim, account
/// resolution, then branch A (TokenIssuer session) or branch B (Grants completes the pending
/// authorization). Failed attempts count against the realm's (realm, client IP) limit.
public struct AppleNativeLogin: Sendable {
    /// The provider name stored on identities and logged.
    public static let provider = "apple"
    /// Attempts of the login transaction when concurrent logins of one person collide.
    static let maximumWriteAttempts = 3

    private let database: any Database
    private let verifier: AppleIdentityVerifier
    private let sessions: SessionStore
    private let issuers: RealmIssuers
    private let limiter: LoginAttemptLimiter
    private let downstream: DownstreamCompleter?
    private let now: @Sendable () -> Date

    /// `downstream` nil answers every branch-B request `invalidDownstreamState`.
    public init(database: any Database, verifier: AppleIdentityVerifier, sessions: SessionStore, issuers: RealmIssuers,
                limiter: LoginAttemptLimiter, downstream: DownstreamCompleter? = nil,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        self.verifier = verifier
        self.sessions = sessions
        self.issuers = issuers
        self.limiter = limiter
        self.downstream = downstream
        self.now = now
    }

    /// The same login with branch B wired to `downstream`.
    public func completingDownstream(with downstream: @escaping DownstreamCompleter) -> AppleNativeLogin {
        AppleNativeLogin(database: database, verifier: verifier, sessions: sessions, issuers: issuers, limiter: limiter,
                         downstream: downstream, now: now)
    }

    /// Runs one attempt. Throws `NativeLoginError` only.
    public func login(_ request: NativeLoginRequest) async throws(NativeLoginError) -> NativeLoginResult {
        // One reader turn for everything the pre-checks need (realm, failure count, provider,
        // client): each database call is a hop to a database thread and back.
        let context: NativeLoginContext
        do {
            guard InputRules.isSlug(request.realmID) else { throw NativeLoginError(.realmNotFound) }
            let limiter = self.limiter
            let found = try await database.read { db -> NativeLoginContext? in
                guard let realm = try RealmStore.load(db, id: request.realmID), realm.enabled else { return nil }
                return NativeLoginContext(
                    realm: realm,
                    blockedFor: try limiter.retryAfter(db, realmID: realm.id, clientIP: request.clientIP,
                                                       limit: realm.rateLimit),
                    provider: try AppleProviderStore.load(db, realmID: realm.id),
                    client: try ClientAppStore.load(db, realmID: realm.id, clientID: request.clientID))
            }
            guard let found else { throw NativeLoginError(.realmNotFound) }
            context = found
        } catch let error as NativeLoginError {
            throw error
        } catch {
            throw NativeLoginError.failure(error)
        }
        let realm = context.realm
        if let blockedFor = context.blockedFor { throw NativeLoginError(.rateLimited, retryAfterSeconds: blockedFor) }
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

    private func attempt(_ request: NativeLoginRequest, context: NativeLoginContext) async throws(NativeLoginError)
        -> NativeLoginResult {
        let realm = context.realm
        guard request.identityToken.utf8.count <= AppleIdentityVerifier.maximumTokenBytes else {
            throw NativeLoginError(.tokenTooLarge)
        }
        guard let provider = context.provider, provider.enabled else { throw NativeLoginError(.providerNotConfigured) }
        guard let client = context.client, client.enabled else { throw NativeLoginError(.unknownClient) }
        // Branch A issues session tokens to the app without client authentication, so it serves
        // public first-party clients only (the same rule as the session API that refreshes
        // them); a confidential client gets tokens only at /token, authenticated.
        if request.downstreamState == nil, !client.firstParty || client.confidential {
            throw NativeLoginError(.clientNotAllowed)
        }

        let policy = AppleVerificationPolicy(audiences: Set(provider.acceptedAudiences), nonceRequired: realm.nonceRequired,
                                             rawNonce: request.rawNonce, realmID: realm.id)
        // Signature and JWKS work finish here, before the writer is taken.
        let claims: AppleIdentityClaims
        let verification = await verifier.verifyDeferringReplay(token: request.identityToken, policy: policy)
        switch verification.result {
        case .verified(let verified): claims = verified
        case .rejected(let reason): throw NativeLoginError(.invalidAppleToken, appleReason: reason)
        case .tooLarge: throw NativeLoginError(.tokenTooLarge)
        case .unavailable(let retryAfter): throw NativeLoginError(.appleUnavailable, retryAfterSeconds: retryAfter)
        }

        let identity = ProviderIdentityClaims(provider: Self.provider, subject: claims.subject, email: claims.email,
                                              emailVerified: claims.emailVerified,
                                              isPrivateEmail: claims.isPrivateEmail, name: request.fullName)
        let authTime = now().unixSeconds
        var step: NativeLoginStep?
        let replay = verification.replay
        let resolver = AccountResolver(now: now)
        let sessions = self.sessions
        let issuers = self.issuers
        let downstream = self.downstream
        for attempt in 1...Self.maximumWriteAttempts where step == nil {
            do {
                // READ COMMITTED on PostgreSQL: the replay claim is a conditional upsert, the
                // account and identity are guarded by unique keys and branch B consumes its
                // pending authorization with a conditional UPDATE, so nothing here needs
                // SERIALIZABLE, whose index-page locks made concurrent logins fail each other.
                step = try await database.write(isolation: .readCommitted) { db -> NativeLoginStep in
                    // The claim commits even when the login is refused below: a token seen once is
                    // never accepted again. Only a storage failure (rethrown, all rolled back) leaves it unclaimed.
                    if let replay, try !replay.record(in: db) { return .replayed }
                    do {
                        let step = try db.withSavepoint("native_login") {
                            try Self.resolveAndComplete(db, realm: realm, client: client, identity: identity,
                                                        request: request, authTime: authTime, resolver: resolver,
                                                        sessions: sessions, issuers: issuers, downstream: downstream)
                        }
                        // The success event commits with the session or code it records.
                        try Self.recordSuccess(db, step, realmID: realm.id, clientID: client.clientId,
                                               clientIP: request.clientIP, at: authTime)
                        return step
                    } catch let refusal as NativeLoginError {
                        return .refused(refusal)
                    }
                }
            } catch let error as RealmsError where error.code == .conflict && attempt < Self.maximumWriteAttempts {
                // A concurrent login of the same person (same Apple subject or email) created
                // the account or identity first; everything rolled back, and the next attempt
                // finds what it committed.
                continue
            } catch {
                throw NativeLoginError.failure(error)
            }
        }
        guard let step else { throw NativeLoginError(.internalFailure) }

        switch step {
        case .replayed: throw NativeLoginError(.invalidAppleToken, appleReason: .replayed)
        case .refused(let refusal): throw refusal
        case .downstream(let resolution, let redirectURI):
            return .downstream(redirectURI: redirectURI, accountID: resolution.account.id, isNewUser: resolution.isNewUser)
        case .session(let resolution, let prepared):
            do {
                return .session(try sessions.issue(prepared), isNewUser: resolution.isNewUser)
            } catch {
                throw NativeLoginError(.internalFailure, accountID: resolution.account.id)
            }
        }
    }

    /// Records a successful login (`created` or `existing` account) in the login transaction.
    private static func recordSuccess(_ db: any SQLExecutor, _ step: NativeLoginStep, realmID: String, clientID: String,
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
    /// pending authorization consumed, the code stored). Refusals are thrown as
    /// `NativeLoginError` (the caller rolls back to its savepoint and commits the replay claim
    /// alone); storage errors are rethrown unchanged, so the whole transaction rolls back (and
    /// PostgreSQL can retry a serialization failure).
    private static func resolveAndComplete(_ db: any SQLExecutor, realm: Realm, client: ClientApp,
                                           identity: ProviderIdentityClaims, request: NativeLoginRequest,
                                           authTime: Int64, resolver: AccountResolver, sessions: SessionStore,
                                           issuers: RealmIssuers,
                                           downstream: DownstreamCompleter?) throws -> NativeLoginStep {
        let resolution: AccountResolution
        do {
            resolution = try resolver.resolve(db, realmID: realm.id, claims: identity)
        } catch let error as AccountResolutionError {
            switch error.code {
            case .realmNotFound: throw NativeLoginError(.realmNotFound)
            case .registrationDisabled: throw NativeLoginError(.registrationDisabled)
            case .accountDisabled: throw NativeLoginError(.accountDisabled)
            }
        }
        // An account created by this login is undone with a refusal, so its id is not reported.
        let accountID: String? = resolution.isNewUser ? nil : resolution.account.id
        if let state = request.downstreamState {
            // Branch B: the code is committed with the account it is for, or neither is; a
            // refused state undoes the account's creation, link or update.
            guard let downstream else { throw NativeLoginError(.invalidDownstreamState, accountID: accountID) }
            do {
                let redirectURI = try downstream(db, DownstreamCompletionRequest(
                    realmID: realm.id, issuer: issuers.issuer(realmID: realm.id), clientID: client.clientId, downstreamState: state,
                    accountID: resolution.account.id, authTime: authTime))
                return .downstream(resolution, redirectURI: redirectURI)
            } catch let error as StorageError {
                throw error
            } catch let error as NativeLoginError {
                throw NativeLoginError(error.code, appleReason: error.appleReason, accountID: accountID)
            } catch {
                throw NativeLoginError(.internalFailure, accountID: accountID)
            }
        }
        do {
            let prepared = try sessions.startSession(in: db, SessionRequest(
                realmID: realm.id, clientID: client.clientId, clientInstanceID: client.instanceID,
                accountID: resolution.account.id, scope: client.allowedScopes,
                clientIP: request.clientIP, authTime: authTime,
                accessTokenTTL: client.accessTokenTTL ?? realm.accessTokenTTL,
                refreshTokenTTL: client.refreshTokenTTL ?? realm.refreshTokenTTL,
                refreshIdleTTL: client.refreshIdleTTL ?? realm.refreshIdleTTL, ipBinding: client.ipBinding),
                account: resolution.account, answer: .firstParty)
            return .session(resolution, prepared)
        } catch let error as StorageError {
            throw error
        } catch let error as TokenError where error.code == .accountDisabled {
            throw NativeLoginError(.accountDisabled, accountID: accountID)
        } catch {
            throw NativeLoginError(.internalFailure, accountID: accountID)
        }
    }
}

