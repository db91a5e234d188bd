import Core
import Export
import Testing

@Suite struct PostgresSettingsTests {
    @Test func readsTheURLAndNeverShowsThePassword() throws {
        let settings = try PostgresSettings(url: "postgres://app:s%40cret@db.internal:6543/tollgate?sslmode=require")
        #expect(settings.host == "db.internal")
        #expect(settings.port == 6543)
        #expect(settings.username == "app")
        #expect(settings.password == "s@cret")
        #expect(settings.database == "tollgate")
        #expect(settings.sslMode == "require")
        #expect(!settings.description.contains("cret"))
        #expect(try PostgresSettings(url: "postgresql://app@localhost/db").port == 5432)
    }

    @Test(arguments: [
        ("mysql://a@b/c", "must start with postgres://"), ("postgres://a@b", "names no database"),
        ("postgres://b/c", "names no user"), ("postgres://a@b/c?sslmode=verify", "sslmode must be"),
        ("postgres://a@b/c?timeout=3", "unknown parameter"), ("not a url", "postgres://"),
    ])
    func refusesWhatItCannotUse(url: String, problem: String) {
        #expect {
            try PostgresSettings(url: url)
        } throws: { error in
            (error as? ConfigurationError).map { $0.variable == "TOLLGATE_POSTGRES_URL" && $0.problem.contains(problem) } ?? false
        }
    }
}
