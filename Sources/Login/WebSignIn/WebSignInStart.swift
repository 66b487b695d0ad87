import Foundation
import Grants
import Realms
import Storage

/// The start of a web sign-in, the same for every provider: which realm, client and branch the
/// browser asks for, checked before any row is kept. The provider's own part (is it
/// configured for the web?) is the caller's reader.
public struct WebSignInStart: Sendable {
    /// Why a web sign-in could not start.
    public enum Refusal: Error, Sendable, Equatable {
        case realmNotFound
        /// No enabled provider, or one not set up for the web.
        case providerNotConfigured
        case unknownClient
        /// Branch A with a client that is not public first-party.
        case clientNotAllowed
        /// `returnTo` is not one of the client's registered redirect URIs.
        case returnToNotRegistered
        /// `downstreamState` names no authorization of the client that is waiting for a login.
        case downstreamStateNotPending
    }

    public let realmID: String
    public let clientID: String
    public let downstreamState: String?
    public let returnTo: String?

    public init(realmID: String, clientID: String, downstreamState: String?, returnTo: String?) {
        self.realmID = realmID
        self.clientID = clientID
        self.downstreamState = downstreamState
        self.returnTo = returnTo
    }

    /// The provider's configuration, once every check passed, in this order: realm, provider
    /// (`provider` reads it in the same read; nil: not configured), client, branch, pending
    /// authorization, `returnTo`.
    public func check<Provider: Sendable>(
        _ database: any Database, at: Int64,
        provider readProvider: @escaping @Sendable (any SQLExecutor, Realm) throws -> Provider?
    ) async throws -> Provider {
        guard InputRules.isSlug(realmID) else { throw Refusal.realmNotFound }
        let found = try await database.read { [self] db -> (Provider?, ClientApp?, Bool)? in
            guard let realm = try RealmStore.load(db, id: realmID), realm.enabled else { return nil }
            let pending = try downstreamState.map {
                try DownstreamAuthorizations.isPending(db, realmID: realmID, clientID: clientID, downstreamState: $0, at: at)
            } ?? true
            return (try readProvider(db, realm), try ClientAppStore.load(db, realmID: realmID, clientID: clientID), pending)
        }
        guard let (provider, client, downstreamPending) = found else { throw Refusal.realmNotFound }
        guard let provider else { throw Refusal.providerNotConfigured }
        guard let client, client.enabled else { throw Refusal.unknownClient }
        if downstreamState == nil, !client.firstParty || client.confidential { throw Refusal.clientNotAllowed }
        // A branch B row must name a real pending authorization, so what a caller can make
        // Herald keep is bounded by /authorize's own limits, not by this route's.
        guard downstreamPending else { throw Refusal.downstreamStateNotPending }
        if let returnTo, !client.redirectUris.contains(returnTo) { throw Refusal.returnToNotRegistered }
        return provider
    }

    /// Whether `pending`'s `returnTo` (if any) is still registered by its client, enabled, when
    /// the answer comes back: checked against the client as it is now, as /authorize and
    /// branch B do, so a redirect URI an admin removed during the flow receives no tokens.
    public static func returnToStillRegistered(_ pending: WebSignInStates.Pending, realmID: String,
                                               database: any Database) async throws -> Bool {
        guard let returnTo = pending.returnTo else { return true }
        let client = try await database.read { db in
            try ClientAppStore.load(db, realmID: realmID, clientID: pending.clientID)
        }
        guard let client, client.enabled else { return false }
        return client.redirectUris.contains(returnTo)
    }
}
