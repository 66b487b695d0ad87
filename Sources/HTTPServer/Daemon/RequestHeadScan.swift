/// Finds bytes of the request head that libmicrohttpd parsed but does not hand over.
///
/// MHD 0.9.75 parses the head in place and hands every part over as a C string, measured up
/// to its first NUL (header value sizes included). A raw NUL therefore hides whatever follows
/// it in the same part: `Bearer <token>\0junk` reads as `Bearer <token>`. In the head buffer
/// the parts MHD hands over appear in order, separated only by what MHD itself wrote there
/// (NULs over the separators and line ends) and optional whitespace. So walking the parts in
/// order and requiring every byte between them to be NUL, space or tab finds any hidden byte,
/// in one pass over the head and without allocating. A part outside the head (MHD keeps a
/// copy elsewhere for an obsolete folded header) is skipped; one out of order is refused.
struct RequestHeadScan {
    private let start: UnsafePointer<UInt8>
    private let end: UnsafePointer<UInt8>
    private var cursor: UnsafePointer<UInt8>
    /// Whether a hidden byte (or an unexpected layout) was found.
    private(set) var foundHiddenBytes = false

    /// A scan of the `size` bytes of head starting at `head`, the method (MHD's first part).
    init(head: UnsafePointer<UInt8>, size: Int) {
        start = head
        end = head + size
        cursor = head
    }

    /// Accounts for the next part MHD handed over: `count` bytes at `part`.
    mutating func cover(_ part: UnsafeRawPointer?, count: Int) {
        guard !foundHiddenBytes, let part else { return }
        let first = part.assumingMemoryBound(to: UInt8.self)
        guard first >= start, first < end else { return }
        guard first >= cursor, count <= first.distance(to: end) else {
            foundHiddenBytes = true
            return
        }
        checkGap(upTo: first)
        cursor = first + count
    }

    /// Checks the rest of the head, after the last part.
    mutating func finish() {
        guard !foundHiddenBytes else { return }
        checkGap(upTo: end)
        cursor = end
    }

    private mutating func checkGap(upTo limit: UnsafePointer<UInt8>) {
        var byte = cursor
        while byte < limit {
            switch byte.pointee {
            case 0, UInt8(ascii: " "), UInt8(ascii: "\t"): byte += 1
            default:
                foundHiddenBytes = true
                return
            }
        }
    }
}
