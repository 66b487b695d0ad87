import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Storage
import Testing
@testable import HeraldServer

@Suite struct ConfigurationTests {
    @Test func defaultsRun() throws {
        let configuration = try HeraldConfiguration.load(arguments: [], environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.publicURL == "http://127.0.0.1:8080")
        #expect(configuration.database == .sqlite(path: "./data/herald.db"))
        #expect(configuration.appleJWKSURL == "https://appleid.apple.com/auth/keys")
        #expect(configuration.logLevel == .info)
        #expect(configuration.adminToken == nil)
        #expect(configuration.perIPConnectionLimit == 256)
        #expect(configuration.connectionTimeoutSeconds == 30)
    }

    @Test func connectionSettingsComeFromEnvironmentAndFlags() throws {
        let fromEnvironment = try HeraldConfiguration.load(
            arguments: [], environment: ["HERALD_PER_IP_CONNECTION_LIMIT": "32", "HERALD_CONNECTION_TIMEOUT": "120"])
        #expect(fromEnvironment.perIPConnectionLimit == 32)
        #expect(fromEnvironment.connectionTimeoutSeconds == 120)
        let fromFlags = try HeraldConfiguration.load(
            arguments: ["--per-ip-connection-limit", "100000", "--connection-timeout=3600"],
            environment: ["HERALD_PER_IP_CONNECTION_LIMIT": "32", "HERALD_CONNECTION_TIMEOUT": "120"])
        #expect(fromFlags.perIPConnectionLimit == 100_000)
        #expect(fromFlags.connectionTimeoutSeconds == 3_600)
        let lowest = try HeraldConfiguration.load(
            arguments: [], environment: ["HERALD_PER_IP_CONNECTION_LIMIT": "1", "HERALD_CONNECTION_TIMEOUT": "1"])
        #expect(lowest.perIPConnectionLimit == 1)
        #expect(lowest.connectionTimeoutSeconds == 1)
    }

    @Test(arguments: ["0", "100001", "-1", "+5", "1e3", "abc", " 8", "99999999999999999999999"])
    func perIPConnectionLimitOutOfBoundsIsRefusedNamingTheVariable(value: String) {
        do {
            _ = try HeraldConfiguration.load(arguments: [], environment: ["HERALD_PER_IP_CONNECTION_LIMIT": value])
            Issue.record("'\(value)' was accepted")
        } catch {
            #expect(error.message.hasPrefix("HERALD_PER_IP_CONNECTION_LIMIT must be a number from 1 to 100000"))
            #expect(!error.message.contains("\n"))
        }
    }

    @Test(arguments: ["0", "3601", "-30", "30s", "1.5", ""])
    func connectionTimeoutOutOfBoundsIsRefusedNamingTheVariable(value: String) {
        do {
            // An empty environment variable counts as unset, so the empty case goes through the flag.
            _ = try HeraldConfiguration.load(arguments: ["--connection-timeout", value], environment: [:])
            Issue.record("'\(value)' was accepted")
        } catch {
            #expect(error.message.hasPrefix("HERALD_CONNECTION_TIMEOUT must be a number from 1 to 3600 seconds"))
        }
    }

