import HeraldApple
import Synchronization

/// The last code exchange with Apple per realm on this node (ok, or Apple's error), for the
/// realm overview: refusals are also security events (`AppleExchangeRefusals`), but a success or
/// an outage is not stored anywhere, and the overview must tell a fixed Key ID from a still
/// broken one. Memory only, so after a restart the overview falls back on the latest refusal
/// event until the next exchange.
final class AppleExchangeOutcomes: Sendable {
    /// How one exchange ended, at unix seconds `at`; `failure` nil when Apple answered tokens.
    struct Outcome: Sendable, Equatable {
        let failure: AppleAPIFailure?
        let at: Int64
    }

    /// Realms remembered at most; past it the realm with the oldest outcome is forgotten.
    static let capacity = 10_000

    private let outcomes = Mutex<[String: Outcome]>([:])
    private let capacity: Int

    init(capacity: Int = AppleExchangeOutcomes.capacity) {
        self.capacity = capacity
    }

    /// Notes how the realm's latest exchange ended.
    func record(realmID: String, failure: AppleAPIFailure?, at: Int64) {
        outcomes.withLock { outcomes in
            if outcomes[realmID] == nil, outcomes.count >= capacity,
               let oldest = outcomes.min(by: { $0.value.at < $1.value.at })?.key {
                outcomes[oldest] = nil
            }
            // Exchanges finish out of order (the web door and the queue): keep the newest.
            if let known = outcomes[realmID], known.at > at { return }
            outcomes[realmID] = Outcome(failure: failure, at: at)
        }
    }

    /// The realm's latest exchange on this node, if any since start.
    func last(realmID: String) -> Outcome? {
        outcomes.withLock { $0[realmID] }
    }
}
