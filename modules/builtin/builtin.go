// Package builtin holds gsalt's core execution modules, one file per Salt
// module. Register adds them all to a registry.
package builtin

import (
	"errors"
	"os"

	"github.com/gsalt/gsalt/modules"
)

// Register adds every core module to r.
func Register(r *modules.Registry) error {
	return errors.Join(
		r.Register(testFunctions()...),
		r.Register(cmdFunctions()...),
		r.Register(fileFunctions()...),
		r.Register(networkFunctions()...),
		r.Register(configFunctions()...),
		r.Register(grainsFunctions()...),
		r.Register(sysFunctions()...),
		r.Register(saltutilFunctions()...),
		r.Register(eventFunctions()...),
		r.Register(mineFunctions()...),
		r.Register(pillarFunctions()...),
		r.Register(cpFunctions()...),
		r.Register(PkgFunctions()...),
		r.Register(ServiceFunctions()...),
		r.Register(beaconsFunctions()...),
		r.Register(scheduleFunctions()...),
		r.Register(DnsmasqFunctions()...),
		r.Register(slsutilFunctions()...),
		r.Register(defaultsFunctions()...),
		r.Register(matchFunctions()...),
		r.Register(hostsFunctions()...),
		r.Register(aliasesFunctions()...),
		r.Register(modRandomFunctions()...),
		r.Register(iniManageFunctions()...),
		r.Register(sysctlFunctions()...),
		r.Register(fileTextFunctions()...),
		r.Register(userFunctions()...),
		r.Register(groupFunctions()...),
		r.Register(shadowFunctions()...),
		r.Register(pipFunctions()...),
		r.Register(sshFunctions()...),
		r.Register(sshKeyFunctions()...),
		r.Register(statusFunctions()...),
		r.Register(statusMasterFunctions()...),
		r.Register(diskFunctions()...),
		r.Register(diskFormatFunctions()...),
		r.Register(diskIostatFunctions()...),
		r.Register(timezoneFunctions()...),
		r.Register(localeFunctions()...),
		r.Register(kmodFunctions()...),
		r.Register(cronFunctions()...),
		r.Register(gitFunctions()...),
		r.Register(archiveFunctions()...),
		r.Register(gitOpsFunctions()...),
		r.Register(gitWorkFunctions()...),
		r.Register(gitRebaseFunctions()...),
		r.Register(aptRepoFunctions()...),
		r.Register(mountFunctions()...),
		r.Register(mountOpsFunctions()...),
		r.Register(mountSwapFunctions()...),
		r.Register(alternativesFunctions()...),
		r.Register(dataFunctions()...),
		r.Register(postgresFunctions()...),
		r.Register(iptablesFunctions()...),
		r.Register(saltProxyFunctions()...),
		setVirtuals(r),
	)
}

// setVirtuals installs the __virtual__ checks of the modules that load
// only where what they need is found.
func setVirtuals(r *modules.Registry) error {
	r.SetVirtual("postgres", postgresVirtual)
	r.SetVirtual("cron", CommandVirtual("crontab", ErrCrontabNotFound, saltWhichDirs))
	r.SetVirtual("iptables", CommandVirtual("iptables", ErrIptablesNotFound, saltWhichDirs))
	return nil
}

// CommandVirtual is the __virtual__ of a module that loads only where
// salt.utils.path.which finds the command exe: on PATH, then in the
// directories extra (Salt's which adds the standard bin directories;
// nil searches PATH only). Where exe is missing it returns reason.
func CommandVirtual(exe string, reason error, extra []string) modules.Virtual {
	return func(*modules.Env) error {
		if saltWhichIn(exe, os.Getenv("PATH"), extra) != "" {
			return nil
		}
		return reason
	}
}

// req, opt and kw build Params.
func req(name string) modules.Param          { return modules.Param{Name: name, Required: true} }
func opt(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
