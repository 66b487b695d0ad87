import Foundation
import JOSE
#if canImport(Glibc)
import Glibc
#endif

/// What came back for one hostile request: a parsed response, the server closing the
/// connection without answering, bytes that are no HTTP response, nothing within the deadline
/// (a hang), or no connection at all (the request never reached the server, so it proves
/// nothing and always fails the probe).
enum HostileOutcome: Sendable {
    case response(TestHTTPClient.Response)
    case closedWithoutResponse
    case malformedResponse(byteCount: Int)
    case timedOut
    case notConnected(errno: Int32)
}

/// Sends raw request bytes over loopback with a bounded wait, so a hang shows up as a result
/// instead of a stuck test. Blocking: call it from a thread of its own (see `offPool`).
struct HostileProbe: Sendable {
    let port: UInt16
    /// How long a probe waits for the server, in seconds; far above any honest answer.
    var deadlineSeconds = 15

    /// Sends `bytes`; with `halfClose` the write side is shut afterwards, so a server still
    /// waiting for an announced body sees end of stream instead of waiting for its timeout.
    func send(_ bytes: [UInt8], halfClose: Bool = false) -> HostileOutcome {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return .notConnected(errno: errno) }
        defer { close(socket) }
        var timeout = timeval(tv_sec: deadlineSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return .notConnected(errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .timedOut }
            if written <= 0 { break }  // the server answered early (413, 431) and closed
            offset += written
        }
        if halfClose { shutdown(socket, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !TestHTTPClient.isComplete(received) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .timedOut }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        if received.isEmpty { return .closedWithoutResponse }
        guard let response = try? TestHTTPClient.parse(received) else { return .malformedResponse(byteCount: received.count) }
        return .response(response)
    }

