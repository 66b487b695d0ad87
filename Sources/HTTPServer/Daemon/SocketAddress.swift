import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// The address to bind, parsed from an IP literal with inet_pton.
enum ListenAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init?(host: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .v6(v6)
            return
        }
        return nil
    }

    var isIPv6: Bool {
        if case .v6 = self { true } else { false }
    }

    /// Lends the address as a `struct sockaddr *` for the duration of `body`.
    func withSockaddr<R>(_ body: (UnsafeMutablePointer<sockaddr>) -> R) -> R {
        switch self {
        case .v4(var address):
            withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var address):
            withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }
}

/// Formats a connection's peer address with inet_ntop.
enum PeerAddress {
    static func of(_ connection: OpaquePointer) -> String {
        guard let address = herald_MHD_client_address(connection) else { return "unknown" }
        let family = Int32(address.pointee.sa_family)
        guard family == AF_INET || family == AF_INET6 else { return "unknown" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { text in
            let written: UnsafePointer<CChar>? = if family == AF_INET {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafePointer(to: v4.pointee.sin_addr) {
                        inet_ntop(AF_INET, $0, text.baseAddress, socklen_t(text.count))
                    }
                }
            } else {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafePointer(to: v6.pointee.sin6_addr) {
                        inet_ntop(AF_INET6, $0, text.baseAddress, socklen_t(text.count))
                    }
                }
            }
            guard let written else { return "unknown" }
            return String(cString: written)
        }
    }
}

extension String {
    /// Decodes a NUL-terminated C buffer filled by a C call.
    init(nulTerminated buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
