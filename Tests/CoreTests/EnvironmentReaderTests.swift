import Core
import Foundation
import Logging
import Testing

/// ``EnvironmentReader``'s one rule, value kind by value kind.
@Suite struct EnvironmentReaderTests {
    @Test func blankValuesAreUnsetAndValuesAreTrimmed() throws {
        let reader = EnvironmentReader(["EMPTY": "", "BLANK": " \t\n", "PADDED": "  value \n", "LIST": " a, ,b ,, c "])
        #expect(reader.optional("EMPTY") == nil)
        #expect(reader.optional("BLANK") == nil)
        #expect(reader.optional("UNSET") == nil)
        #expect(reader.optional("PADDED") == "value")
        #expect(reader.string("BLANK", default: "fallback") == "fallback")
        #expect(reader.list("LIST") == ["a", "b", "c"])
        #expect(reader.list("UNSET").isEmpty)
        #expect(throws: ConfigurationError(variable: "BLANK", problem: "is required")) { try reader.required("BLANK") }
        #expect(throws: ConfigurationError(variable: "UNSET", problem: "is required (a path)")) { try reader.required("UNSET", "a path") }
    }

    @Test func numbersAreWholeDecimalsInsideTheirRange() throws {
        let reader = EnvironmentReader(["N": " 12 ", "HEX": "0x10", "FRACTION": "1.5", "BIG": "99999999999999999999", "NEG": "-3"])
        #expect(try reader.int("N", default: 0, range: 0...100) == 12)
        #expect(try reader.int("N", default: Int64(0), range: 1...Int64.max) == 12)
        #expect(try reader.int("UNSET", default: 7, range: 0...100) == 7)
        for name in ["HEX", "FRACTION", "BIG", "NEG"] {
            #expect(throws: ConfigurationError.self, "\(name)") { try reader.int(name, default: 0, range: 0...100) }
        }
        #expect(throws: ConfigurationError.self) { try reader.int("N", default: 0, range: 0...11) }
        #expect(try reader.double("FRACTION", default: 1, range: 1...2) == 1.5)
        #expect(throws: ConfigurationError.self) { try reader.double("NEG", default: 1, range: 1...2) }
        #expect(try reader.milliseconds("N", default: 1, range: 1...100) == .milliseconds(12))
    }

    @Test func durationsAndURLs() throws {
        let reader = EnvironmentReader([
            "D": " 90s ", "MS": "250ms", "BARE": "45", "DAYS": "2d", "BAD": "soon", "SHORT": "5ms",
            "URL": "https://example.com/x", "FTP": "ftp://example.com", "NOHOST": "http://",
        ])
        #expect(try reader.duration("D", default: .zero, minimum: .zero) == .seconds(90))
        #expect(try reader.duration("MS", default: .zero, minimum: .zero) == .milliseconds(250))
        #expect(try reader.duration("BARE", default: .zero, minimum: .zero) == .seconds(45))
        #expect(try reader.duration("DAYS", default: .zero, minimum: .zero) == .seconds(172_800))
        #expect(try reader.duration("UNSET", default: .seconds(3), minimum: .zero) == .seconds(3))
        #expect(throws: ConfigurationError.self) { try reader.duration("BAD", default: .zero, minimum: .zero) }
        #expect(throws: ConfigurationError.self) { try reader.duration("SHORT", default: .zero, minimum: .milliseconds(100)) }
        #expect(try reader.optionalURL("URL")?.host == "example.com")
        #expect(try reader.optionalURL("UNSET") == nil)
        #expect(throws: ConfigurationError.self) { try reader.optionalURL("FTP") }
        #expect(throws: ConfigurationError.self) { try reader.optionalURL("NOHOST") }
    }

    @Test func errorsHaveOneCodeAndNameTheVariable() {
        let error = ConfigurationError(variable: "TOLLGATE_X", problem: "must be true or false")
        #expect(error.code == "invalid_configuration")
        #expect(error.message == "TOLLGATE_X must be true or false")
        #expect(error.description == "invalid_configuration: TOLLGATE_X must be true or false")
    }
}