    @Test func flagsOverrideEnvironment() throws {
        let configuration = try HeraldConfiguration.load(
            arguments: ["--port", "9001", "--log-level=debug"],
            environment: ["HERALD_PORT": "9000", "HERALD_HOST": "0.0.0.0", "HERALD_LOG_LEVEL": "error"])
        #expect(configuration.port == 9001)
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.logLevel == .debug)
        #expect(configuration.publicURL == "http://0.0.0.0:9001")
    }

    @Test func googleURLsComeFromEnvironmentAndFlags() throws {
        let defaults = try HeraldConfiguration.load(arguments: [], environment: [:])
        #expect(defaults.googleJWKSURL == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(defaults.googleGSIScriptURL == "https://accounts.google.com/gsi/client")
        let configured = try HeraldConfiguration.load(
            arguments: ["--google-gsi-script-url=http://127.0.0.1:9/gsi/client"],
            environment: ["HERALD_GOOGLE_JWKS_URL": "http://127.0.0.1:9/oauth2/v3/certs"])
        #expect(configured.googleJWKSURL == "http://127.0.0.1:9/oauth2/v3/certs")
        #expect(configured.googleGSIScriptURL == "http://127.0.0.1:9/gsi/client")
    }

    @Test func publicURLLosesTrailingSlash() throws {
        let configuration = try HeraldConfiguration.load(arguments: ["--public-url", "https://id.example.com/"], environment: [:])
        #expect(configuration.publicURL == "https://id.example.com")
    }

    @Test(arguments: [
        ["--port", "eighty"], ["--port", "0"], ["--port", "70000"], ["--database", "mysql://x"],
        ["--host", "example.com"], ["--log-level", "loud"], ["--trusted-proxies", "10.0.0.0/40"],
        ["--public-url", "ftp://x"], ["--bogus", "1"], ["--port"],
        ["--google-jwks-url", "certs.json"], ["--google-gsi-script-url", "https://gsi.example/client?x=1"],
        ["--google-gsi-script-url", "javascript:alert(1)"],
    ])
    func badConfigurationIsRefusedWithOneLine(arguments: [String]) {
        #expect(throws: ConfigurationError.self) {
            try HeraldConfiguration.load(arguments: arguments, environment: [:])
        }
    }

    @Test func shortAdminTokenIsRefused() {
        #expect(throws: ConfigurationError.self) {
            try HeraldConfiguration.load(arguments: [], environment: ["HERALD_ADMIN_TOKEN": "short"])
        }
    }

    @Test func databaseConnectionsComeFromEnvironmentAndFlags() throws {
        #expect(try HeraldConfiguration.load(arguments: [], environment: [:]).databaseConnections == 8)
        let environment = ["HERALD_DATABASE_CONNECTIONS": "16"]
        #expect(try HeraldConfiguration.load(arguments: [], environment: environment).databaseConnections == 16)
        let fromFlag = try HeraldConfiguration.load(arguments: ["--database-connections=64"], environment: environment)
        #expect(fromFlag.databaseConnections == 64)
        #expect(try HeraldConfiguration.load(arguments: ["--database-connections", "1"], environment: [:]).databaseConnections == 1)
    }

    @Test(arguments: ["0", "65", "-1", "8 ", "eight", "99999999999999999999999"])
    func databaseConnectionsOutOfBoundsAreRefusedNamingTheVariable(value: String) {
        do {
            _ = try HeraldConfiguration.load(arguments: [], environment: ["HERALD_DATABASE_CONNECTIONS": value])
            Issue.record("'\(value)' was accepted")
        } catch {
            #expect(error.message.hasPrefix("HERALD_DATABASE_CONNECTIONS must be a number from 1 to 64"))
        }
    }

    @Test func databasePasswordIsNotEchoed() {
        do {
            _ = try HeraldConfiguration.load(arguments: ["--database", "redis://u:hunter2secret@h/db"], environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(!error.message.contains("hunter2secret"))
        }
    }
}

@Suite struct ClientAddressTests {
    @Test func socketPeerWhenNoProxyIsTrusted() {
        let resolver = ClientAddressResolver(trustedProxies: [])
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.9"]) == "127.0.0.1")
    }

    @Test func rightmostUntrustedHopBehindTrustedProxies() {
        let resolver = ClientAddressResolver(trustedProxies: ["127.0.0.0/8", "10.0.0.0/8"])
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: ["6.6.6.6, 203.0.113.9, 10.1.2.3"]) == "203.0.113.9")
        #expect(resolver.clientAddress(peer: "192.0.2.1", forwardedFor: ["203.0.113.9"]) == "192.0.2.1")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: ["garbage"]) == "127.0.0.1")
    }

    @Test func ipv6Ranges() {
        let range = IPAddressRange(cidr: "2001:db8::/32")
        #expect(range?.contains("2001:db8::1") == true)
        #expect(range?.contains("2001:db9::1") == false)
        #expect(range?.contains("10.0.0.1") == false)
    }
}

