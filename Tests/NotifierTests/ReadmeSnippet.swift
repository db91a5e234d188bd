// The Swift receiver snippet of Services/Notifier/README.md ("Verifying the signature"), verbatim below these
// comment lines: ReadmeSnippetTests checks the README still holds exactly this code, compiles it here, and runs it
// against the notifier's own signatures. Change both together.
import Crypto
import Foundation

/// `endpoint`: this receiver's endpoint name in Tollgate's configuration (`default` with TOLLGATE_WEBHOOK_URL).
/// Deduplicate afterwards on the body's `id`, never on the `Tollgate-Event-Id` header.
func verify(header: String, body: Data, secrets: [String], endpoint: String, tolerance: TimeInterval = 300) -> Bool {
    let items = header.split(separator: ",").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
    guard let t = items.first(where: { $0.count == 2 && $0[0] == "t" })?[1], let seconds = TimeInterval(t),
        abs(Date().timeIntervalSince1970 - seconds) <= tolerance
    else { return false }
    let signed = Data("\(t).\(endpoint).".utf8) + body
    let signatures = items.filter { $0.count == 2 && $0[0] == "v2" }.compactMap { hexBytes($0[1]) }
    return secrets.contains { secret in
        let key = SymmetricKey(data: Data(secret.utf8))
        // isValidAuthenticationCode compares in constant time.
        return signatures.contains { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: signed, using: key) }
    }
}

func hexBytes(_ text: String) -> Data? {
    let digits = Array(text.utf8)
    guard digits.count.isMultiple(of: 2) else { return nil }
    var bytes = Data()
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
        bytes.append(byte)
    }
    return bytes
}
