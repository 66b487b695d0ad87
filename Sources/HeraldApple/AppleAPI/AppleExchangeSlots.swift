import Synchronization

/// A count of authorization-code exchanges waiting on Apple, shared by every copy of one
/// `AppleAPIClient`, so native logins and the web flow draw on one budget.
final class AppleExchangeSlots: Sendable {
    let capacity: Int
    private let inFlight = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Takes a slot; false (and nothing taken) when all `capacity` are in use.
    func take() -> Bool {
        guard inFlight.wrappingAdd(1, ordering: .relaxed).newValue <= capacity else {
            inFlight.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func give() {
        inFlight.wrappingSubtract(1, ordering: .relaxed)
    }
}
