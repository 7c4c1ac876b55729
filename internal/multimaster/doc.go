// Package multimaster holds end-to-end tests of Salt's multi-master
// options (hot master lists, master_type failover with
// master_alive_interval and master_failback, shared master key and pki_dir)
// with gsalt's commands as real processes: two gsalt-masters serving a
// gsalt-minion and a gsalt-proxy, and, when GSALT_SALT_SRC names a Salt
// source tree, a gsalt-master beside a real salt-master serving a real
// salt-minion and a gsalt-minion. It has no library code.
package multimaster
