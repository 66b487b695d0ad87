/// Splits a raw request path into decoded segments: the one place that decides how a path
/// is read, shared by the server (which answers 400 when this fails) and the router.
///
/// Decisions: the path is taken exactly as sent (MHD's own unescaping is switched off);
/// it is split on "/" first and each segment is percent-decoded after, so "%2F" stays inside
/// its segment and can never create a new one. Dot segments ("." and "..", also encoded as
/// "%2E") are refused rather than resolved, so they never reach a route parameter. Empty
/// segments ("//", a trailing "/") are kept; only a template ending in "/" matches the last one.
enum PathSegments {
    /// The decoded segments of `path` ("/" → []), or nil when it is unreadable: not starting
    /// with "/", a bad escape, a control character, invalid UTF-8, or a dot segment.
    static func decode(_ path: some StringProtocol) -> [String]? {
        let utf8 = path.utf8
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        var segments: [String] = []
        var start = utf8.index(after: utf8.startIndex)
        guard start != utf8.endIndex else { return segments }
        // One pass over the bytes: each segment is decoded where it ends.
        var index = start
        while true {
            if index == utf8.endIndex || utf8[index] == UInt8(ascii: "/") {
                guard let segment = PercentDecoding.decodeSegment(Substring(path[start..<index])),
                      segment != ".", segment != ".." else {
                    return nil
                }
                segments.append(segment)
                if index == utf8.endIndex { return segments }
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
    }
}
