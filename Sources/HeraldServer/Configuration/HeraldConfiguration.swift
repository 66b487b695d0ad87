import Foundation
import Storage

/// Everything `herald serve` needs to run, read from flags over environment over defaults.
public struct HeraldConfiguration: Sendable, Equatable {
    public var host: String = "127.0.0.1"
    public var port: UInt16 = 8080
    /// Base of every issuer (`{publicURL}/api/oauth/{realm}`), without a trailing slash.
    public var publicURL: String
    public var database: DatabaseLocation = .sqlite(path: "./data/herald.db")
    /// PostgreSQL connections this node keeps (`HERALD_DATABASE_CONNECTIONS`); a request that
    /// finds them all busy waits for one. SQLite has its own writer and readers and ignores it.
    public var databaseConnections: Int = 8
    /// 32-byte key that encrypts secrets at rest; nil → the key file beside the SQLite database.
    public var masterKey: String?
    /// Bootstrap admin token from the environment (≥ 32 characters), registered as "env".
    public var adminToken: String?
    public var appleJWKSURL: String = "https://appleid.apple.com/auth/keys"
    /// Base of Apple's token and revoke endpoints (`/auth/token`, `/auth/revoke`).
    public var appleBaseURL: String = "https://appleid.apple.com"
    /// Google's signing keys (`HERALD_GOOGLE_JWKS_URL`), for Sign in with Google's ID tokens.
    public var googleJWKSURL: String = "https://www.googleapis.com/oauth2/v3/certs"
    /// Google's Identity Services script, loaded by the Google web sign-in page; its origin is
    /// the one the page's CSP allows (`HERALD_GOOGLE_GSI_SCRIPT_URL`; a test points it at a fake).
    public var googleGSIScriptURL: String = "https://accounts.google.com/gsi/client"
    public var trustedProxies: [String] = []
    public var logLevel: LogLevel = .info
    /// Most concurrent connections from one client address (the socket peer: behind a proxy,
    /// the proxy). At or above the overall limit of 1024 it never binds.
    public var perIPConnectionLimit: Int = 256
    /// Idle seconds before a connection is dropped (every byte received resets it).
    public var connectionTimeoutSeconds: Int = 30
    /// Request limits of `/token`, session refresh and `/authorize` (per client IP, per client).
    public var requestLimits = RequestLimits()
    /// How long security events stay queryable (`/api/admin/realms/{id}/events`), in days.
    public var eventRetentionDays: Int = 30
    /// The second listener that alone serves `/api/admin/*`, `/console*` and `/metrics`; nil
    /// serves everything on the public one.
    public var adminListen: ListenAddress?

    /// Bounds of `perIPConnectionLimit`; libmicrohttpd's 0 ("unlimited") is not offered:
    /// a value of the overall connection limit or more already never binds.
    static let perIPConnectionLimitRange = 1...100_000
    /// Bounds of `connectionTimeoutSeconds`; libmicrohttpd's 0 (never time out) is not offered.
    static let connectionTimeoutRange = 1...3_600
    /// Bounds of `databaseConnections`: every node's connections count against PostgreSQL's
    /// `max_connections` (100 by default).
    static let databaseConnectionsRange = 1...64
    /// Bounds of `eventRetentionDays` (ten years).
    static let eventRetentionRange = 1...3_650

    public init() {
        publicURL = "http://127.0.0.1:8080"
    }

    /// The variables `herald serve` reads, by environment name and flag.
    static let settings: [(env: String, flag: String?)] = [
        ("HERALD_HOST", "--host"), ("HERALD_PORT", "--port"), ("HERALD_PUBLIC_URL", "--public-url"),
        ("HERALD_DATABASE", "--database"), ("HERALD_DATABASE_CONNECTIONS", "--database-connections"),
        ("HERALD_MASTER_KEY", nil), ("HERALD_ADMIN_TOKEN", nil),
        ("HERALD_APPLE_JWKS_URL", "--apple-jwks-url"), ("HERALD_APPLE_BASE_URL", "--apple-base-url"),
        ("HERALD_GOOGLE_JWKS_URL", "--google-jwks-url"), ("HERALD_GOOGLE_GSI_SCRIPT_URL", "--google-gsi-script-url"),
        ("HERALD_TRUSTED_PROXIES", "--trusted-proxies"),
        ("HERALD_LOG_LEVEL", "--log-level"), ("HERALD_PER_IP_CONNECTION_LIMIT", "--per-ip-connection-limit"),
        ("HERALD_CONNECTION_TIMEOUT", "--connection-timeout"),
        ("HERALD_RATE_LIMIT_PER_IP", "--rate-limit-per-ip"), ("HERALD_RATE_LIMIT_PER_CLIENT", "--rate-limit-per-client"),
        ("HERALD_ADMIN_AUTH_FAILURE_LIMIT", "--admin-auth-failure-limit"),
        ("HERALD_EVENT_RETENTION", "--event-retention"), ("HERALD_ADMIN_LISTEN", "--admin-listen"),
    ]

