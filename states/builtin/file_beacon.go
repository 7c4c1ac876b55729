package builtin

import (
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileBeaconStates is file.mod_beacon (salt/states/file.py): the beacon
// state argument of file.managed and file.directory adds an inotify
// beacon watching the file (create, delete, modify unless beacon_data
// names a mask; a directory recursively, new folders added).
func fileBeaconStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	return []states.Function{{Name: "file.mod_beacon", Spec: spec, Fn: beaconModBeacon("file", "beacon", []string{"managed", "directory"},
		func(name, sfun string, _, data *payload.Map) (*payload.Map, error) {
			watch := payload.NewMap("mask", beaconGet(data, "mask", []any{"create", "delete", "modify"}))
			if sfun == "directory" {
				watch.Set("auto_add", beaconGet(data, "auto_add", true))
				watch.Set("recurse", beaconGet(data, "recurse", true))
				watch.Set("exclude", beaconGet(data, "exclude", []any{}))
			}
			files := &payload.Map{}
			files.Set(name, watch)
			return payload.NewMap("files", files, "interval", beaconGet(data, "interval", int64(60)),
				"coalesce", beaconGet(data, "coalesce", false), "beacon_module", "inotify"), nil
		})}}
}
