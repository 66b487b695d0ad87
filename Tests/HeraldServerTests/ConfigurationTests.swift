import Foundation
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

    @Test func publicURLLosesTrailingSlash() throws {
        let configuration = try HeraldConfiguration.load(arguments: ["--public-url", "https://id.example.com/"], environment: [:])
        #expect(configuration.publicURL == "https://id.example.com")
    }

    @Test(arguments: [
        ["--port", "eighty"], ["--port", "0"], ["--port", "70000"], ["--database", "mysql://x"],
        ["--host", "example.com"], ["--log-level", "loud"], ["--trusted-proxies", "10.0.0.0/40"],
        ["--public-url", "ftp://x"], ["--bogus", "1"], ["--port"],
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
        logger.info("event", ["text": "quote\" and \\ and \n", "n": 3, "ok": .bool(true)])
        let lines = capture.captured
        #expect(lines.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(object?["ts"] as? String == "2023-11-14T22:13:20.123Z")
        #expect(object?["text"] as? String == "quote\" and \\ and \n")
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
