// Package layers states gsalt's package layering: a package may import
// packages of its own layer or a lower one, never a higher one. The test
// of this package checks every import in the module against Of (with
// `go list`), so an upward import fails `go test ./internal/layers`.
//
//  1. wire/, render/, target/, event/, config/, output/, grains/,
//     version/, internal/*: leaves, Salt's salt.utils, salt.output,
//     salt.grains and the transport
//  2. modules/ (registry) + modules/builtin, pillar/, fileserver/,
//     schedule/ (salt.utils.schedule's evaluator, which the schedule.*
//     execution functions and the minion share; it imports only layer 1)
//     and beacons/ (salt.beacons: its caller adapter imports the modules
//     registry, and the beacons.* execution functions' tests drive a
//     beacons.Manager) and returners/ (salt.returners: registry +
//     returners/builtin)
//  3. states/
//  4. master/, minion/
//  5. proxy/, virt/, reactor/, bridge/ (event bus bridges such as NATS),
//     masterd/ (the master daemon wiring master and reactor together),
//     netapi/ (the REST API over the master) and
//     cli/ (the library behind each command)
//  6. cmd/ (flags only), examples/ and deploy/ (tests of the manifests)
package layers

import "strings"

// Module is the module path every gsalt package starts with.
const Module = "github.com/gsalt/gsalt"

// tops maps a top-level folder to its layer.
var tops = map[string]int{
	"wire": 1, "render": 1, "target": 1, "event": 1, "config": 1, "output": 1, "grains": 1, "version": 1, "internal": 1,
	"modules": 2, "pillar": 2, "fileserver": 2, "schedule": 2, "beacons": 2, "returners": 2,
	"states": 3,
	"master": 4, "minion": 4,
	"proxy": 5, "virt": 5, "reactor": 5, "masterd": 5, "cli": 5, "netapi": 5, "bridge": 5,
	"cmd": 6, "examples": 6, "deploy": 6,
}

// Of returns the layer of a gsalt import path, or 0 when the path is not
// in the module or its top-level folder has no layer yet (a new top-level
// folder must be added to the list above).
func Of(importPath string) int {
	rest, ok := strings.CutPrefix(importPath, Module+"/")
	if !ok {
		return 0
	}
	top, _, _ := strings.Cut(rest, "/")
	return tops[top]
}
