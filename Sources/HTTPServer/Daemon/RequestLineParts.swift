/// The request line as libmicrohttpd hands it to the access handler: C strings pointing into
/// its in-place parsed head buffer, valid only for the duration of that call.
struct RequestLineParts {
    let method: UnsafePointer<CChar>?
    let url: UnsafePointer<CChar>?
    let version: UnsafePointer<CChar>?

    /// The request target's length as sent, NULs included, or nil when it cannot be measured.
    /// MHD parses the request line in place: the target starts at `url` and ends at the space
    /// before the HTTP version, which it finds searching from the line's end and overwrites
    /// with a NUL; `version` points just past it. The distance between the two is therefore
    /// the target's real length, where reading it as a C string stops at its first NUL.
    var rawTargetLength: Int? {
        guard let url, let version, version > url else { return nil }
        return url.distance(to: version) - 1
    }
}
