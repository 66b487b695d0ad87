/// An address to listen on, `IP:PORT` (IPv6 as `[ADDRESS]:PORT`), as `HERALD_ADMIN_LISTEN` takes it.
public struct ListenAddress: Sendable, Equatable {
    public var host: String
    /// 0 binds an ephemeral port (tests).
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `IP:PORT` or `[IPv6]:PORT` with a port from 1 to 65535; nil otherwise. A host
    /// name is refused: which address it resolves to would decide who can reach the admin API.
    init?(parsing text: String) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            port = rest.dropFirst()
            guard host.contains(":") else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard HeraldConfiguration.isIPAddress(String(host)),
              !port.isEmpty, port.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let number = UInt16(port), number > 0 else { return nil }
        self.init(host: String(host), port: number)
    }
}
