import Core
import Crypto
import Foundation
import Pipeline

/// `Tollgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>[,v1=…]`: one `v1=` per secret,
/// so a receiver that knows either the old or the new secret accepts during a rotation.
package enum WebhookSignature {
    package static let header = "Tollgate-Signature"

    /// The header value for `body` signed at `timestamp` with each of `secrets`.
    package static func sign(body: [UInt8], secrets: [String], timestamp: Int64) -> String {
        let signatures = secrets.map { "v1=\(Hex.lowercase(mac(body: body, secret: $0, timestamp: timestamp)))" }
        return (["t=\(timestamp)"] + signatures).joined(separator: ",")
    }

    /// Whether `header` carries a valid `v1=` for `body` under one of `secrets`, signed within `tolerance` seconds of
    /// `now` (the check a receiver makes; the README shows it in Python and Swift).
    package static func verify(
        header: String, body: [UInt8], secrets: [String], now: Int64, tolerance: Int64 = 300
    ) -> Bool {
        var timestamp: Int64?
        var candidates: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v1" { candidates.append(pair[1].lowercased()) }
        }
        guard let timestamp, abs(now - timestamp) <= tolerance else { return false }
        for secret in secrets {
            let expected = Array(Hex.lowercase(mac(body: body, secret: secret, timestamp: timestamp)).utf8)
            if candidates.contains(where: { ConstantTime.equal(Array($0.utf8), expected) }) { return true }
        }
        return false
    }

    static func mac(body: [UInt8], secret: String, timestamp: Int64) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        hmac.update(data: Array("\(timestamp).".utf8))
        hmac.update(data: body)
        return Array(hmac.finalize())
    }
}
