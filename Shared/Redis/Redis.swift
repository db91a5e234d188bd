// The Redis client on hiredis (issue 2).
