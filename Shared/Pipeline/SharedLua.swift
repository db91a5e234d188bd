/// The Lua every Tollgate function library shares (`Lua/common.lua`: `fail`, `register`, argument readers) and the
/// one the libraries that write jobs share (`Lua/jobs.lua`: the final states, a job with its first status), joined
/// into each library by ``RedisFunctionLibrary``.
public enum SharedLua {
    public static let common: [UInt8] = PackageResources.common_lua
    public static let jobs: [UInt8] = PackageResources.jobs_lua
}
