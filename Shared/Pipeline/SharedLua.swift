/// The Lua every Tollgate function library shares (`Lua/common.lua`: `fail`, `register`, argument readers) and the
/// one the libraries that acknowledge work-stream entries or write jobs share (`Lua/jobs.lua`: the final states, the
/// one acknowledgement gate, the one status writer and its field names, a job with its first status), joined into
/// each library by ``RedisFunctionLibrary``.
package enum SharedLua {
    package static let common: [UInt8] = PackageResources.common_lua
    package static let jobs: [UInt8] = PackageResources.jobs_lua
}
