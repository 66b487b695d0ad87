/// `GET /api/admin/realms/:realm/overview`: a realm's sign-ins over a window, by slot, outcome,
/// reason, provider and door, with Apple's health and the warnings that follow from it.
struct RealmOverview: Sendable, Encodable {
    /// Logins with one set of labels.
    struct Count: Sendable, Encodable, Equatable {
        let provider: String
        let door: String
        /// `success`, `rejected` (the caller's fault) or `error` (ours or the provider's).
        let outcome: String
        /// `created` / `existing` for a success, else the refusal's reason.
        let reason: String
        let count: Int64
    }

    /// One hour (24h) or day (7d) of the series.
    struct Slot: Sendable, Encodable, Equatable {
        /// Unix seconds at the slot's start.
        let start: Int64
        let success: Int64
        let rejected: Int64
        let error: Int64
        /// The slot's non-zero counts by labels.
        let counts: [Count]
    }

    /// The window's sums.
    struct Totals: Sendable, Encodable, Equatable {
        var attempts: Int64 = 0
        var success: Int64 = 0
        /// Successes that created an account.
        var newAccounts: Int64 = 0
        var rejected: Int64 = 0
        var error: Int64 = 0
    }

    /// The window's sums for one provider through one door.
    struct ProviderDoor: Sendable, Encodable, Equatable {
        let provider: String
        let door: String
        var attempts: Int64 = 0
        var success: Int64 = 0
        var rejected: Int64 = 0
        var error: Int64 = 0
    }

    /// The window's sum for one outcome and reason.
    struct ReasonCount: Sendable, Encodable, Equatable {
        let outcome: String
        let reason: String
        let count: Int64
    }

    /// Something the operator should fix, in plain words.
    struct Warning: Sendable, Encodable, Equatable {
        let kind: AppleHealthWarnings.Kind
        let message: String
        /// When the condition was seen (unix seconds), when it has a moment.
        let at: Int64?
    }

    let realmId: String
    let window: String
    /// The first slot's start and the time of the answer (unix seconds).
    let from: Int64
    let generatedAt: Int64
    let slotSeconds: Int64
    let totals: Totals
    let byProviderDoor: [ProviderDoor]
    let byReason: [ReasonCount]
    let slots: [Slot]
    let apple: AppleHealth
    let warnings: [Warning]
}