    /// Reads flags (`--port 9000` or `--port=9000`) over environment variables over defaults.
    /// Throws a `ConfigurationError` whose message is one clear line for the operator.
    public static func load(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> HeraldConfiguration {
        var values: [String: String] = [:]
        for (env, _) in settings {
            if let value = environment[env], !value.isEmpty { values[env] = value }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name: String
            let inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inlineValue = nil
            }
            guard let setting = settings.first(where: { $0.flag == name }) else {
                throw ConfigurationError("unknown option '\(name)'")
            }
            if let inlineValue {
                values[setting.env] = inlineValue
                index += 1
            } else {
                guard index + 1 < arguments.count else { throw ConfigurationError("option '\(name)' needs a value") }
                values[setting.env] = arguments[index + 1]
                index += 2
            }
        }
        return try HeraldConfiguration(values: values)
    }

    init(values: [String: String]) throws(ConfigurationError) {
        self.init()
        if let host = values["HERALD_HOST"] {
            guard HeraldConfiguration.isIPAddress(host) else {
                throw ConfigurationError("HERALD_HOST must be an IPv4 or IPv6 address, got '\(host.prefix(64))'")
            }
            self.host = host
        }
        if let port = values["HERALD_PORT"] {
            guard let number = UInt16(port), number > 0 else {
                throw ConfigurationError("HERALD_PORT must be a number from 1 to 65535, got '\(port.prefix(32))'")
            }
            self.port = number
        }
        if let url = values["HERALD_PUBLIC_URL"] {
            guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme),
                  parsed.host != nil, parsed.query == nil, parsed.fragment == nil else {
                throw ConfigurationError("HERALD_PUBLIC_URL must be an absolute http(s) URL without query or fragment")
            }
            publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        } else {
            let hostPart = host.contains(":") ? "[\(host)]" : host
            publicURL = "http://\(hostPart):\(port)"
        }
        if let database = values["HERALD_DATABASE"] {
            do {
                self.database = try DatabaseLocation(parsing: database)
            } catch {
                throw ConfigurationError("HERALD_DATABASE: \(error.message)")
            }
        }
        if let connections = values["HERALD_DATABASE_CONNECTIONS"] {
            databaseConnections = try Self.integer(connections, named: "HERALD_DATABASE_CONNECTIONS",
                                                   in: Self.databaseConnectionsRange)
        }
        masterKey = values["HERALD_MASTER_KEY"]
        if let token = values["HERALD_ADMIN_TOKEN"] {
            guard token.count >= 32, token.count <= 512 else {
                throw ConfigurationError("HERALD_ADMIN_TOKEN must be 32 to 512 characters long")
            }
            adminToken = token
        }
        if let jwks = values["HERALD_APPLE_JWKS_URL"] {
            guard Self.isAbsoluteHTTPURL(jwks) else {
                throw ConfigurationError("HERALD_APPLE_JWKS_URL must be an absolute http(s) URL")
            }
            appleJWKSURL = jwks
        }
        if let jwks = values["HERALD_GOOGLE_JWKS_URL"] {
            guard Self.isAbsoluteHTTPURL(jwks) else {
                throw ConfigurationError("HERALD_GOOGLE_JWKS_URL must be an absolute http(s) URL")
            }
            googleJWKSURL = jwks
        }
        if let script = values["HERALD_GOOGLE_GSI_SCRIPT_URL"] {
            guard Self.isAbsoluteHTTPURL(script), let parsed = URL(string: script), parsed.query == nil,
                  parsed.fragment == nil else {
                throw ConfigurationError("HERALD_GOOGLE_GSI_SCRIPT_URL must be an absolute http(s) URL without a query")
            }
            googleGSIScriptURL = script
        }
        if let base = values["HERALD_APPLE_BASE_URL"] {
            guard let parsed = URL(string: base), let scheme = parsed.scheme, ["http", "https"].contains(scheme),
                  parsed.host != nil, parsed.query == nil else {
                throw ConfigurationError("HERALD_APPLE_BASE_URL must be an absolute http(s) URL without a query")
            }
            appleBaseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        }
        if let proxies = values["HERALD_TRUSTED_PROXIES"] {
            let entries = proxies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for entry in entries where IPAddressRange(cidr: entry) == nil {
                throw ConfigurationError("HERALD_TRUSTED_PROXIES: '\(entry.prefix(64))' is not an IP address or CIDR range")
            }
            trustedProxies = entries
        }
        if let level = values["HERALD_LOG_LEVEL"] {
            guard let parsed = LogLevel(rawValue: level.lowercased()) else {
                throw ConfigurationError("HERALD_LOG_LEVEL must be one of debug, info, warning, error")
            }
            logLevel = parsed
        }
        if let limit = values["HERALD_PER_IP_CONNECTION_LIMIT"] {
            perIPConnectionLimit = try Self.integer(limit, named: "HERALD_PER_IP_CONNECTION_LIMIT",
                                                    in: Self.perIPConnectionLimitRange)
        }
        if let timeout = values["HERALD_CONNECTION_TIMEOUT"] {
            connectionTimeoutSeconds = try Self.integer(timeout, named: "HERALD_CONNECTION_TIMEOUT",
                                                        in: Self.connectionTimeoutRange, unit: " seconds")
        }
        if let limit = values["HERALD_RATE_LIMIT_PER_IP"] {
            requestLimits.perIP = try Self.requestLimit(limit, named: "HERALD_RATE_LIMIT_PER_IP")
        }
        if let limit = values["HERALD_RATE_LIMIT_PER_CLIENT"] {
            requestLimits.perClient = try Self.requestLimit(limit, named: "HERALD_RATE_LIMIT_PER_CLIENT")
        }
        if let limit = values["HERALD_ADMIN_AUTH_FAILURE_LIMIT"] {
            requestLimits.adminFailuresPerIP = try Self.requestLimit(limit, named: "HERALD_ADMIN_AUTH_FAILURE_LIMIT")
        }
        if let retention = values["HERALD_EVENT_RETENTION"] {
            eventRetentionDays = try Self.integer(retention, named: "HERALD_EVENT_RETENTION",
                                                  in: Self.eventRetentionRange, unit: " days")
        }
        if let listen = values["HERALD_ADMIN_LISTEN"] {
            guard let address = ListenAddress(parsing: listen) else {
                throw ConfigurationError("HERALD_ADMIN_LISTEN must be IP:PORT (IPv6 as [ADDRESS]:PORT), got '\(listen.prefix(64))'")
            }
            // Checked here, not left to the bind: one address cannot be both listeners.
            if address.port == port, address.host == host {
                throw ConfigurationError("HERALD_ADMIN_LISTEN must differ from the public HERALD_HOST:HERALD_PORT")
            }
            adminListen = address
        }
    }

    /// `N/SECONDS`, or `off` (nil), else the error naming the variable and the form.
    private static func requestLimit(_ text: String, named name: String) throws(ConfigurationError) -> RequestLimit? {
        if text.lowercased() == "off" { return nil }
        guard let limit = RequestLimit(parsing: text) else {
            throw ConfigurationError("\(name) must be REQUESTS/SECONDS (requests \(RequestLimit.requestsRange.lowerBound)-\(RequestLimit.requestsRange.upperBound), seconds \(RequestLimit.windowRange.lowerBound)-\(RequestLimit.windowRange.upperBound)) or off, got '\(text.prefix(32))'")
        }
        return limit
    }

    /// A decimal integer within `range`, else the error naming the variable and its bounds.
    private static func integer(_ text: String, named name: String, in range: ClosedRange<Int>,
                                unit: String = "") throws(ConfigurationError) -> Int {
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let number = Int(text), range.contains(number) else {
            throw ConfigurationError("\(name) must be a number from \(range.lowerBound) to \(range.upperBound)\(unit), got '\(text.prefix(32))'")
        }
        return number
    }

    /// Whether `text` is an absolute http(s) URL with a host.
    private static func isAbsoluteHTTPURL(_ text: String) -> Bool {
        guard let parsed = URL(string: text), let scheme = parsed.scheme else { return false }
        return ["http", "https"].contains(scheme) && parsed.host != nil
    }

    static func isIPAddress(_ text: String) -> Bool {
        IPAddressRange(cidr: text) != nil && !text.contains("/")
    }
}

/// A configuration problem, described in one line for the operator (never echoes secrets).
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
