/// A JWS in compact serialization (RFC 7515 §7.1), parsed but NOT verified: check the header,
/// pick the key by `kid`, then call `verify(with:)` before trusting the payload.
public struct CompactJWS: Sendable {
    /// Default cap on the whole compact string, in bytes.
    public static let defaultMaxLength = 16_384
    /// Cap on the encoded header segment, in bytes: real headers are tens of bytes.
    public static let maxHeaderLength = 4_096

    /// The registered header members.
    public let header: JOSEHeader
    /// Every header member, including unregistered ones (for diagnostics and `crit` handling).
    public let headerFields: [String: JSONValue]
    /// The decoded header JSON bytes.
    public let headerBytes: [UInt8]
    /// The decoded payload bytes.
    public let payloadBytes: [UInt8]
    /// ASCII of "<header>.<payload>" as received: the bytes the signature covers.
    public let signingInput: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]
    private let payload: [String: JSONValue]

    /// Parses `compact`: at most `maxLength` bytes, exactly three segments, strict base64url,
    /// header and payload strict JSON objects (duplicate keys fail). Every failure is `.malformed`.
    public init(parsing compact: String, maxLength: Int = CompactJWS.defaultMaxLength) throws(JOSEError) {
        var compact = compact
        // withUTF8 only rethrows untyped errors, so the typed error travels in a Result.
        let parsed = try compact.withUTF8 { bytes in
            Result { () throws(JOSEError) -> Parsed in try Self.parse(bytes, maxLength: maxLength) }
        }.get()
        header = parsed.header
        headerFields = parsed.headerFields
        headerBytes = parsed.headerBytes
        payloadBytes = parsed.payloadBytes
        signingInput = parsed.signingInput
        signature = parsed.signature
        payload = parsed.payload
    }

    /// The payload as a JSON object (already parsed strictly at init).
    public func payloadObject() throws(JOSEError) -> [String: JSONValue] { payload }

    /// The header's algorithm, if it is one this module implements (never `none` or HS*).
    public var algorithm: JWSAlgorithm? { JWSAlgorithm(rawValue: header.alg) }

    /// True when the header's `alg` is supported, fits `key`, the header lists no critical
    /// extensions, and the signature verifies.
    public func verify(with key: PublicKey) -> Bool {
        // RFC 7515 §4.1.11: a JWS whose `crit` names extensions the recipient does not
        // understand is invalid. This module understands none, so any `crit` refuses it here,
        // whatever the caller remembers to check.
        guard header.crit == nil, let algorithm else { return false }
        return key.verify(signature: signature, message: signingInput, algorithm: algorithm)
    }

    /// Signs `payload` under `header` with `key`; the header's `alg` must be supported and fit the key.
    public static func sign(header: JOSEHeader, payload: [UInt8], key: PrivateKey) throws(JOSEError) -> String {
        guard let algorithm = JWSAlgorithm(rawValue: header.alg) else {
            throw JOSEError(.unsupportedAlgorithm, "unsupported JWS algorithm")
        }
        let signingInput = Base64URL.encode(header.jsonValue.serialized()) + "." + Base64URL.encode(payload)
        let signature = try key.sign(message: Array(signingInput.utf8), algorithm: algorithm)
        return signingInput + "." + Base64URL.encode(signature)
    }

    // MARK: - Parsing

    private struct Parsed {
        var header: JOSEHeader
        var headerFields: [String: JSONValue]
        var headerBytes: [UInt8]
        var payloadBytes: [UInt8]
        var signingInput: [UInt8]
        var signature: [UInt8]
        var payload: [String: JSONValue]
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxLength: Int) throws(JOSEError) -> Parsed {
        guard bytes.count <= maxLength else { throw JOSEError(.malformed, "JWS exceeds the maximum length") }
        var dots: [Int] = []
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(offset)
            guard dots.count <= 2 else { throw JOSEError(.malformed, "JWS must have exactly three segments") }
        }
        guard dots.count == 2 else { throw JOSEError(.malformed, "JWS must have exactly three segments") }
        let headerSegment = UnsafeBufferPointer(rebasing: bytes[0..<dots[0]])
        let payloadSegment = UnsafeBufferPointer(rebasing: bytes[(dots[0] + 1)..<dots[1]])
        let signatureSegment = UnsafeBufferPointer(rebasing: bytes[(dots[1] + 1)...])
        guard headerSegment.count <= maxHeaderLength else { throw JOSEError(.malformed, "JWS header exceeds the maximum length") }

        guard let headerBytes = Base64URL.decode(buffer: headerSegment),
              let payloadBytes = Base64URL.decode(buffer: payloadSegment),
              let signature = Base64URL.decode(buffer: signatureSegment) else {
            throw JOSEError(.malformed, "JWS segment is not strict base64url")
        }
        let headerFields = try StrictJSONParser.parseObject(headerBytes)
        let header = try JOSEHeader(jsonObject: headerFields)
        let payload = try StrictJSONParser.parseObject(payloadBytes)
        return Parsed(header: header, headerFields: headerFields, headerBytes: headerBytes, payloadBytes: payloadBytes,
                      signingInput: Array(UnsafeBufferPointer(rebasing: bytes[0..<dots[1]])),
                      signature: signature, payload: payload)
    }
}
