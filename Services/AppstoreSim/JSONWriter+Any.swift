import Core
import Foundation

extension JSONWriter {
    /// Writes what the simulator's renderers build (`[String: Any]` of strings, integers, booleans, doubles,
    /// arrays and objects) without `JSONSerialization`, whose bridging to `NSDictionary` was a quarter of the
    /// simulator's CPU per `verifyReceipt` answer in the end-to-end benchmark. Members in key order; a value of
    /// any other type is written as `null`.
    mutating func any(_ value: Any) {
        switch value {
        case let text as String: string(text)
        case let flag as Bool: bool(flag)
        case let number as Int: integer(Int64(number))
        case let number as Int64: integer(number)
        case let number as Double:
            if let whole = Int64(exactly: number) {
                integer(whole)
            } else {
                rawNumber(number.description)
            }
        case let object as [String: Any]:
            beginObject()
            for name in object.keys.sorted() {
                key(name)
                any(object[name] as Any)
            }
            endObject()
        case let array as [Any]:
            beginArray()
            for element in array { any(element) }
            endArray()
        default: null()
        }
    }
}
