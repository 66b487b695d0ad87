/// Who asks for an account's deletion: it decides the security event recorded and the audit actor.
public enum AccountDeletionRequester: Sendable, Equatable {
    /// An operator (admin API, CLI, Apple's notification): `account.deleted`, audited under the
    /// context's actor and reason.
    case admin(ChangeContext)
    /// The account's owner with one of its sessions (`DELETE /api/auth/{realm}/me`):
    /// `account.deleted_by_user` naming the session, its client and the caller's address, audited
    /// under the actor `account-owner`.
    case owner(sessionID: String, clientID: String, clientIP: String?)
}

/// What a deletion request did.
public struct AccountDeletion: Sendable, Equatable {
    /// Whether this request deleted the account; false when it was already deleted (nothing changed).
    public let deletedNow: Bool
    /// The deletion hook's label (the deletion event's `reason`: for the Apple tokens `queued`,
    /// `not_stored` or `not_configured`): this request's when it deleted the account, else the
    /// one recorded with the deletion that did; nil when none was recorded (no hook, Apple's own
    /// `account-delete` notification, or the event is past its retention).
    public let followUp: String?

    public init(deletedNow: Bool, followUp: String?) {
        self.deletedNow = deletedNow
        self.followUp = followUp
    }
}
