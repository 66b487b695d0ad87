import Foundation
import HTTPServer
import JOSE

/// One file of the admin console as served: its bytes, media type and entity tag.
struct ConsoleAsset: Sendable {
    let name: String
    let bytes: [UInt8]
    let contentType: String
    /// A strong validator from the bytes, so a browser revalidates cheaply (304) and sees a
    /// new binary's files at once.
    let etag: String

    /// Every embedded file by name, decoded once.
    static let all: [String: ConsoleAsset] = {
        var assets: [String: ConsoleAsset] = [:]
        for (name, encoded) in ConsoleFiles.base64 {
            // The script writes base64 -w 0; a file that does not decode is a generator bug.
            guard let data = Data(base64Encoded: encoded) else { preconditionFailure("console file \(name) is not base64") }
            let bytes = Array(data)
            let digest = Hex.encode(SHA256.hash(bytes).prefix(16))
            assets[name] = ConsoleAsset(name: name, bytes: bytes, contentType: contentType(for: name), etag: "\"\(digest)\"")
        }
        return assets
    }()

    /// The media type by extension; an unknown one is served as bytes the browser will not run
    /// or render (with nosniff).
    static func contentType(for name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) ?? "" {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }
}