@Suite struct LoggerTests {
    @Test func linesAreJSONWithEscapedFields() throws {
        let capture = LogCapture()
        let logger = Logger(level: .info, now: { Date(timeIntervalSince1970: 1_700_000_000.123) }, sink: capture.sink)
        logger.debug("hidden")
        logger.info("event", ["text": "quote\" and \\ and \n", "n": 3, "ok": .bool(true), "plain": "abc-123",
                              "unicode": "Zoë 日本", "control": "a\u{1}b\u{1F}c"])
        let lines = capture.captured
        #expect(lines.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(object?["ts"] as? String == "2023-11-14T22:13:20.123Z")
        #expect(object?["text"] as? String == "quote\" and \\ and \n")
        #expect(object?["plain"] as? String == "abc-123")
        #expect(object?["unicode"] as? String == "Zoë 日本")
        #expect(object?["control"] as? String == "a\u{1}b\u{1F}c")
        #expect(lines[0].contains(#""control":"a\u0001b\u001fc""#))
        #expect(object?["n"] as? Int == 3)
    }

    @Test func bufferedWriterDeliversEveryLineInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writer = BufferedLogWriter(fileDescriptor: fds[1])
        for index in 0..<100 { writer.append("line \(index)") }
        writer.flush()
        close(fds[1])
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        close(fds[0])
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == (0..<100).map { "line \($0)" })
    }
}

/// The connection settings reach the running server.
@Suite struct ConnectionSettingsServingTests {
    @Test func perIPConnectionLimitOfTwoDropsAThirdConnectionWhileTwoStayServed() async throws {
        try await RunningHerald.with(configure: { $0.perIPConnectionLimit = 2 }) { herald in
            let port = herald.application.port
            let (firstRound, thirdClosed, secondRound) = try await KeptAliveConnection.run { () throws -> ([Int], Bool, [Int]) in
                let admitted = try (0..<2).map { _ in try KeptAliveConnection(port: port) }
                // Each answered request proves MHD accepted the connection before the third one.
                let firstRound = try admitted.map { try $0.get("/healthz") }
                let third = try KeptAliveConnection(port: port)
                let thirdClosed = third.isClosedAfterSending("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
                let secondRound = try admitted.map { try $0.get("/healthz") }
                return (firstRound, thirdClosed, secondRound)
            }
            #expect(firstRound == [200, 200])
            #expect(thirdClosed, "a third connection from 127.0.0.1 was served")
            #expect(secondRound == [200, 200])
        }
    }

    @Test func connectionTimeoutClosesAnIdleConnection() async throws {
        try await RunningHerald.with(configure: { $0.connectionTimeoutSeconds = 1 }) { herald in
            let port = herald.application.port
            let (status, closed) = try await KeptAliveConnection.run { () throws -> (Int, Bool) in
                let connection = try KeptAliveConnection(port: port)
                let status = try connection.get("/healthz")
                // The socket's receive timeout (10 s) is far beyond 1 s and far below the default 30 s.
                return (status, connection.isClosedByPeer())
            }
            #expect(status == 200)
            #expect(closed)
        }
    }
}

/// One keep-alive connection to 127.0.0.1 over a blocking socket; use it inside `run` only.
private final class KeptAliveConnection {
    private let socket: Int32

    init(port: UInt16) throws {
        socket = try TestHTTPClient(port: port).connectSocket()
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    /// Sends a GET on this connection (kept alive) and returns the response's status.
    func get(_ path: String) throws -> Int {
        try send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !TestHTTPClient.isComplete(received) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw TestClientError("connection closed while reading") }
            received += buffer[0..<count]
        }
        return try TestHTTPClient.parse(received).status
    }

    /// Whether the server closes the connection (EOF or reset) instead of answering `request`.
    func isClosedAfterSending(_ request: String) -> Bool {
        do { try send(request) } catch { return true }
        return isClosedByPeer()
    }

    /// True on EOF or reset; a receive timeout or data is not a close.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    private func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw TestClientError("send failed") }
            offset += written
        }
    }

    /// Runs blocking socket work on a thread of its own, off the cooperative pool.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
