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
	existing := map[string]string{"out.json": "{\n  \"old\": 1\n}\n",
		"m.toml":    "title = \"old\"\nwhen = 1979-05-27T07:32:00Z\nday = 1979-05-27\n[tbl]\nold = 1\nkeep = \"x\"\n[[arr]]\nk = 1\n",
		"same.toml": "a = 1\n\n[t]\nb = [ \"x\",]\n", "bad.toml": "a = 1\na = 2\n", "quirk.toml": "a = \"xyz\"\na.b.c = 1\n",
		"empty.yaml": "", "ctl.json": "{\"a\": \"x\x01y\", \"f\": [1.5]}\n", "list.json": "[1, 2]\n", "bad.json": "{nope\n", "same.yaml": "a:\n- x\n- 2\n- 1.5\n- null\n- true\nb: 1\nn:\n  k: v\n  z: {}\nu: \"\\xFC\"\n"}
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
		single("toml merge", "file.serialize", false, "name", "{dir}/m.toml", "dataset", payload.NewMap("tbl", payload.NewMap("new", int64(2), "keep", "y"), "top", "z"), "serializer", "toml", "merge_if_exists", true),
		single("toml merge test", "file.serialize", true, "name", "{dir}/m.toml", "dataset", payload.NewMap("tbl", payload.NewMap("new", int64(2))), "serializer", "toml", "merge_if_exists", true),
		single("toml merge same", "file.serialize", false, "name", "{dir}/same.toml", "dataset", payload.NewMap("t", payload.NewMap("b", []any{"x"})), "serializer", "toml", "merge_if_exists", true),
		single("toml merge bad existing", "file.serialize", false, "name", "{dir}/bad.toml", "dataset", payload.NewMap("a", int64(3)), "serializer", "toml", "merge_if_exists", true),
		single("toml merge quirk existing", "file.serialize", false, "name", "{dir}/quirk.toml", "dataset", payload.NewMap("a", int64(3)), "serializer", "toml", "merge_if_exists", true),
		single("toml merge absent", "file.serialize", false, "name", "{dir}/absent.toml", "dataset", payload.NewMap("a", int64(3)), "serializer", "toml", "merge_if_exists", true),
		single("json merge", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true),
		single("yaml merge same", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", payload.NewMap("b", int64(1)), "merge_if_exists", true),
		single("yaml merge", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", payload.NewMap("n", payload.NewMap("k", "w")), "merge_if_exists", true),
		single("yaml merge empty existing", "file.serialize", false, "name", "{dir}/empty.yaml", "dataset", ds, "merge_if_exists", true),
		// deserializer_opts reach json.load / yaml.load / toml.load on the open file
		single("json merge dopts unknown", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("a", int64(1))}),
		single("json merge dopts strict", "file.serialize", false, "name", "{dir}/ctl.json", "dataset", payload.NewMap("b", int64(1)), "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("strict", false)}),
		single("json merge dopts strict same", "file.serialize", false, "name", "{dir}/ctl.json", "dataset", payload.NewMap("a", "x\x01y"), "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{"skipped", payload.NewMap("strict", int64(0))}),
		single("json merge dopts yaml text", "file.serialize", false, "name", "{dir}/ctl.json", "dataset", payload.NewMap("b", int64(2)), "serializer", "json", "merge_if_exists", true, "deserializer_opts", "[{strict: false}, {parse_int: 0}, {parse_float: 1}]"),
		single("json merge dopts dict ignored", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", payload.NewMap("a", int64(1))),
		single("json merge dopts two keys ignored", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("a", int64(1), "b", int64(2))}),
		single("json serializer_opts dict ignored", "file.serialize", false, "name", "{dir}/od.json", "dataset", ds, "serializer", "json", "serializer_opts", payload.NewMap("indent", int64(8))),
		single("json merge dopts parse_int", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("parse_int", "x")}),
		single("json merge dopts parse_float unused", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("parse_float", "x")}),
		single("json merge dopts hooks order", "file.serialize", false, "name", "{dir}/ctl.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("strict", false), payload.NewMap("object_hook", int64(1)), payload.NewMap("parse_float", []any{}), payload.NewMap("parse_int", nil)}),
		single("json merge dopts pairs hook", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("object_hook", int64(1)), payload.NewMap("object_pairs_hook", true)}),
		single("json merge dopts cls", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("b", int64(1)), payload.NewMap("cls", "x")}),
		single("json merge dopts fp", "file.serialize", false, "name", "{dir}/out.json", "dataset", ds, "serializer", "json", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("s", int64(1)), payload.NewMap("fp", int64(1))}),
		single("yaml merge dopts unknown", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", payload.NewMap("b", int64(2)), "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("Loader", "x"), payload.NewMap("a", int64(1))}),
		single("yaml merge dopts Loader", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", payload.NewMap("b", int64(2)), "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("Loader", nil)}),
		single("yaml merge dopts stream", "file.serialize", false, "name", "{dir}/same.yaml", "dataset", payload.NewMap("b", int64(2)), "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("stream", "x")}),
		single("toml merge dopts unknown", "file.serialize", false, "name", "{dir}/m.toml", "dataset", payload.NewMap("top", "z"), "serializer", "toml", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("a", int64(1))}),
		single("toml merge dopts _dict", "file.serialize", false, "name", "{dir}/m.toml", "dataset", payload.NewMap("top", "z"), "serializer", "toml", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("_dict", "x")}),
		single("toml merge dopts decoder", "file.serialize", false, "name", "{dir}/m.toml", "dataset", payload.NewMap("top", "z"), "serializer", "toml", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("_dict", "x"), payload.NewMap("decoder", int64(1))}),
		single("toml merge dopts f", "file.serialize", false, "name", "{dir}/m.toml", "dataset", payload.NewMap("top", "z"), "serializer", "toml", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("f", int64(1))}),
		single("toml merge dopts absent file", "file.serialize", false, "name", "{dir}/absent.toml", "dataset", payload.NewMap("a", int64(3)), "serializer", "toml", "merge_if_exists", true, "deserializer_opts", []any{payload.NewMap("a", int64(1))}),
		single("deserializer_opts warns", "file.serialize", false, "name", "{dir}/w.json", "dataset", ds, "serializer", "json", "deserializer_opts", []any{payload.NewMap("a", int64(1))}),
	}
	for i := range calls {
		calls[i].Files = existing
	}
	runStateSuite(t, salttest.Suite{Name: "file_serialize", Calls: calls, Grains: payloadLinuxGrains(),
		Pillar: payload.NewMap("app", payload.NewMap("conf", payload.NewMap("port", int64(80), "hosts", []any{"a", "b"})))})
}
