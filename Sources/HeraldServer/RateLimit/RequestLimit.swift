/// A request budget: at most `requests` requests in each fixed window of `windowSeconds`.
/// Read from configuration as `N/SECONDS` (e.g. `600/60`) or `off`.
public struct RequestLimit: Sendable, Equatable {
    public static let requestsRange = 1...100_000_000
    public static let windowRange = 1...86_400

    public var requests: Int
    public var windowSeconds: Int

    public init(requests: Int, windowSeconds: Int) {
        self.requests = requests
        self.windowSeconds = windowSeconds
    }

    /// `N/SECONDS` within the ranges; nil for anything else (the caller names the variable).
    init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
              let requests = Int(parts[0]), let window = Int(parts[1]),
              Self.requestsRange.contains(requests), Self.windowRange.contains(window) else { return nil }
        self.init(requests: requests, windowSeconds: window)
    }
}

extension RequestLimit {
    /// The fixed window holding `at` (unix seconds): windows start at multiples of
    /// `windowSeconds`, so every node puts a request in the same one.
    func window(at: Int64) -> RequestWindow {
        let length = Int64(windowSeconds)
        let start = at - at % length
        return RequestWindow(start: start, end: start + length)
    }
}

/// One fixed window of a `RequestLimit`, in unix seconds.
struct RequestWindow: Sendable, Equatable {
    let start: Int64
    let end: Int64

    /// The `Retry-After` of a request refused at `at`: the seconds until the window ends, at least 1.
    func retryAfter(at: Int64) -> Int { Int(max(1, end - at)) }
}

/// The request limits of `/token`, `/introspect`, `/revoke`, session refresh and `/authorize`
/// (each endpoint has its own budget per client IP (`RateLimitKey`) and per client id), and the
/// failed admin authentications per client IP; nil turns that limit off.
public struct RequestLimits: Sendable, Equatable {
    /// 10 requests a second per address on average: far above what one app or browser sends
    /// (a refresh every few minutes), low enough to blunt a single-address flood; a carrier NAT
    /// that puts many users behind one address is why it is not tighter.
    public var perIP: RequestLimit? = RequestLimit(requests: 600, windowSeconds: 60)
    /// A client's whole traffic (every user of one app) on one endpoint.
    public var perClient: RequestLimit? = RequestLimit(requests: 60_000, windowSeconds: 60)
    /// Failed admin authentications (a wrong or malformed token) per client IP, on every
    /// admin route together. Admin tokens carry 256 random bits, so this is not what keeps
    /// them from being guessed; it keeps one address from hammering the token lookup and
    /// makes a scanner visible, while leaving room for an operator's typos.
    public var adminFailuresPerIP: RequestLimit? = RequestLimit(requests: 20, windowSeconds: 300)

    public init() {}
}
