package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestFileSerializeGolden compares file.serialize (json, yaml and toml, test
// mode, pillar data sets, errors) on temporary files with Salt 3006
// (testdata/golden/file_serialize.json).
func TestFileSerializeGolden(t *testing.T) {
	ds := payload.NewMap("b", int64(1), "a", []any{"x", int64(2), 1.5, nil, true}, "n", payload.NewMap("k", "v", "z", payload.NewMap()), "u", "ü")
	existing := map[string]string{"out.json": "{\n  \"old\": 1\n}\n", "same.yaml": "a:\n- x\n- 2\n- 1.5\n- null\n- true\nb: 1\nn:\n  k: v\n  z: {}\nu: \"\\xFC\"\n"}
	calls := []salttest.Call{
		single("json new", "file.serialize", false, "name", "{dir}/new.json", "dataset", ds, "serializer", "json"),
		single("json replace", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json"),
		single("json test", "file.serialize", true, "name", "{dir}/out.json", "dataset", ds, "serializer", "json"),
		single("yaml new", "file.serialize", false, "name", "{dir}/new.yaml", "dataset", ds),
		single("yaml formatter", "file.serialize", false, "name", "{dir}/f.yaml", "dataset", ds, "formatter", "YAML", "mode", "0600"),
		single("yaml same", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", ds),
		single("yaml same test", "file.serialize", true, "name", "{dir}/same.yaml", "dataset", ds),
		single("json encoding", "file.serialize", false, "name", "{dir}/enc.json", "dataset", ds, "serializer", "json", "encoding", "utf-8"),
		single("json opts", "file.serialize", false, "name", "{dir}/o.json", "dataset", ds, "serializer", "json", "serializer_opts", []any{payload.NewMap("indent", int64(4))}),
		single("pillar", "file.serialize", false, "name", "{dir}/p.json", "dataset_pillar", "app:conf", "serializer", "json"),
		single("no create", "file.serialize", false, "name", "{dir}/absent.json", "dataset", ds, "create", false),
		single("both", "file.serialize", false, "name", "{dir}/x", "dataset", ds, "serializer", "json", "formatter", "yaml"),
		single("no dataset", "file.serialize", false, "name", "{dir}/x"),
		single("unknown", "file.serialize", false, "name", "{dir}/x", "dataset", ds, "serializer", "nope"),
		single("makedirs", "file.serialize", false, "name", "{dir}/sub/dir/x.json", "dataset", ds, "serializer", "json", "makedirs", true),
		single("no makedirs", "file.serialize", false, "name", "{dir}/sub2/x.json", "dataset", ds, "serializer", "json"),
		single("toml new", "file.serialize", false, "name", "{dir}/new.toml", "dataset", payload.NewMap("top", "x", "tbl", ds, "arr", []any{payload.NewMap("k", int64(1)), payload.NewMap("k", int64(2))}), "serializer", "toml"),
		single("toml test", "file.serialize", true, "name", "{dir}/t.toml", "dataset", ds, "formatter", "TOML"),
		single("toml opts", "file.serialize", false, "name", "{dir}/o.toml", "dataset", ds, "serializer", "toml", "serializer_opts", []any{payload.NewMap("indent", int64(4))}),
		single("toml control char", "file.serialize", false, "name", "{dir}/c.toml", "dataset", payload.NewMap("k", "\x01"), "serializer", "toml"),
		single("deserializer_opts warns", "file.serialize", false, "name", "{dir}/w.json", "dataset", ds, "serializer", "json", "deserializer_opts", []any{payload.NewMap("a", int64(1))}),
	}
	for i := range calls {
		calls[i].Files = existing
	}
	runStateSuite(t, salttest.Suite{Name: "file_serialize", Calls: calls, Grains: payloadLinuxGrains(),
		Pillar: payload.NewMap("app", payload.NewMap("conf", payload.NewMap("port", int64(80), "hosts", []any{"a", "b"})))})
}
