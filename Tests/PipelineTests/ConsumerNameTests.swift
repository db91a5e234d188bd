import Pipeline
import Testing

@Suite struct ConsumerNameTests {
    @Test func namesAreUniquePerCallAndCarryThePID() {
        let names = (0..<50).map { _ in ConsumerName.unique() }
        #expect(Set(names).count == 50)
        let parts = names[0].split(separator: "-")
        #expect(parts.count >= 3)
        #expect(Int(parts[parts.count - 2]) != nil)
    }
}
