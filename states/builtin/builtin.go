// Package builtin holds gsalt's state modules, one file per Salt state
// module (file, cmd, test, event, module, pkg, service, salt), with Salt 3006's
// argument names, return dicts and comments. Register adds them all to a
// states.Registry.
package builtin

import (
	"slices"

	"github.com/gsalt/gsalt/states"
)

// Register adds every built-in state function to r.
func Register(r *states.Registry) error {
	if err := r.Register(slices.Concat(fileStates(), cmdStates(), testStates(), eventStates(), moduleStates(),
		pkgStates(), serviceStates(), saltmodStates(), netconfigStates(), netntpStates(), netsnmpStates(), netusersStates(), probesStates(), hostStates(), aliasStates(), iniManageStates(), sysctlStates(), sshAuthStates(), groupStates(), fileCommentStates(), fileSerializeStates(), sshKnownHostsStates(), alternativesStates(), userStates(), fileCopyStates(), filePrependStates(), cronStates(), kmodStates(), timezoneStates(), localeStates(), mountStates(), mountFstabStates(), fileLinkStates(), fileKeyvalueStates(), fileAccumulatedStates(), gitStates(), gitRepoStates(), archiveStates(), fileCachedStates(), gitLatestStates(), pkgrepoStates(), pkgrepoMigratedStates(), pipStates(),
		postgresUserStates(), postgresGroupStates(), postgresDatabaseStates(), postgresSchemaStates(), postgresExtensionStates(),
		postgresTablespaceStates(), postgresLanguageStates(), postgresPrivilegesStates(), postgresInitdbStates(), iptablesStates(), saltProxyStates(), beaconStates(), fileBeaconStates(), scheduleStates())...); err != nil {
		return err
	}
	r.RegisterModInit("pkg", PkgModInit)
	r.RegisterModAggregate("pkg", PkgModAggregate)
	r.RegisterModAggregate("iptables", IptablesModAggregate)
	registerVirtuals(r)
	return nil
}
