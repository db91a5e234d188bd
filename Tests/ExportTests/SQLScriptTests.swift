import Export
import Testing

@Suite struct SQLScriptTests {
    @Test func cutsAtSemicolonsOutsideCommentsQuotesAndDollarQuotes() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x text DEFAULT 'a;b');
            /* block; comment */ CREATE VIEW "v;w" AS SELECT 1;
            CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;

            ;
            SELECT $$x;y$$
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 4)
        #expect(statements[0].hasSuffix("CREATE TABLE a (x text DEFAULT 'a;b')"))
        #expect(statements[1] == #"/* block; comment */ CREATE VIEW "v;w" AS SELECT 1"#)
        #expect(statements[2] == "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql")
        #expect(statements[3] == "SELECT $$x;y$$")
    }

    @Test func aStandardFunctionBodyIsOneStatement() {
        let script = """
            CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC
                SELECT CASE WHEN true THEN 1 ELSE 2 END;
                SELECT 3;
            END;
            CREATE VIEW v AS SELECT f();
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 2)
        #expect(statements[0].hasSuffix("SELECT 3;\nEND"))
        #expect(statements[1] == "CREATE VIEW v AS SELECT f()")
    }

    @Test func theMigrationsCutIntoStatements() {
        for migration in ExportSchema.migrations {
            let statements = SQLScript.statements(migration.sql)
            #expect(!statements.isEmpty)
            #expect(statements.allSatisfy { !$0.hasSuffix(";") })
        }
    }
}
