package wheel

// pillarRootsFunctions is Salt's pillar_roots wheel module
// (salt/wheel/pillar_roots.py): file_roots' functions over pillar_roots.
// Unlike Salt, pillar_roots.find and read only look inside the roots.
func pillarRootsFunctions() []Function { return rootsFunctions("pillar_roots", pillarRoots) }
