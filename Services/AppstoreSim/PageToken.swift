import AppStore
import Foundation

/// Opaque paging tokens (`revision`, `paginationToken`): a kind letter and an offset, base64url-encoded.
enum PageToken {
    static func encode(_ offset: Int, kind: String) -> String {
        Base64URL.encode(Array("sim\(kind):\(offset)".utf8))
    }

    static func decode(_ token: String, kind: String) -> Int? {
        guard token.utf8.count <= 64, let bytes = Base64URL.decode(token) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let prefix = "sim\(kind):"
        guard text.hasPrefix(prefix), let offset = Int(text.dropFirst(prefix.count)), offset >= 0 else { return nil }
        return offset
    }
}
