import JOSE

/// libFuzzer entry point for `CompactJWS(parsing:)`: arbitrary bytes as a compact JWS.
/// Parsing must never crash, and what it accepts must be self-consistent: the signing input
/// is the text before the last dot and the header's members re-read identically.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The server sees tokens as Swift Strings decoded from JSON, so invalid UTF-8 is repaired
    // the same way here.
    let text = String(decoding: bytes, as: UTF8.self)
    guard let jws = try? CompactJWS(parsing: text) else { return 0 }
    let utf8 = Array(text.utf8)
    guard let lastDot = utf8.lastIndex(of: UInt8(ascii: ".")) else { fatalError("accepted a JWS without dots") }
    precondition(jws.signingInput == Array(utf8[..<lastDot]), "signing input is not the text before the last dot")
    precondition(utf8.count <= CompactJWS.defaultMaxLength, "accepted a JWS over the length cap")
    guard case .object(let header)? = try? JSONValue.parse(jws.headerBytes) else {
        fatalError("accepted header bytes that are not a JSON object")
    }
    precondition(header == jws.headerFields, "header fields differ from a re-parse of the header bytes")
    precondition(header["alg"]?.stringValue == jws.header.alg, "alg differs from the header member")
    precondition(jws.header.crit.map { !$0.isEmpty } ?? true, "accepted an empty crit array")
    _ = try? jws.payloadObject()
    _ = jws.algorithm
    return 0
}
