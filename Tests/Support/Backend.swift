/// The database backends the backend-agnostic suites run against, as a Swift Testing argument:
/// `@Test(arguments: Backend.allCases) func x(backend: Backend)`.
public enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The name shown in test results.
    public var description: String { rawValue }
}
