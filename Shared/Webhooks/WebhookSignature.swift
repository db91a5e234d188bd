import Core
import Crypto
import Foundation
import Pipeline

/// `Tollgate-Signature: t=<unix seconds>,v1=<hex>[,v1=…],v2=<hex>[,v2=…]`, one `v1=` and one `v2=` per secret, so a
/// receiver that knows either the old or the new secret accepts during a rotation:
///
/// - `v2` = HMAC-SHA256(secret, `"<t>.<endpoint>." + body`), `<endpoint>` the endpoint's configured name: a request
///   captured at one endpoint does not verify at another sharing the secret. Receivers verify this one.
/// - `v1` = HMAC-SHA256(secret, `"<t>." + body`): earlier releases' signature, sent beside `v2` for a deprecation
///   window (Services/Notifier/README.md, CHANGELOG).
///
/// Neither covers the `Tollgate-Event-Id` header: receivers deduplicate on the body's `id`.
package enum WebhookSignature {
    package static let header = "Tollgate-Signature"

    /// The header value for `body` signed at `timestamp` for `endpoint` (its name) with each of `secrets`.
    package static func sign(body: [UInt8], secrets: [String], timestamp: Int64, endpoint: String) -> String {
        let v1 = secrets.map { "v1=\(Hex.lowercase(mac(body: body, secret: $0, timestamp: timestamp, endpoint: nil)))" }
        let v2 = secrets.map { "v2=\(Hex.lowercase(mac(body: body, secret: $0, timestamp: timestamp, endpoint: endpoint)))" }
        return (["t=\(timestamp)"] + v1 + v2).joined(separator: ",")
    }

    /// Whether `header` carries a valid `v2=` for `body` and `endpoint` under one of `secrets`, signed within
    /// `tolerance` seconds of `now` (the check a receiver makes; the README shows it in Python and Swift). A `v1=`
    /// alone is not enough: it does not name the endpoint.
    package static func verify(
        header: String, body: [UInt8], secrets: [String], endpoint: String, now: Int64, tolerance: Int64 = 300
    ) -> Bool {
        var timestamp: Int64?
        var candidates: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v2" { candidates.append(pair[1].lowercased()) }
        }
        guard let timestamp, abs(now - timestamp) <= tolerance else { return false }
        for secret in secrets {
            let expected = Array(Hex.lowercase(mac(body: body, secret: secret, timestamp: timestamp, endpoint: endpoint)).utf8)
            if candidates.contains(where: { ConstantTime.equal(Array($0.utf8), expected) }) { return true }
        }
        return false
    }

    /// HMAC-SHA256 of `"<timestamp>." + body` (v1, `endpoint` nil) or `"<timestamp>.<endpoint>." + body` (v2).
    static func mac(body: [UInt8], secret: String, timestamp: Int64, endpoint: String?) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        hmac.update(data: Array("\(timestamp).".utf8))
        if let endpoint { hmac.update(data: Array("\(endpoint).".utf8)) }
        hmac.update(data: body)
        return Array(hmac.finalize())
    }
}
