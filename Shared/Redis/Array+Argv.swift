extension Array where Element == [UInt8] {
    /// Calls `body` with C `argc`, `argv` and `argvlen` views of the arguments (binary safe: explicit lengths).
    /// The pointers are valid only during the call.
    func withArgv<R>(
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int>?) -> R
    ) -> R {
        var arena: [UInt8] = []
        arena.reserveCapacity(reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in self {
            offsets.append(arena.count)
            lengths.append(argument.count)
            arena.append(contentsOf: argument)
        }
        arena.append(0)  // never empty, so every argument pointer is non-nil
        return arena.withUnsafeBytes { bytes in
            var argv: [UnsafePointer<CChar>?] = offsets.map { offset in
                bytes.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: CChar.self) }
            }
            return argv.withUnsafeMutableBufferPointer { argvBuffer in
                lengths.withUnsafeBufferPointer { lengthBuffer in
                    body(Int32(count), argvBuffer.baseAddress, lengthBuffer.baseAddress)
                }
            }
        }
    }
}
