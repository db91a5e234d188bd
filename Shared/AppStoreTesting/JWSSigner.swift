package import AppStore
@preconcurrency package import Crypto
package import Foundation

/// Signs payloads the way the App Store does: compact JWS with header
/// `{"alg":"ES256","x5c":[leaf, intermediate, root]}` and a raw 64-byte r‖s P-256 signature.
package struct JWSSigner: Sendable {
    package let key: P256.Signing.PrivateKey
    /// The chain placed in `x5c`, DER, leaf first.
    package let x5cDER: [Data]

    package init(key: P256.Signing.PrivateKey, x5cDER: [Data]) {
        self.key = key
        self.x5cDER = x5cDER
    }

    /// The header this signer writes.
    package var header: JWSHeader {
        JWSHeader(alg: "ES256", x5c: x5cDER.map { $0.base64EncodedString() })
    }

    /// Signs an Encodable payload (Apple's models encode as Apple's JSON).
    package func sign(_ payload: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try sign(json: try encoder.encode(payload))
    }

    /// Signs raw payload JSON as is.
    package func sign(json: Data) throws -> String {
        try sign(json: json, header: header)
    }

    /// Signs raw payload JSON under any header (tests use this for malformed headers).
    package func sign(json: Data, header: JWSHeader) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try sign(json: json, headerJSON: try encoder.encode(header))
    }

    /// Signs raw payload JSON under raw header JSON.
    package func sign(json: Data, headerJSON: Data) throws -> String {
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(json)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
