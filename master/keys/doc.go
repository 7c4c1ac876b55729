// Package keys manages the master's minion keys the way Salt 3006 does:
// the pki_dir layout (minions, minions_pre, minions_rejected,
// minions_denied, minions_autosign), salt-key's operations with their glob
// rules, events and AES rotation dropfile (Store), the _auth decision
// procedure with autosign and autoreject (Store.Authenticate, SALT-WIRE
// §4.2, §4.6, §4.7), salt-key --gen-keys (GenKeys) and salt-key's exact text
// and JSON output (FormatKeys, FormatJSON and the message helpers).
//
// The package knows nothing of sockets or configuration files: the caller
// maps its configuration onto Options and fires the events it is handed.
package keys
