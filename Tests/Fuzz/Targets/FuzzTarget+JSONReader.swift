import Core

extension FuzzTarget {
    /// Core's `JSONReader` (every JSON body ingest takes, Apple's payloads in the verifier) and the `JSONWriter` beside
    /// it: a document the reader accepts, written back and read again, is the same value, and writing that value
    /// again gives the same bytes.
    static let jsonReader = FuzzTarget(
        name: "JSONReader", maxLength: 65536,
        summary: "Core JSONReader: accepted documents survive JSONWriter and a second read"
    ) { bytes throws(FuzzFailure) in
        guard let value = try? JSONReader.parse(bytes) else { return }
        try expect(JSONReader.isValid(bytes), "isValid refuses what parse reads")
        let written = FuzzTarget.bytes(of: value)
        let again: JSONValue
        do {
            again = try JSONReader.parse(written)
        } catch {
            throw FuzzFailure(
                "JSONReader refuses what JSONWriter wrote (\(error)): \(String(decoding: written.prefix(200), as: UTF8.self))")
        }
        try expect(again == value, "written and read again, the value changed")
        try expect(FuzzTarget.bytes(of: again) == written, "the value read back is written differently")
    }

    private static func bytes(of value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }
}
