package builtin

// PostgresVirtualInForTest exposes the postgres module's __virtual__ with
// the directories which searches after PATH as a parameter: on a machine
// with /usr/bin/psql, Salt's which finds it whatever PATH says.
var PostgresVirtualInForTest = postgresVirtualIn
