/// The span an overview covers (`?window=`): the last 24 hours by hour, or the last 7 days by
/// (UTC) day. The current hour or day is included, so the last slot is partial.
enum RealmOverviewWindow: String, Sendable, CaseIterable {
    case day = "24h"
    case week = "7d"

    /// Seconds per slot of the series.
    var slotSeconds: Int64 { self == .day ? 3600 : 86_400 }
    /// Slots in the series.
    var slotCount: Int { self == .day ? 24 : 7 }

    /// The start of the first slot for a window ending in the slot holding `at`.
    func start(at: Int64) -> Int64 {
        let slot = slotSeconds
        return at - ((at % slot) + slot) % slot - slot * Int64(slotCount - 1)
    }
}
