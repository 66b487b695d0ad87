import Foundation

/// A fresh directory under the system temp dir, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Creates the directory.
    public init() throws {
        path = NSTemporaryDirectory() + "herald-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }
}
