import Foundation
import Realms
import Storage
import TokenIssuer

/// Apple native login, end to end (ARCHITECTURE.md): pre-checks (realm, provider, client,
/// branch) → identity-token verification → account resolution in one transaction → branch A
/// (TokenIssuer session) or branch B (Grants completes the pending authorization). Failed
/// attempts count against the realm's (realm, client IP) limit.
public struct AppleNativeLogin: Sendable {
    /// The provider name stored on identities and logged.
    public static let provider = "apple"

    private let database: any Database
    private let verifier: AppleIdentityVerifier
    private let tokens: TokenService
    private let limiter: LoginAttemptLimiter
    private let downstream: DownstreamCompleter?
    private let now: @Sendable () -> Date

    /// `downstream` nil answers every branch-B request `invalidDownstreamState`.
    public init(database: any Database, verifier: AppleIdentityVerifier, tokens: TokenService,
                limiter: LoginAttemptLimiter, downstream: DownstreamCompleter? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.verifier = verifier
        self.tokens = tokens
        self.limiter = limiter
        self.downstream = downstream
        self.now = now
    }

    /// The same login with branch B wired to `downstream`.
    public func completingDownstream(with downstream: @escaping DownstreamCompleter) -> AppleNativeLogin {
        AppleNativeLogin(database: database, verifier: verifier, tokens: tokens, limiter: limiter,
                         downstream: downstream, now: now)
    }

    /// Runs one attempt. Throws `NativeLoginError` only.
    public func login(_ request: NativeLoginRequest) async throws(NativeLoginError) -> NativeLoginResult {
        let realm: Realm
        do {
            guard let found = try await RealmStore(database: database, now: now).enabledRealm(request.realmID) else {
                throw NativeLoginError(.realmNotFound)
            }
            realm = found
        } catch let error as NativeLoginError {
            throw error
        } catch {
            throw NativeLoginError(.internalFailure)
        }
        let blockedFor: Int?
        do {
            blockedFor = try await limiter.retryAfter(realmID: realm.id, clientIP: request.clientIP, limit: realm.rateLimit)
        } catch {
            throw NativeLoginError(.internalFailure)
        }
        if let blockedFor { throw NativeLoginError(.rateLimited, retryAfterSeconds: blockedFor) }
        do {
            return try await attempt(request, realm: realm)
        } catch {
            if error.countsAsFailure {
                // A failing counter must not turn a clear 4xx into a 500; the attempt is refused anyway.
                try? await limiter.recordFailure(realmID: realm.id, clientIP: request.clientIP, limit: realm.rateLimit)
            }
            throw error
        }
    }

    private func attempt(_ request: NativeLoginRequest, realm: Realm) async throws(NativeLoginError) -> NativeLoginResult {
        guard request.identityToken.utf8.count <= AppleIdentityVerifier.maximumTokenBytes else {
            throw NativeLoginError(.tokenTooLarge)
        }
        let provider: AppleProviderConfig
        let client: ClientApp
        do {
            let found = try await database.read { db in
                (provider: try AppleProviderStore.load(db, realmID: realm.id),
                 client: try ClientAppStore.load(db, realmID: realm.id, clientID: request.clientID))
            }
            guard let config = found.provider, config.enabled else { throw NativeLoginError(.providerNotConfigured) }
            guard let app = found.client, app.enabled else { throw NativeLoginError(.unknownClient) }
            provider = config
            client = app
        } catch let error as NativeLoginError {
            throw error
        } catch {
            throw NativeLoginError(.internalFailure)
        }
        if request.downstreamState == nil, !client.firstParty { throw NativeLoginError(.clientNotAllowed) }

        let policy = AppleVerificationPolicy(audiences: Set(provider.acceptedAudiences), nonceRequired: realm.nonceRequired,
                                             rawNonce: request.rawNonce, realmID: realm.id)
        let claims: AppleIdentityClaims
        switch await verifier.verify(token: request.identityToken, policy: policy) {
        case .verified(let verified): claims = verified
        case .rejected(let reason): throw NativeLoginError(.invalidAppleToken, appleReason: reason)
        case .tooLarge: throw NativeLoginError(.tokenTooLarge)
        case .unavailable(let retryAfter): throw NativeLoginError(.appleUnavailable, retryAfterSeconds: retryAfter)
        case .replayStoreFailed: throw NativeLoginError(.internalFailure)
        }

        let resolution: AccountResolution
        do {
            resolution = try await AccountResolver(database: database, now: now).resolve(
                realmID: realm.id,
                claims: ProviderIdentityClaims(provider: Self.provider, subject: claims.subject, email: claims.email,
                                               emailVerified: claims.emailVerified, isPrivateEmail: claims.isPrivateEmail,
                                               name: request.fullName))
        } catch let error as AccountResolutionError {
            switch error.code {
            case .realmNotFound: throw NativeLoginError(.realmNotFound)
            case .registrationDisabled: throw NativeLoginError(.registrationDisabled)
            case .accountDisabled: throw NativeLoginError(.accountDisabled)
            }
        } catch {
            throw NativeLoginError(.internalFailure)
        }
        let accountID = resolution.account.id
        let authTime = now().unixSeconds

        if let state = request.downstreamState {
            guard let downstream else { throw NativeLoginError(.invalidDownstreamState, accountID: accountID) }
            do {
                let redirect = try await downstream(DownstreamCompletionRequest(
                    realmID: realm.id, issuer: tokens.issuer(realmID: realm.id), clientID: client.clientId, state: state,
                    accountID: accountID, authTime: authTime))
                return .downstream(redirectURI: redirect, accountID: accountID, isNewUser: resolution.isNewUser)
            } catch let error as NativeLoginError {
                throw NativeLoginError(error.code, appleReason: error.appleReason, accountID: accountID)
            } catch {
                throw NativeLoginError(.internalFailure, accountID: accountID)
            }
        }

        do {
            let issued = try await tokens.startSession(SessionRequest(
                realmID: realm.id, clientID: client.clientId, accountID: accountID, scope: client.allowedScopes,
                clientIP: request.clientIP, authTime: authTime,
                accessTokenTTL: client.accessTokenTTL ?? realm.accessTokenTTL,
                refreshTokenTTL: client.refreshTokenTTL ?? realm.refreshTokenTTL, ipBinding: client.ipBinding))
            return .session(issued, isNewUser: resolution.isNewUser)
        } catch let error as TokenError where error.code == .accountDisabled {
            throw NativeLoginError(.accountDisabled, accountID: accountID)
        } catch {
            throw NativeLoginError(.internalFailure, accountID: accountID)
        }
    }
}
