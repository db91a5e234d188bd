/// An Apple enumeration that decodes values it does not know as `.unknown(raw)` instead of failing:
/// Apple adds values every year, and one new value must not make a whole payload unreadable.
///
/// Conforming types provide `init(rawValue:)` (never failing) and `rawValue`; decoding and encoding come
/// from this protocol's extension, so the original value is written back unchanged.
package protocol LenientEnum: Codable, Hashable, Sendable, CustomStringConvertible {
    associatedtype RawValue: Codable & Hashable & Sendable
    init(rawValue: RawValue)
    var rawValue: RawValue { get }
}

extension LenientEnum {
    package init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(RawValue.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    package var description: String { "\(rawValue)" }
}
