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
    /// Reads of the pre-checks' settings one login makes at most when they keep changing under it.
    static var maximumContextReads: Int { 3 }

    private let database: any Database
    private let verifier: Verifier
    private let sessions: SessionStore
    private let issuers: RealmIssuers
    private let limiter: LoginAttemptLimiter
    private let resolver: AccountResolver
    private let downstream: DownstreamAuthorizations
    private let now: @Sendable () -> Date
    /// Shared by the copies of this value: the routes hold one login each.
    let contexts = LoginContextCache<Verifier.Configuration>()

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
        guard InputRules.isSlug(request.realmID) else { throw LoginError(.realmNotFound) }
        // A returning login usually starts from remembered settings and reads nothing before its
        // write; each database call is a hop to a database thread and back.
        var context: LoginContext<Verifier.Configuration>
        if let remembered = contexts.context(realmID: request.realmID, clientID: request.clientID) {
            context = remembered
        } else {
            context = try await readContext(request)
        }
        for _ in 1...Self.maximumContextReads {
            if let blockedFor = context.blockedFor { throw LoginError(.rateLimited, retryAfterSeconds: blockedFor) }
            switch await attempt(request, context: context) {
            case .succeeded(let result):
                return result
            case .blocked(let retryAfter):
                throw LoginError(.rateLimited, retryAfterSeconds: retryAfter)
            case .stale:
                context = try await readContext(request)
            case .failed(let error, let beforeWrite):
                if context.isRemembered, beforeWrite {
                    // Refused on remembered settings: decided again on what is stored (and on the
                    // failure count, which a remembered context does not carry).
                    let stored = try await readContext(request)
                    guard stored.version == context.version else {
                        context = stored
                        continue
                    }
                    context = stored
                    if let blockedFor = stored.blockedFor { throw LoginError(.rateLimited, retryAfterSeconds: blockedFor) }
                }
                await recordFailure(error, request: request, context: context)
                throw error
            }
        }
        // The realm's settings changed under every read: an operator is changing them right now.
        throw LoginError(.serviceUnavailable)
    }

    /// The pre-checks' reader turn: realm, settings version, failure count, provider, client.
    private func readContext(_ request: LoginRequest) async throws(LoginError) -> LoginContext<Verifier.Configuration> {
        let found: LoginContext<Verifier.Configuration>?
        do {
            let limiter = self.limiter
            let verifier = self.verifier
            found = try await database.read { db -> LoginContext<Verifier.Configuration>? in
                guard let realm = try RealmStore.load(db, id: request.realmID), realm.enabled,
                      let version = try RealmSettingsVersion.current(db, realmID: realm.id) else { return nil }
                return LoginContext(
                    realm: realm, version: version,
                    blockedFor: try limiter.retryAfter(db, realmID: realm.id, clientIP: request.clientIP,
                                                       limit: realm.rateLimit),
                    configuration: try verifier.enabledConfiguration(db, realm: realm),
                    client: try ClientAppStore.load(db, realmID: realm.id, clientID: request.clientID))
            }
        } catch {
            throw LoginError.failure(error)
        }
        guard let found else {
            contexts.forget(realmID: request.realmID, clientID: request.clientID)
            throw LoginError(.realmNotFound)
        }
        contexts.remember(found, clientID: request.clientID)
        return found
    }

    /// Counts a refused attempt against the realm's (realm, client IP) limit, when it counts.
    private func recordFailure(_ error: LoginError, request: LoginRequest,
                               context: LoginContext<Verifier.Configuration>) async {
        guard error.countsAsFailure else { return }
        // A failing counter must not turn a clear 4xx into a 500; the attempt is refused anyway.
        // The failure event commits with the count. The client id only once it was found: a
        // caller can type anything into that field.
        let realm = context.realm
        let event = NewSecurityEvent(realmID: realm.id, type: .loginFailed, at: now().unixSeconds,
                                     reason: error.reason, accountID: error.accountID,
                                     clientID: context.client?.clientId, clientIP: request.clientIP)
        try? await limiter.recordFailure(realmID: realm.id, clientIP: request.clientIP, limit: realm.rateLimit,
                                         event: event)
    }

    /// How one attempt on one context ended.
    private enum AttemptOutcome {
        case succeeded(LoginResult)
        /// Refused; `beforeWrite` when decided on the context alone (pre-checks, verification).
        case failed(LoginError, beforeWrite: Bool)
        /// The realm's settings changed since the context was read: nothing was written.
        case stale
        /// The (realm, IP) failure limit is reached (seen by the write of a remembered context).
        case blocked(retryAfterSeconds: Int)
    }

    private func attempt(_ request: LoginRequest, context: LoginContext<Verifier.Configuration>) async -> AttemptOutcome {
        let verified: VerifiedLogin
        do {
            verified = try await verify(request, context: context)
        } catch {
            return .failed(error, beforeWrite: true)
        }
        do {
            return try await complete(request, context: context, verified: verified)
        } catch {
            return .failed(error, beforeWrite: false)
        }
    }

    /// What the verification hands to the write: the identity, the audience that matched and
    /// the token's single-use claim.
    private struct VerifiedLogin: Sendable {
        let client: ClientApp
        let identity: ProviderIdentityClaims
        let audience: String
        let replay: (any ReplayClaim)?
    }

    /// The pre-checks on the context and the provider's verification; nothing is written.
    private func verify(_ request: LoginRequest, context: LoginContext<Verifier.Configuration>)
        async throws(LoginError) -> VerifiedLogin {
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
        let audience: String
        let replay: (any ReplayClaim)?
        switch await verifier.verify(token: request.identityToken, rawNonce: request.rawNonce, realm: realm,
                                     configuration: configuration) {
        case .verified(let claims, let matchedAudience, let claim):
            verified = claims
            audience = matchedAudience
            replay = claim
        case .rejected(let reason): throw LoginError(.invalidIdentityToken, providerReason: reason)
        case .tooLarge: throw LoginError(.tokenTooLarge)
        case .unavailable(let retryAfter):
            throw LoginError(.providerUnavailable, providerReason: "\(Verifier.provider)_unavailable",
                             retryAfterSeconds: retryAfter)
        }
        // The name the request brings (Apple's first authorization) wins; a provider whose token
        // names the person (Google) keeps its own when the request has none.
        if !request.fullName.isEmpty { verified.name = request.fullName }
        return VerifiedLogin(client: client, identity: verified, audience: audience, replay: replay)
    }

    /// What the login transaction read in its first round trip for the steps after the claim.
    private struct FirstReads {
        /// `AccountResolver.lookupStatement`'s rows.
        let identityAccount: [Row]
        /// Branch A's signing key, answered (branch B signs nothing).
        let signingKey: ActiveKeyLookup.Answer?
    }

    /// A step decided after the claim was sent with the reads, before anything else was
    /// written: thrown so the transaction rolls back (the token stays unclaimed).
    private struct Undone: Error {
        let step: LoginStep
    }

    /// The login's write transaction, then the signing of branch A's tokens.
    private func complete(_ request: LoginRequest, context: LoginContext<Verifier.Configuration>,
                          verified: VerifiedLogin) async throws(LoginError) -> AttemptOutcome {
        let realm = context.realm
        let client = verified.client
        let identity = verified.identity
        let replay = verified.replay
        let version = context.version
        let checksLimit = context.isRemembered
        let limiter = self.limiter

        let authTime = now().unixSeconds
        var step: LoginStep?
        for attempt in 1...Self.maximumWriteAttempts where step == nil {
            do {
                // READ COMMITTED on PostgreSQL: the replay claim is a conditional upsert, the
                // account and identity are guarded by unique keys and branch B consumes its
                // pending authorization with a conditional UPDATE, so nothing here needs
                // SERIALIZABLE, whose index-page locks made concurrent logins fail each other.
                step = try await database.write(isolation: .readCommitted, lostCommitCheck: { step, db in
                    try Self.committed(step, replay: replay, in: db)
                }) { db -> LoginStep in
                    // One round trip on PostgreSQL: the settings stamp, the failure count and the
                    // claim (when it is one statement) travel together.
                    let limitCheck = checksLimit
                        ? limiter.retryAfterCheck(realmID: realm.id, clientIP: request.clientIP, limit: realm.rateLimit) : nil
                    let claim = replay?.statement
                    // Branch A's signing key, unless remembered under the stamp read first.
                    let keyLookup = request.downstreamState == nil
                        ? sessions.activeKeyLookup(realmID: realm.id, settingsStamp: version) : nil
                    let keyStatements = keyLookup?.statements ?? []
                    // After the claim, in the order the login used them: the account of the identity
                    // and the realm's signing key.
                    let answers = try db.queryBatch([RealmSettingsVersion.currentStatement(realmID: realm.id)]
                                                    + (limitCheck.map { [$0.statement] } ?? []) + (claim.map { [$0] } ?? [])
                                                    + [AccountResolver.lookupStatement(realmID: realm.id, claims: identity)]
                                                    + keyStatements)
                    let reads = answers.count - keyStatements.count
                    let firstReads = FirstReads(identityAccount: answers[reads - 1],
                                                signingKey: keyLookup?.answered(by: answers.suffix(keyStatements.count)))
                    // What was verified against is still what is stored (on every node), and a
                    // remembered context's failure count, read here for the first time, is under
                    // its limit; either way nothing is written otherwise, the token unclaimed
                    // (the claim, sent already, is undone by throwing: all rolls back).
                    guard try RealmSettingsVersion.current(fromRows: answers[0]) == version else { throw Undone(step: .stale) }
                    if let limitCheck, let blockedFor = try limitCheck.retryAfter(answers[1]) {
                        throw Undone(step: .blocked(retryAfterSeconds: blockedFor))
                    }
                    // The claim commits even when the login is refused below: a token seen once is
                    // never accepted again. Only a storage failure (rethrown, all rolled back) leaves it unclaimed.
                    if let replay {
                        let claimed = try claim != nil ? !answers[reads - 2].isEmpty : replay.record(in: db)
                        if !claimed { return .replayed }
                    }
                    do {
                        let step = try db.withSavepoint("login") {
                            try resolveAndComplete(db, realm: realm, client: client, identity: identity,
                                                   firstReads: firstReads, request: request, authTime: authTime)
                        }
                        // The success event commits with the session or code it records.
                        try Self.recordSuccess(db, step, realmID: realm.id, clientID: client.clientId,
                                               clientIP: request.clientIP, at: authTime)
                        return step
                    } catch let refusal as LoginError {
                        return .refused(refusal)
                    }
                }
            } catch let undone as Undone {
                step = undone.step
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
        case .stale: return .stale
        case .blocked(let retryAfter): return .blocked(retryAfterSeconds: retryAfter)
        case .replayed: throw LoginError(.invalidIdentityToken, providerReason: LoginError.replayedReason)
        case .refused(let refusal): throw refusal
        case .downstream(let resolution, let completion):
            return .succeeded(LoginResult(branch: .downstream(redirectURI: completion.redirectURI), accountID: resolution.account.id,
                                          isNewUser: resolution.isNewUser, audience: verified.audience))
        case .session(let resolution, let prepared):
            do {
                return .succeeded(LoginResult(branch: .session(try sessions.issue(prepared)),
                                              accountID: resolution.account.id, isNewUser: resolution.isNewUser,
                                              audience: verified.audience))
            } catch {
                throw LoginError(.internalFailure, accountID: resolution.account.id)
            }
        }
    }

    /// Whether the login transaction that answered `step` committed, read after its COMMIT went
    /// unanswered (a failover): each answer by what only its own attempt wrote, so a client's
    /// retry is never taken for a replayed token.
    private static func committed(_ step: LoginStep, replay: (any ReplayClaim)?, in db: any SQLExecutor) throws -> Bool {
        switch step {
        case .session(_, let prepared): try SessionStore.isStored(prepared, in: db)
        case .downstream(_, let completion): try completion.isStored(in: db)
        // The refusal committed the token's claim alone.
        case .refused: try replay?.isRecorded(in: db) ?? true
        // Nothing was written.
        case .replayed, .stale, .blocked: true
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
        case .replayed, .refused, .stale, .blocked:
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
                                    identity: ProviderIdentityClaims, firstReads: FirstReads, request: LoginRequest,
                                    authTime: Int64) throws -> LoginStep {
        let resolution: AccountResolution
        do {
            resolution = try resolver.resolve(db, realm: realm, claims: identity, identityAccountRows: firstReads.identityAccount)
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
                let completion = try downstream.completeDownstream(
                    in: db, realmID: realm.id, issuer: issuers.issuer(realmID: realm.id), client: client,
                    downstreamState: state, accountID: resolution.account.id, authTime: authTime)
                return .downstream(resolution, completion)
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
                account: resolution.account, identities: resolution.identities, answer: .firstParty,
                signingKey: firstReads.signingKey)
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
