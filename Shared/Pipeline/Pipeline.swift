// The stream consumer runtime (issue 2).
