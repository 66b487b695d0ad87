import Foundation
import HTTPServer

/// Decides the client IP of a request: the socket peer, unless the peer is a trusted proxy,
/// in which case the right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
/// Entries left of an untrusted hop are ignored because a client can write anything there.
public struct ClientAddressResolver: Sendable {
    let trustedProxies: [IPAddressRange]

    public init(trustedProxies: [String]) {
        self.trustedProxies = trustedProxies.compactMap(IPAddressRange.init(cidr:))
    }

    /// The address rate limits and IP binding use for `request`.
    public func clientAddress(of request: HTTPRequest) -> String {
        clientAddress(peer: request.peerAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
    }

    func clientAddress(peer: String, forwardedFor: [String]) -> String {
        var address = peer
        guard isTrusted(address) else { return address }
        let hops = forwardedFor
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard IPAddressRange.bytes(of: hop) != nil else { break }
            address = hop
            if !isTrusted(hop) { break }
        }
        return address
    }

    private func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
