import ArgumentParser
import Pipeline

/// The user a ledger change is for, the project and who makes it (`--by`, recorded on the change's event): what
/// `tollctl sandbox clear` and `tollctl testers add|remove` take alike.
struct UserChangeArguments: ParsableArguments {
    @Argument(help: "The user id.")
    var userID: String

    @OptionGroup var project: ProjectOption

    @Option(help: "Who makes the change, recorded on the event as `by`.")
    var by = "tollctl"

    func validate() throws {
        guard UserID.isValid(userID) else { throw ValidationError("USERID is not a valid user id") }
        guard (1...128).contains(by.utf8.count) else { throw ValidationError("--by must be 1–128 bytes") }
    }
}
