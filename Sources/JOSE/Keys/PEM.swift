import Foundation

/// PEM armor (RFC 7468): base64 DER between "-----BEGIN <label>-----" and "-----END <label>-----".
enum PEM {
    /// The DER of the first block labelled exactly `label`.
    static func decode(_ text: String, label: String) throws(JOSEError) -> [UInt8] {
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        guard let beginRange = text.range(of: begin),
              let endRange = text.range(of: end, range: beginRange.upperBound..<text.endIndex) else {
            throw JOSEError(.malformed, "no \(label) PEM block")
        }
        let body = text[beginRange.upperBound..<endRange.lowerBound].filter { !$0.isWhitespace }
        guard !body.isEmpty, let data = Data(base64Encoded: String(body)) else {
            throw JOSEError(.malformed, "\(label) PEM block is not valid base64")
        }
        return [UInt8](data)
    }

    /// A PEM block with 64-character lines.
    static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }
}
