/// A value that can be one argument of a Redis command, as raw bytes (binary safe).
package protocol RedisArgumentConvertible: Sendable {
    var redisArgument: [UInt8] { get }
}

extension String: RedisArgumentConvertible {
    package var redisArgument: [UInt8] { Array(utf8) }
}

extension Substring: RedisArgumentConvertible {
    package var redisArgument: [UInt8] { Array(utf8) }
}

extension Array: RedisArgumentConvertible where Element == UInt8 {
    package var redisArgument: [UInt8] { self }
}

extension Int: RedisArgumentConvertible {
    package var redisArgument: [UInt8] { Array(String(self).utf8) }
}

extension Int64: RedisArgumentConvertible {
    package var redisArgument: [UInt8] { Array(String(self).utf8) }
}

extension UInt64: RedisArgumentConvertible {
    package var redisArgument: [UInt8] { Array(String(self).utf8) }
}

extension Double: RedisArgumentConvertible {
    /// Redis reads `inf`, `-inf` and decimal notation, which is what `description` produces.
    package var redisArgument: [UInt8] { Array(description.utf8) }
}