    /// A request with `Connection: close`; `contentLength: nil` leaves framing to `headers`.
    static func request(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8],
                        contentLength: Bool = true) -> [UInt8] {
        let host = headers.contains { $0.0.lowercased() == "host" } ? "" : "Host: 127.0.0.1\r\n"
        var head = "\(method) \(target) HTTP/1.1\r\n\(host)Connection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if contentLength && (!body.isEmpty || ["POST", "PUT", "PATCH"].contains(method)) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}

/// One hostile request shape, applied to every route.
struct HostileCase: Sendable {
    enum Framing: Sendable {
        /// A Content-Length matching the body is added.
        case contentLength
        /// The case's headers frame the body themselves; the socket is half-closed after sending.
        case raw
    }

    let name: String
    let headers: [(String, String)]
    let body: [UInt8]
    var framing: Framing = .contentLength
    /// Whether a route that reads a body must refuse this one (4xx).
    var mustFailOnBodyRoutes = false
    /// Whether every route must refuse it (4xx), e.g. a broken request line.
    var mustFailEverywhere = false
    /// The exact status every route must answer, when there is one (413 for a 1 MB body).
    var exactStatus: Int?
    /// The HTTP library itself may refuse this before Herald sees it (no envelope), or drop it.
    var libraryMayRefuse = false
    /// Replaces the route's method.
    var method: String?
    /// Appended to the route's path.
    var query: String?
    /// Replaces the route's own credentials.
    var authorization: String??
    /// Text no response may contain (a hostile Host must not reach an issuer or a redirect).
    var mustNotEcho: String?

    init(_ name: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.name = name
        self.headers = headers
        self.body = body
    }

    init(_ name: String, json: String, mustFail: Bool = true) {
        self.init(name, headers: [("Content-Type", "application/json")], body: Array(json.utf8))
        mustFailOnBodyRoutes = mustFail
    }

    init(_ name: String, jsonBytes: [UInt8]) {
        self.init(name, headers: [("Content-Type", "application/json")], body: jsonBytes)
        mustFailOnBodyRoutes = true
    }

    init(_ name: String, form: String, mustFail: Bool = true) {
        self.init(name, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        mustFailOnBodyRoutes = mustFail
    }

    func with(_ change: (inout HostileCase) -> Void) -> HostileCase {
        var copy = self
        change(&copy)
        return copy
    }
}

/// The hostile corpus: bodies, queries, headers, framing and methods.
enum HostileCorpus {
    /// Every field name some route reads, so a body reaches each route's field validation.
    static let fields = [
        "identityToken", "clientId", "nonce", "downstreamState", "fullName", "authorizationCode", "refreshToken",
        "id", "displayName", "enabled", "registrationEnabled", "emailLinking", "nonceRequired", "accessTokenTTL",
        "refreshTokenTTL", "loginUrl", "signingAlgorithm", "rateLimit", "audiences", "teamId", "keyId", "privateKey",
        "scopes", "name", "firstParty", "confidential", "redirectUris", "allowedScopes", "ipBinding", "status", "email",
        "grant_type", "code", "redirect_uri", "client_id", "client_secret", "code_verifier", "refresh_token", "scope",
        "token", "token_type_hint",
    ]

    /// `{"field": value, …}` over every known field.
    static func everyField(_ value: String) -> String {
        "{" + fields.map { "\"\($0)\":\(value)" }.joined(separator: ",") + "}"
    }

    static let oneMegabyte = 1 << 20

    static var bodies: [HostileCase] {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let deepObject = String(repeating: "{\"a\":", count: 5_000) + "1" + String(repeating: "}", count: 5_000)
        let manyKeys = "{" + (0..<4_000).map { "\"k\($0)\":1" }.joined(separator: ",") + "}"
        let wideArray = "[" + Array(repeating: "\"x\"", count: 150).joined(separator: ",") + "]"
        return [
            HostileCase("empty body with JSON type", json: ""),
            HostileCase("whitespace only", json: " \r\n\t "),
            HostileCase("truncated object", json: "{\"clientId\":"),
            HostileCase("unterminated string", json: "{\"clientId\":\"ios-app"),
            HostileCase("trailing garbage", json: "{}garbage"),
            HostileCase("two documents", json: "{}{}"),
            HostileCase("single quotes", json: "{'clientId':'ios-app'}"),
            HostileCase("trailing comma", json: "{\"clientId\":\"ios-app\",}"),
            HostileCase("comments", json: "{/* c */\"clientId\":\"ios-app\"}"),
            HostileCase("NaN literal", json: "{\"accessTokenTTL\":NaN}"),
            HostileCase("JSON null", json: "null"),
            HostileCase("JSON array", json: "[]"),
            HostileCase("JSON number", json: "42"),
            HostileCase("JSON string", json: "\"text\""),
            HostileCase("JSON true", json: "true"),
            HostileCase("missing fields", json: "{}", mustFail: false),
            HostileCase("every field a number", json: everyField("1.5")),
            HostileCase("every field an array", json: everyField("[[]]")),
            HostileCase("every field an object", json: everyField("{\"$ne\":null}")),
            HostileCase("every field a boolean", json: everyField("true")),
            HostileCase("every field an empty string", json: everyField("\"\"")),
            HostileCase("every field a huge number", json: everyField("1e400")),
            HostileCase("every field below Int64.min", json: everyField("-9223372036854775809")),
            HostileCase("every field a wide array", json: everyField(wideArray)),
            HostileCase("every field an escaped NUL", json: everyField("\"a\\u0000b\"")),
            HostileCase("every field a lone surrogate", json: everyField("\"\\ud800\"")),
            HostileCase("every field 60 KB", json: "{" + fields.prefix(1).map {
                "\"\($0)\":\"" + String(repeating: "a", count: 60_000) + "\""
            }.joined() + "}"),
            HostileCase("duplicated field", json: "{\"clientId\":\"ios-app\",\"clientId\":\"partner\",\"id\":\"x\",\"id\":\"y\"}"),
            HostileCase("raw NUL inside a string", jsonBytes: Array("{\"clientId\":\"ios".utf8) + [0] + Array("app\"}".utf8)),
            HostileCase("raw NUL between tokens", jsonBytes: Array("{\"clientId\":".utf8) + [0] + Array("\"ios-app\"}".utf8)),
            HostileCase("invalid UTF-8 in a value", jsonBytes: Array("{\"clientId\":\"".utf8) + [0xFF, 0xFE, 0xC3] + Array("\"}".utf8)),
            HostileCase("invalid UTF-8 in a key", jsonBytes: Array("{\"".utf8) + [0xC0, 0x80] + Array("\":1}".utf8)),
            HostileCase("overlong UTF-8 slash", jsonBytes: Array("{\"id\":\"".utf8) + [0xC0, 0xAF] + Array("\"}".utf8)),
            HostileCase("UTF-16 body", jsonBytes: Array("{\"id\":\"x\"}".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            HostileCase("byte order mark", jsonBytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)),
            HostileCase("10 000 nested arrays", json: deep),
            HostileCase("10 000 nested arrays in a field", json: "{\"clientId\":\(deep)}"),
            HostileCase("5 000 nested objects", json: deepObject),
            HostileCase("4 000 unknown keys", json: manyKeys),
            // Well-typed but hostile strings reach the deepest checks (lookups, token parsing);
            // some routes may accept them (revoke answers 200 for any token, RFC 7009 §2.2).
            HostileCase("every field an SQL fragment", json: everyField("\"' OR '1'='1' --; DROP TABLE accounts\""), mustFail: false),
            HostileCase("every field a path", json: everyField("\"../../../../etc/passwd\""), mustFail: false),
            HostileCase("every field combining marks", json: everyField("\"" + String(repeating: "e\u{301}", count: 300) + "\""), mustFail: false),
            HostileCase("every field RTL, BOM and noncharacters", json: everyField("\"\u{202E}\u{FEFF}\u{FFFF}\u{10FFFF}👩‍👩‍👧\""), mustFail: false),
            HostileCase("every field JWT-shaped", json: everyField("\"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.\""), mustFail: false),
            HostileCase("form: every parameter hostile", form: HostileCorpus.fields.map { "\($0)=%27%20OR%201%3D1%20--%E2%80%AE" }
                .joined(separator: "&"), mustFail: false),
            HostileCase("form: repeated parameters", form: "grant_type=refresh_token&grant_type=authorization_code&client_id=a&client_id=b"),
            HostileCase("form: bad percent escape", form: "grant_type=%ZZ&client_id=%"),
            HostileCase("form: NUL", form: "grant_type=authorization_code%00&client_id=acme-spa&token=%00"),
            HostileCase("form: invalid UTF-8", form: "grant_type=%FF%FE&client_id=%C0%AF&token=%ED%A0%80"),
            HostileCase("form: 9 KB value", form: "grant_type=refresh_token&refresh_token=" + String(repeating: "a", count: 9_000)),
            HostileCase("form: only separators", form: "&&&==&="),
            HostileCase("form: unknown grant", form: "grant_type=password&username=a&password=b&client_id=acme-spa"),
            HostileCase("form: garbage code", form: "grant_type=authorization_code&code=ac_..%2F..&redirect_uri=x&client_id=partner&code_verifier=short"),
        ]
    }

    static var queries: [HostileCase] {
        [
            "%ZZ", "a=%00", "limit=-1", "limit=1e9", "limit=99999999999999999999999", "limit=abc", "limit=10&limit=20",
            "cursor=%FF%FE", "cursor=" + String(repeating: "A", count: 6_000), "cursor=..%2F..%2Fetc%2Fpasswd",
            "status=%00", "client_id=partner&client_id=ios-app&response_type=code", "&&&", "=%",
        ].map { query in HostileCase("query ?\(query.prefix(40))").with { $0.query = query } }
    }

    static var headers: [HostileCase] {
        let base64 = { (text: [UInt8]) in Data(text).base64EncodedString() }
        let authorizations: [String] = [
            "", "Bearer", "Bearer ", "Bearer " + String(repeating: "A", count: 16_000), "Bearer a.b.c", "Bearer \u{7f}",
            "Basic !!!", "Basic " + base64(Array("no-colon".utf8)), "Basic Og==", "Basic " + base64([0xFF, 0x3A, 0xFE]),
            "Basic " + base64(Array("a\u{0}:\u{0}b".utf8)), "Negotiate abc", "Bearer " + RunningHerald.adminToken + "x",
            "Bearer " + String(RunningHerald.adminToken.dropLast()),
        ]
        var cases = authorizations.map { value in
            HostileCase("Authorization \(value.prefix(30))").with { $0.authorization = .some(value) }
        }
        cases += [
            HostileCase("hostile Host", headers: [("Host", "evil.example")]).with { $0.mustNotEcho = "evil.example" },
            HostileCase("hostile forwarding headers", headers: [("X-Forwarded-For", "1.2.3.4, ::1, garbage%00"),
                                                              ("X-Forwarded-Host", "evil.example"), ("X-Forwarded-Proto", "gopher"),
                                                              ("Forwarded", "for=\"[::1]\";host=evil.example")])
                .with { $0.mustNotEcho = "evil.example" },
            HostileCase("X-Request-Id hostile", headers: [("X-Request-Id", "../../" + String(repeating: "é", count: 300))]),
            HostileCase("Content-Type text/plain", headers: [("Content-Type", "text/plain")], body: Array("{}".utf8))
                .with { $0.mustFailOnBodyRoutes = true },
            HostileCase("Content-Type multipart", headers: [("Content-Type", "multipart/form-data; boundary=x")],
                        body: Array("--x\r\nContent-Disposition: form-data; name=\"id\"\r\n\r\nx\r\n--x--\r\n".utf8))
                .with { $0.mustFailOnBodyRoutes = true },
            HostileCase("Content-Type utf-16 charset", headers: [("Content-Type", "application/json; charset=utf-16")],
                        body: Array("{\"id\":1}".utf8)).with { $0.mustFailOnBodyRoutes = true },
            HostileCase("Content-Type empty", headers: [("Content-Type", "")], body: Array("{\"id\":1}".utf8))
                .with { $0.mustFailOnBodyRoutes = true },
            HostileCase("Content-Type list", headers: [("Content-Type", "application/json, text/html")], body: Array("[]".utf8))
                .with { $0.mustFailOnBodyRoutes = true },
            HostileCase("two Content-Types", headers: [("Content-Type", "text/plain"), ("Content-Type", "application/json")],
                        body: Array("[]".utf8)).with { $0.mustFailOnBodyRoutes = true },
            HostileCase("128 KB header", headers: [("X-Filler", String(repeating: "f", count: 128 * 1024))])
                .with { $0.libraryMayRefuse = true; $0.mustFailEverywhere = true },
            HostileCase("3 000 headers", headers: (0..<3_000).map { ("X-H\($0)", "v") })
                .with { $0.libraryMayRefuse = true },
            HostileCase("header line without colon", headers: [("X-Ok", "1\r\nGarbage-Line-Without-Colon")])
                .with { $0.libraryMayRefuse = true },
        ]
        return cases
    }

    static var framing: [HostileCase] {
        let body = Array("{}".utf8)
        func raw(_ name: String, _ headers: [(String, String)], _ body: [UInt8]) -> HostileCase {
            HostileCase(name, headers: [("Content-Type", "application/json")] + headers, body: body).with {
                $0.framing = .raw
                $0.libraryMayRefuse = true
                $0.mustFailEverywhere = true
            }
        }
        return [
            raw("two Content-Lengths, small first", [("Content-Length", "2"), ("Content-Length", "40")], body),
            raw("two Content-Lengths, large first", [("Content-Length", "40"), ("Content-Length", "2")], body),
            raw("Content-Length list", [("Content-Length", "2, 2")], body),
            raw("Content-Length and chunked", [("Content-Length", "2"), ("Transfer-Encoding", "chunked")],
                Array("2\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("chunked and Content-Length", [("Transfer-Encoding", "chunked"), ("Content-Length", "40")],
                Array("2\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("bad chunk size", [("Transfer-Encoding", "chunked")], Array("zz\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("chunk size overflow", [("Transfer-Encoding", "chunked")], Array("ffffffffffffffffff\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("Transfer-Encoding gzip", [("Transfer-Encoding", "gzip")], body),
            raw("Transfer-Encoding twice", [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
                Array("2\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("Transfer-Encoding gzip, chunked", [("Transfer-Encoding", "gzip, chunked")], Array("2\r\n{}\r\n0\r\n\r\n".utf8)),
            raw("negative Content-Length", [("Content-Length", "-1")], body),
            raw("non-numeric Content-Length", [("Content-Length", "abc")], body),
            raw("plus-signed Content-Length", [("Content-Length", "+2")], body),
            raw("huge Content-Length", [("Content-Length", "99999999999999999999999")], body),
        ]
    }

    static var methods: [HostileCase] {
        ["OPTIONS", "TRACE", "CONNECT", "get", "PROPFIND", "BREW", String(repeating: "M", count: 300)].map { method in
            HostileCase("method \(method.prefix(20))").with {
                $0.method = method
                $0.mustFailEverywhere = true
                $0.libraryMayRefuse = method == "CONNECT"
            }
        }
    }

    static var oversize: [HostileCase] {
        let big = Array("{\"identityToken\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: oneMegabyte) + Array("\"}".utf8)
        return [
            HostileCase("1 MB body", headers: [("Content-Type", "application/json")], body: big)
                .with { $0.exactStatus = 413; $0.mustFailEverywhere = true },
            HostileCase("1 MB chunked body", headers: [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
                        body: Array(String(big.count, radix: 16).utf8) + [13, 10] + big + Array("\r\n0\r\n\r\n".utf8))
                .with { $0.framing = .raw; $0.exactStatus = 413; $0.mustFailEverywhere = true },
        ]
    }

    /// Values for a path parameter that must never name a resource.
    static let pathTricks = [
        "..", "%2e%2e", "%2E%2e", ".", "%2e", "acme%2F..", "acme%2f..%2fspare", "%2F", "%00", "acme%00", "%ff", "%C0%AE%C0%AE",
        "ACME", "acme%20", "%20acme", String(repeating: "a", count: 300), "a%2Fb", "%252e%252e", "acme;x=1", "acme%3Fx=1",
        "*", "acme%0d%0aX-Injected:%201", "%",
    ]
}
