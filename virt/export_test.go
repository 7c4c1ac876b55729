package virt

import (
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// PoolDefinitionXML returns the pool and secret definitions pool_define
// would send libvirt for the keyword arguments, the secret being named by
// usage pool_<name> (for pool types libvirt cannot define here, rbd).
func PoolDefinitionXML(kw *payload.Map) (pool, secret string, err error) {
	var spec modules.Spec
	for _, f := range Functions() {
		if f.Name == "virt.pool_define" {
			spec = f.Spec
		}
	}
	a, err := modules.BindKeywords(spec, kw)
	if err != nil {
		return "", "", err
	}
	name, ptype := a.Str("name"), a.Str("ptype")
	auth := asMap(a.Get("source_auth")).Clone()
	st := poolSecretTypes[ptype]
	if st == "" || auth == nil {
		return "", "", fmt.Errorf("no secret for %s pools", ptype)
	}
	auth.Set("type", st)
	auth.Set("secret", payload.NewMap("type", "usage", "value", "pool_"+name))
	pool, err = poolXML(a, auth)
	return pool, secretXML(st, "pool_"+name, fmt.Sprintf("Passphrase for %s pool created by Salt", name)), err
}
