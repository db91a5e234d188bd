import Export
import Testing

@Suite struct ExportFaultTests {
    /// Shutdown, start-up, overload and conflicts are waited out; a statement refused for what it is counts.
    @Test(arguments: [
        ("57P01", true), ("57P03", true), ("08006", true), ("53300", true), ("40001", true), ("40P01", true),
        ("23505", false), ("22001", false), ("42P01", false), ("", false),
    ])
    func transientStatesAreWaitedOut(sqlState: String, transient: Bool) {
        #expect(ExportHandler.isTransient(sqlState: sqlState) == transient)
    }
}
