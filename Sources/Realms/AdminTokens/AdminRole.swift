/// What an admin token may do within its realms.
public enum AdminRole: String, Sendable, Equatable, CaseIterable, Codable {
    /// Reads and writes (every token created before roles existed).
    case admin
    /// Reads only: `GET` and `HEAD`.
    case viewer
}
