/// Comparisons of secrets whose time does not depend on where the inputs differ.
package enum ConstantTime {
    /// Whether `lhs` and `rhs` are the same bytes; the time depends only on the longer length.
    package static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt8(lhs.count == rhs.count ? 0 : 1)
        for index in 0..<max(lhs.count, rhs.count) {
            let a = index < lhs.count ? lhs[index] : 0
            let b = index < rhs.count ? rhs[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
