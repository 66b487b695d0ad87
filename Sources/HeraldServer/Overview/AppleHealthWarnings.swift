import Synchronization

/// Each realm's current Apple health warnings, as the gauge `herald_apple_health_warning{realm,kind}`
/// (1 while the condition holds, 0 once a realm was checked and it does not), so Prometheus can
/// alert on what the console's overview says in words. Set when an overview is computed
/// (`RealmOverviews`, and `AppleHealthMonitor` for every realm with Apple configured) and, for a
/// client secret, at once by the exchange that Apple refused or accepted.
final class AppleHealthWarnings: Sendable {
    /// What can be wrong; raw values are the gauge's `kind` label and the API's `kind`.
    enum Kind: String, Sendable, CaseIterable, Encodable {
        /// Apple answered `invalid_client` to the latest exchange: the Team ID, Key ID or key is wrong.
        case clientSecretRejected = "client_secret_rejected"
        /// Apple's key set is past its freshness and the last refresh failed.
        case staleKeys = "stale_keys"
        /// Apple's key set was never fetched: every fetch so far failed.
        case keysUnavailable = "keys_unavailable"
        /// Apple refresh tokens are stored, but no notification came for `silenceDays`.
        case notificationsSilent = "notifications_silent"
        /// Revocations Apple never took were given up.
        case revocationsFailed = "revocations_failed"
        /// Return URLs are set for the web flow, but the Team ID, Key ID or private key is missing.
        case webFlowIncomplete = "web_flow_incomplete"
    }

    /// Realms tracked at most (they are realms that exist, checked by an operator or the monitor).
    static let capacity = 10_000

    private let state = Mutex<[String: Set<Kind>]>([:])

    /// Replaces the realm's warnings with `kinds` (the result of a full check).
    func replace(realmID: String, with kinds: Set<Kind>) {
        state.withLock { state in
            guard state[realmID] != nil || state.count < Self.capacity else { return }
            state[realmID] = kinds
        }
    }

    /// Turns one warning on or off.
    func set(_ kind: Kind, active: Bool, realmID: String) {
        state.withLock { state in
            guard state[realmID] != nil || state.count < Self.capacity else { return }
            if active { state[realmID, default: []].insert(kind) } else { state[realmID, default: []].remove(kind) }
        }
    }

    /// Forgets a realm (deleted, or Apple no longer configured).
    func forget(realmID: String) {
        state.withLock { $0[realmID] = nil }
    }

    /// Forgets every realm but `realmIDs` (those a full round found).
    func retain(realmIDs: Set<String>) {
        state.withLock { state in state = state.filter { realmIDs.contains($0.key) } }
    }

    /// The realm's active warnings.
    func active(realmID: String) -> Set<Kind> {
        state.withLock { $0[realmID] ?? [] }
    }

    /// The gauge in the Prometheus text format: every kind of every realm tracked.
    func prometheusText() -> String {
        let name = "herald_apple_health_warning"
        var text = "# HELP \(name) 1 while an Apple health warning holds for the realm (the console's overview explains it).\n"
        text += "# TYPE \(name) gauge\n"
        let realms = state.withLock { $0 }
        for (realm, kinds) in realms.sorted(by: { $0.key < $1.key }) {
            for kind in Kind.allCases {
                text += "\(name){realm=\"\(HeraldMetrics.escape(realm))\",kind=\"\(kind.rawValue)\"} \(kinds.contains(kind) ? 1 : 0)\n"
            }
        }
        return text
    }
}
