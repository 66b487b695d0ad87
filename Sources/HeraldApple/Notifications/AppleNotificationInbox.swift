import Foundation
import Realms
import Storage

/// `POST …/apple/notifications` without the HTTP: finds the realm's Apple provider, verifies
/// the payload against its audiences, and processes it once.
public struct AppleNotificationInbox: Sendable {
    /// What receiving one payload gave.
    public enum Receipt: Sendable, Equatable {
        case processed(AppleNotification.EventType, AppleNotificationProcessor.Outcome)
        case rejected(AppleNotificationRejection)
        case unavailable(retryAfterSeconds: Int)
        case realmNotFound
        case providerNotConfigured
    }

    private let database: any Database
    private let verifier: AppleNotificationVerifier
    private let processor: AppleNotificationProcessor

    public init(database: any Database, verifier: AppleNotificationVerifier, processor: AppleNotificationProcessor) {
        self.database = database
        self.verifier = verifier
        self.processor = processor
    }

    /// Receives `payload` for realm `realmID`. Throws storage errors only.
    public func receive(payload: String, realmID: String) async throws -> Receipt {
        guard InputRules.isSlug(realmID) else { return .realmNotFound }
        let provider = try await database.read { db -> AppleProviderConfig?? in
            guard let realm = try RealmStore.load(db, id: realmID), realm.enabled else { return nil }
            return .some(try AppleProviderStore.load(db, realmID: realmID))
        }
        guard let provider else { return .realmNotFound }
        // A disabled provider still hears Apple's account events: consent and deletions must
        // reach Herald's accounts whether or not new logins are allowed.
        guard let provider else { return .providerNotConfigured }
        switch await verifier.verify(payload: payload, audiences: Set(provider.acceptedAudiences)) {
        case .rejected(let rejection): return .rejected(rejection)
        case .unavailable(let retryAfter): return .unavailable(retryAfterSeconds: retryAfter)
        case .verified(let notification):
            return .processed(notification.type, try await processor.process(notification, realmID: realmID))
        }
    }
}
