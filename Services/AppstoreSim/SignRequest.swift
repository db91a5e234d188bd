import Foundation

/// `POST /sim/sign`: JWS of any payload, signed by the simulator's CA like its own notifications — for benchmarks
/// and tests that need many distinct genuine-looking signed payloads (never for a production deployment, which
/// does not trust this CA). Each signature is fresh (ES256 draws a new nonce), so `count` copies of one payload
/// are `count` distinct JWS. Ingest takes one job per `notificationUUID`, so with `distinctNotificationUUIDs` each copy
/// of a notification payload gets a new one.
struct SignRequest: Decodable, Sendable {
    /// The payload, any JSON object.
    var payload: Data
    /// How many JWS to make (1–1000).
    var count: Int
    /// Give each copy a fresh `notificationUUID`.
    var distinctNotificationUUIDs: Bool

    enum CodingKeys: String, CodingKey {
        case payload, count, distinctNotificationUUIDs
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 1
        distinctNotificationUUIDs = try container.decodeIfPresent(Bool.self, forKey: .distinctNotificationUUIDs) ?? false
        payload = try JSONSerialization.data(withJSONObject: try container.decode(AnyJSON.self, forKey: .payload).value)
    }

    /// The payload of copy number `index`: the payload itself, or with a fresh `notificationUUID`.
    func payload(copy index: Int) throws -> Data {
        guard distinctNotificationUUIDs, var object = try JSONSerialization.jsonObject(with: payload) as? [String: Any] else {
            return payload
        }
        object["notificationUUID"] = UUID().uuidString.lowercased()
        return try JSONSerialization.data(withJSONObject: object)
    }

    /// Any JSON value, decoded into Foundation objects.
    private struct AnyJSON: Decodable {
        let value: Any

        init(from decoder: any Decoder) throws {
            if var array = try? decoder.unkeyedContainer() {
                var values: [Any] = []
                while !array.isAtEnd { values.append(try array.decode(AnyJSON.self).value) }
                value = values
            } else if let object = try? decoder.container(keyedBy: Key.self) {
                var values: [String: Any] = [:]
                for key in object.allKeys { values[key.stringValue] = try object.decode(AnyJSON.self, forKey: key).value }
                value = values
            } else {
                let single = try decoder.singleValueContainer()
                if single.decodeNil() {
                    value = NSNull()
                } else if let bool = try? single.decode(Bool.self) {
                    value = bool
                } else if let int = try? single.decode(Int64.self) {
                    value = int
                } else if let double = try? single.decode(Double.self) {
                    value = double
                } else {
                    value = try single.decode(String.self)
                }
            }
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}
