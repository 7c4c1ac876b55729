package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pytoml"
	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// slsutilFunctions is Salt's slsutil module (salt/modules/slsutil.py):
// helpers formulas call from their map files and templates.
func slsutilFunctions() []modules.Function {
	return []modules.Function{
		{Name: "slsutil.update", Spec: modules.Spec{Params: []modules.Param{req("dest"), req("upd"), opt("recursive_update", true), opt("merge_lists", false)}},
			Doc: "Merge ``upd`` recursively into ``dest``\n\nIf ``merge_lists=True``, will aggregate list object types instead of\nreplacing. This behavior is only activated when ``recursive_update=True``.\n\nCLI Example:\n\n    salt '*' slsutil.update '{foo: Foo}' '{bar: Bar}'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return dictUpdate(c.Args.Get("dest"), c.Args.Get("upd"), argsBool(c, "recursive_update"), argsBool(c, "merge_lists"))
			}},
		{Name: "slsutil.merge", Spec: modules.Spec{Params: []modules.Param{req("obj_a"), req("obj_b"), opt("strategy", "smart"), opt("renderer", "yaml"), opt("merge_lists", false)}},
			Doc: "Merge a data structure into another by choosing a merge strategy\n\nStrategies:\n\n* aggregate\n* list\n* overwrite\n* recurse\n* smart\n\nCLI Example:\n\n    salt '*' slsutil.merge '{foo: Foo}' '{bar: Bar}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dictMerge(c.Args.Get("obj_a"), c.Args.Get("obj_b"), c.Args.Str("strategy"), c.Args.Str("renderer"), argsBool(c, "merge_lists"), render.AggregateMarksFrom(ctx))
			}},
		{Name: "slsutil.merge_all", Spec: modules.Spec{Params: []modules.Param{req("lst"), opt("strategy", "smart"), opt("renderer", "yaml"), opt("merge_lists", false)}},
			Doc: "Merge a list of objects into each other in order\n\n:type lst: Iterable\n:param lst: List of objects to be merged.\n\n:type strategy: String\n:param strategy: Merge strategy. See utils.dictupdate.\n\n:type renderer: String\n:param renderer:\n    Renderer type. Used to determine strategy when strategy is 'smart'.\n\n:type merge_lists: Bool\n:param merge_lists: Defines whether to merge embedded object lists.\n\nCLI Example:\n\n    $ salt-call --output=txt slsutil.merge_all '[{foo: Foo}, {foo: Bar}]'\n    local: {u'foo': u'Bar'}",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				var ret any = &payload.Map{}
				items, ok := pyfmt.List(c.Args.Get("lst"))
				if !ok {
					if m, isMap := c.Args.Get("lst").(*payload.Map); isMap {
						for _, k := range m.Items() {
							items = append(items, k.Key)
						}
					} else {
						return nil, fmt.Errorf("%w: '%s' object is not iterable", modules.ErrArguments, payload.TypeName(c.Args.Get("lst")))
					}
				}
				for _, obj := range items {
					var err error
					ret, err = dictMerge(ret, obj, c.Args.Str("strategy"), c.Args.Str("renderer"), argsBool(c, "merge_lists"), render.AggregateMarksFrom(ctx))
					if err != nil {
						return nil, err
					}
				}
				return ret, nil
			}},
		{Name: "slsutil.renderer", Spec: modules.Spec{Params: []modules.Param{opt("path", nil), opt("string", nil), opt("default_renderer", "jinja|yaml")}, Kwargs: true},
			Doc: "Parse a string or file through Salt's renderer system\n\n:param path: The path to a file on Salt's fileserver (any URIs supported by\n    cp.get_url) or on the local file system.\n:param string: An inline string to be used as the file to send through the\n    renderer system.\n:param default_renderer: The renderer pipe to send the file through; this\n    is overridden by a \"she-bang\" at the top of the file.\n:param kwargs: Keyword args passed to the template as variables.\n\nCLI Example:\n\n    salt '*' slsutil.renderer salt://path/to/file\n    salt '*' slsutil.renderer /path/to/file\n    salt '*' slsutil.renderer string='Inline template! {{ saltenv }}'\n    salt '*' slsutil.renderer string='Hello, {{ name }}.' name='world'",
			Fn:  slsutilRenderer},
		{Name: "slsutil.serialize", Spec: modules.Spec{Params: []modules.Param{req("serializer"), req("obj")}, Kwargs: true},
			Doc: "Serialize a Python object using one of the available serializers\n(gsalt has json, yaml and toml).\n\nCLI Example:\n\n    salt '*' --no-parse=obj slsutil.serialize 'json' obj=\"{'foo': 'Foo!'}\n\nJinja Example:\n\n    {% set json_string = salt.slsutil.serialize('json',\n        {'foo': 'Foo!'}) %}",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return Serialize(c.Args.Str("serializer"), c.Args.Get("obj"), c.Args.CleanKwargs())
			}},
		{Name: "slsutil.deserialize", Spec: modules.Spec{Params: []modules.Param{req("serializer"), req("stream_or_string")}, Kwargs: true},
			Doc: "Deserialize a Python object using one of the available serializers\n(gsalt has json, yaml and toml).\n\nCLI Example:\n\n    salt '*' slsutil.deserialize 'json' '{\"foo\": \"Foo!\"}'\n\nJinja Example:\n\n    {% set python_object = salt.slsutil.deserialize('json',\n        '{\"foo\": \"Foo!\"}') %}",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return Deserialize(ctx, c.Args.Str("serializer"), c.Args.Get("stream_or_string"))
			}},
		{Name: "slsutil.banner", Spec: modules.Spec{Params: []modules.Param{opt("width", int64(72)), opt("commentchar", "#"), opt("borderchar", "#"),
			opt("blockstart", nil), opt("blockend", nil), opt("title", nil), opt("text", nil), opt("newline", false)}},
			Doc: "Create a standardized comment block to include in a templated file.\n\n:param width: The width, in characters, of the banner. Default is 72.\n:param commentchar: The character to be used in the starting position of\n    each line.\n:param borderchar: The character to use in the top and bottom border of\n    the comment box. Must be a single character.\n:param blockstart: The character sequence to use at the beginning of a\n    block comment.\n:param blockend: The character sequence to use at the end of a\n    block comment.\n:param title: The first field of the comment block, centered.\n:param text: The second field of the comment block, left-justified.\n:param newline: Whether the comment block should end with a newline.\n\n    {{ salt['slsutil.banner']() }}",
			Fn:  slsutilBanner},
		{Name: "slsutil.boolstr", Spec: modules.Spec{Params: []modules.Param{req("value"), opt("true", "true"), opt("false", "false")}},
			Doc: "Convert a boolean value into a string.\n\n:param value: The boolean value to be converted\n:param true: The value to return if ``value`` is ``True``\n:param false: The value to return if ``value`` is ``False``\n\n    use_tls: {{ salt['slsutil.boolstr'](encrypted, 'yes', 'no') }}",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				if payload.Truthy(c.Args.Get("value")) {
					return c.Args.Get("true"), nil
				}
				return c.Args.Get("false"), nil
			}},
		{Name: "slsutil.file_exists", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", "base")}},
			Doc: "Return ``True`` if a file exists in the state tree, ``False`` otherwise.\n\n:param str path: The fully qualified path to a file in the state tree.\n:param str saltenv: The fileserver environment to search. Default: ``base``\n\nCLI Example:\n\n    salt '*' slsutil.file_exists nginx/defaults.yaml",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return slsutilExists(ctx, c, c.Args.Get("path"), c.Args.Str("saltenv"), true, false)
			}},
		{Name: "slsutil.dir_exists", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", "base")}},
			Doc: "Return ``True`` if a directory exists in the state tree, ``False`` otherwise.\n\n:param str path: The fully qualified path to a directory in the state tree.\n:param str saltenv: The fileserver environment to search. Default: ``base``\n\nCLI Example:\n\n    salt '*' slsutil.dir_exists nginx/files",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return slsutilExists(ctx, c, c.Args.Get("path"), c.Args.Str("saltenv"), false, true)
			}},
		{Name: "slsutil.path_exists", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", "base")}},
			Doc: "Return ``True`` if a path exists in the state tree, ``False`` otherwise. The path\ncould refer to a file or directory.\n\nCLI Example:\n\n    salt '*' slsutil.path_exists nginx/defaults.yaml",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return slsutilExists(ctx, c, c.Args.Get("path"), c.Args.Str("saltenv"), true, true)
			}},
		{Name: "slsutil.findup", Spec: modules.Spec{Params: []modules.Param{req("startpath"), req("filenames"), opt("saltenv", "base")}},
			Doc: "Find the first path matching a filename or list of filenames in a specified\ndirectory or the nearest ancestor directory. Returns the full path to the\nfirst file found.\n\n:param str startpath: The fileserver path from which to begin the search.\n    An empty string refers to the state tree root.\n:param filenames: A filename or list of filenames to search for.\n:param str saltenv: The fileserver environment to search. Default: ``base``\n\nCLI Example:\n\n    salt '*' slsutil.findup formulas/shared/nginx map.jinja",
			Fn:  slsutilFindup},
	}
}

// slsutilExists checks p against cp.list_master (files) and
// cp.list_master_dirs (dirs) of saltenv.
func slsutilExists(ctx context.Context, c *modules.Call, p any, saltenv string, files, dirs bool) (bool, error) {
	fc, err := cpClient(c)
	if err != nil {
		return false, err
	}
	want := pyfmt.Str(p)
	if _, isStr := p.(string); !isStr {
		return false, nil
	}
	lists := []func(context.Context, string, string) (any, error){}
	if files {
		lists = append(lists, fc.FileList)
	}
	if dirs {
		lists = append(lists, fc.DirList)
	}
	for _, list := range lists {
		ret, err := list(ctx, saltenv, "")
		if err != nil {
			return false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		names, _ := pyfmt.List(ret)
		for _, n := range names {
			if s, ok := n.(string); ok && s == want {
				return true, nil
			}
		}
	}
	return false, nil
}

func slsutilFindup(ctx context.Context, c *modules.Call) (any, error) {
	start := c.Args.Str("startpath")
	if !payload.Truthy(c.Args.Get("startpath")) {
		start = ""
	}
	saltenv := c.Args.Str("saltenv")
	if start != "" {
		start = path.Clean(start)
		if strings.HasPrefix(start, "//") && !strings.HasPrefix(start, "///") {
			start = "//" + strings.TrimLeft(start, "/")
		}
		ok, err := slsutilExists(ctx, c, start, saltenv, true, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: Starting path not found in the state tree: %s", modules.ErrInvocation, start)
		}
	}
	var names []string
	switch f := c.Args.Get("filenames").(type) {
	case string:
		names = []string{f}
	case []any:
		for _, e := range f {
			names = append(names, pyfmt.Str(e))
		}
	default:
		return nil, fmt.Errorf("%w: Filenames argument must be a string or list of strings", modules.ErrInvocation)
	}
	for {
		for _, n := range names {
			full := n
			if start != "" {
				full = slsutilJoin(start, n)
			}
			ok, err := slsutilExists(ctx, c, full, saltenv, true, true)
			if err != nil {
				return nil, err
			}
			if ok {
				return full, nil
			}
		}
		if start == "" {
			return nil, fmt.Errorf("%w: File pattern(s) not found in path ancestry", modules.ErrExecution)
		}
		start = path.Dir(start)
		if start == "." {
			start = ""
		}
	}
}

// slsutilJoin is salt.utils.path.join with use_posixpath: posixpath.join
// with the leading slashes of later parts stripped.
func slsutilJoin(a, b string) string {
	b = strings.TrimLeft(b, "/")
	if a == "" || strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// slsutilRenderer renders a file or string through a renderer pipeline.
func slsutilRenderer(ctx context.Context, c *modules.Call) (any, error) {
	p, s := c.Args.Get("path"), c.Args.Get("string")
	if !payload.Truthy(p) && !payload.Truthy(s) {
		return nil, fmt.Errorf("%w: Must pass either path or string", modules.ErrInvocation)
	}
	kw := c.Args.CleanKwargs()
	saltenv := "base"
	if v, ok := kw.Get("saltenv"); ok {
		saltenv = payload.Text(v)
	}
	rc := &render.Context{Saltenv: saltenv, Vars: kw, Salt: execCaller{c: c}, Opts: optsMap(c)}
	if c.Env != nil {
		rc.Grains, rc.Pillar, rc.Log = c.Env.Grains, c.Env.Pillar, c.Env.Log
	}
	if v, ok := kw.Get("sls"); ok {
		rc.SLS = payload.Text(v)
	}
	var src []byte
	if payload.Truthy(p) {
		fc, err := cpClient(c)
		if err != nil {
			return nil, err
		}
		rc.Files = fc
		ps := payload.Text(p)
		local := ps
		if strings.HasPrefix(ps, "salt://") {
			rc.Source = ps
			local, err = fc.CacheFile(ctx, ps, saltenv)
			if err != nil || local == "" {
				return nil, fmt.Errorf("%w: Template %s does not exist", modules.ErrExecution, ps)
			}
		}
		local = strings.TrimPrefix(local, "file://")
		rc.Path = local
		src, err = os.ReadFile(local)
		if err != nil {
			return nil, fmt.Errorf("%w: Template %s does not exist", modules.ErrExecution, ps)
		}
	} else {
		src = []byte(payload.Text(s))
		if fc, err := cpClient(c); err == nil {
			rc.Files = fc
		}
	}
	return renderKeepShebang(ctx, src, c.Args.Str("default_renderer"), rc)
}

// renderKeepShebang renders src like salt.template.compile_template: a
// "#!" line picks the pipeline but stays in the text a text renderer
// (jinja) sees, as in Salt; data renderers get the text without it.
func renderKeepShebang(ctx context.Context, src []byte, pipeline string, rc *render.Context) (any, error) {
	ctx = render.EnsureAggregateMarks(ctx, rc)
	reg := render.Default()
	shebang, rest := render.SplitShebang(src)
	if shebang != "" {
		pipeline = shebang
	}
	var names []string
	for _, part := range strings.Split(pipeline, "|") {
		if part = strings.TrimSpace(part); part != "" {
			names = append(names, part)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("salt.exceptions.SaltRenderError: empty renderer pipeline %q", pipeline)
	}
	var data any = string(src)
	for i, name := range names {
		if i == 0 && shebang != "" && name != "jinja" {
			data = string(rest)
		}
		rd, ok := reg.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("salt.exceptions.SaltRenderError: renderer %q is not available", name)
		}
		out, err := rd.Render(ctx, data, rc)
		if err != nil {
			return nil, fmt.Errorf("salt.exceptions.SaltRenderError: %w", err)
		}
		data = out
	}
	return data, nil
}

// optsMap returns the minion options as a map for templates.
func optsMap(c *modules.Call) *payload.Map {
	if c.Env != nil {
		if m, ok := c.Env.Opts.(*payload.Map); ok {
			return m
		}
	}
	return &payload.Map{}
}

// execCaller runs salt['mod.fun'] of templates through the call's registry.
type execCaller struct{ c *modules.Call }

// CallFunction implements render.Caller.
func (e execCaller) CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (any, error) {
	return callFunction(ctx, e.c, fun, args, kwargs)
}

// ErrSerializer is returned for a serializer gsalt does not have.
var ErrSerializer = errors.New("serializer not available")

// Serialize is salt.serializers.<name>.serialize for json, yaml and toml, with
// the options Salt's serializers honour (json: indent, sort_keys,
// ensure_ascii; yaml: default_flow_style, indent, width, allow_unicode).
func Serialize(name string, obj any, opts *payload.Map) (string, error) {
	if opts == nil {
		opts = &payload.Map{}
	}
	switch name {
	case "json":
		o := pyfmt.JSONOptions{Indent: -1}
		if v, ok := opts.Get("indent"); ok && v != nil {
			if n, ok := payload.AsInt(v); ok {
				o.Indent = int(n)
			}
		}
		if opts.Bool("ensure_ascii") {
			o.EnsureASCII = true
		}
		if opts.Bool("sort_keys") {
			o.SortKeys = sortByKey
		}
		s, err := pyfmt.JSON(obj, o)
		if err != nil {
			return "", fmt.Errorf("salt.serializers.SerializationError: %w", err)
		}
		return s, nil
	case "yaml":
		o := pyyaml.Options{Flavor: pyyaml.LibYAML, FlowLeaves: true, SortKeys: sortByKey, UnknownAsNull: false,
			Normalize: func(v any) any {
				if t, ok := v.(jinja.Tuple); ok {
					return []any(t) // Salt's dumpers write a tuple as a sequence
				}
				return v
			}}
		if v, ok := opts.Get("default_flow_style"); ok {
			switch v {
			case true:
				o.Flow, o.FlowLeaves = true, false
			case false:
				o.FlowLeaves = false
			}
		}
		if n, ok := opts.Int("indent"); ok {
			o.Indent = int(n)
		}
		if n, ok := opts.Int("width"); ok {
			o.Width = int(n)
		}
		o.AllowUnicode = opts.Bool("allow_unicode")
		s, err := pyyaml.Dump(obj, o)
		if err != nil {
			return "", fmt.Errorf("salt.serializers.SerializationError: %w", err)
		}
		if strings.HasSuffix(s, "\n...\n") {
			return s[:len(s)-5], nil
		}
		return strings.TrimSuffix(s, "\n"), nil
	case "toml":
		s, err := serializeTOML(obj, opts)
		if err != nil {
			return "", &modules.PyException{Class: "salt.serializers.SerializationError", Message: err.Error()}
		}
		return s, nil
	}
	return "", fmt.Errorf("%w: Serializer '%s' not found.", modules.ErrExecution, name)
}

// serializeTOML is salt.serializers.toml.serialize: toml.dumps(obj,
// **opts) of python3-toml 0.10.2 (internal/pytoml), which takes no option
// but encoder (a Python object, never given from SLS).
func serializeTOML(obj any, opts *payload.Map) (string, error) {
	if _, ok := opts.Get("file_out"); ok {
		return "", pytoml.ParamError("dump", "file_out")
	}
	// Python refuses the first keyword argument dumps does not take
	// before it uses the encoder
	for _, it := range opts.Items() {
		if k := payload.Text(it.Key); k != "encoder" {
			return "", pytoml.ParamError("dumps", k)
		}
	}
	if enc, ok := opts.Get("encoder"); ok {
		return "", pytoml.AttributeError(enc, "dump_sections")
	}
	return pytoml.Dumps(obj)
}

// Deserialize is salt.serializers.<name>.deserialize for json, yaml and
// toml (python3-toml 0.10.2's toml.loads, internal/pytoml).
func Deserialize(ctx context.Context, name string, src any) (any, error) {
	text := payload.Text(src)
	switch name {
	case "toml":
		v, err := pytoml.Loads(text)
		if err != nil {
			return nil, &modules.PyException{Class: "salt.serializers.DeserializationError", Message: err.Error()}
		}
		return v, nil
	case "json":
		v, err := render.DecodeJSON([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("salt.serializers.DeserializationError: %w", err)
		}
		return v, nil
	case "yaml":
		v, err := render.YAML{}.Render(ctx, text, nil)
		if err != nil {
			return nil, fmt.Errorf("salt.serializers.DeserializationError: %w", err)
		}
		if m, ok := v.(*payload.Map); ok && m.Len() == 0 && strings.TrimSpace(text) == "" {
			return nil, nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: Serializer '%s' not found.", modules.ErrExecution, name)
}

// sortByKey is sorted(d.items()): keys ordered by Python's < (bools, ints
// and floats together, str by code point, tuples item by item); keys that
// do not compare (None, a str beside a number) give Python's TypeError,
// which json.dumps(sort_keys=True) raises and PyYAML answers by keeping the
// dict's own order.
func sortByKey(m *payload.Map) ([]payload.Item, error) {
	items := append([]payload.Item(nil), m.Items()...)
	var err error
	sort.SliceStable(items, func(i, j int) bool {
		c, e := jinja.Compare(items[i].Key, items[j].Key, "<")
		if e != nil {
			if err == nil {
				err = e
			}
			return false
		}
		return c < 0
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

func slsutilBanner(_ context.Context, c *modules.Call) (any, error) {
	width64, err := c.Args.Int("width")
	if err != nil {
		return nil, err
	}
	width := int(width64)
	commentchar, borderchar := c.Args.Str("commentchar"), c.Args.Str("borderchar")
	title := "THIS FILE IS MANAGED BY SALT - DO NOT EDIT"
	if v := c.Args.Get("title"); v != nil {
		title = payload.Text(v)
	}
	text := "The contents of this file are managed by Salt. Any changes to this file may be overwritten automatically and without warning."
	if v := c.Args.Get("text"); v != nil {
		text = payload.Text(v)
	}
	ledge := strings.TrimRight(commentchar, " \t\n\r\v\f")
	redge := strings.TrimSpace(commentchar)
	lgutter, rgutter := ledge+" ", " "+redge
	textwidth := width - runeLen(lgutter) - runeLen(rgutter)
	if textwidth <= 0 {
		return nil, fmt.Errorf("%w: Width is too small to render banner", modules.ErrExecution)
	}
	border := commentchar
	if br := []rune(borderchar); len(br) > 0 {
		if n := width - runeLen(ledge) - runeLen(redge); n > 0 {
			border += strings.Repeat(string(br[0]), n)
		}
	}
	border += redge
	spacer := commentchar
	if n := width - runeLen(commentchar)*2; n > 0 {
		spacer += strings.Repeat(" ", n)
	}
	spacer += commentchar
	var block []string
	if v := c.Args.Get("blockstart"); v != nil {
		block = append(block, payload.Text(v))
	}
	block = append(block, border, spacer)
	for _, line := range textWrap(title, textwidth) {
		block = append(block, lgutter+pyCenter(line, textwidth)+rgutter)
	}
	block = append(block, spacer)
	for _, line := range textWrap(text, textwidth) {
		pad := textwidth - runeLen(line)
		if pad < 0 {
			pad = 0
		}
		block = append(block, lgutter+line+strings.Repeat(" ", pad)+rgutter)
	}
	block = append(block, border)
	if v := c.Args.Get("blockend"); v != nil {
		block = append(block, payload.Text(v))
	}
	res := strings.Join(block, "\n")
	if payload.Truthy(c.Args.Get("newline")) {
		res += "\n"
	}
	return res, nil
}

func runeLen(s string) int { return len([]rune(s)) }

// pyCenter is Python's str.center(width).
func pyCenter(s string, width int) string {
	n := runeLen(s)
	marg := width - n
	if marg <= 0 {
		return s
	}
	left := marg/2 + (marg & width & 1)
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", marg-left)
}

// textWrap is textwrap.wrap(text, width) with the defaults: whitespace
// becomes spaces, words break after hyphens inside words, words longer
// than width are broken, and whitespace at line ends is dropped.
func textWrap(text string, width int) []string {
	text = strings.ReplaceAll(text, "\t", "        ")
	var chunks []string
	for _, w := range strings.Fields(text) {
		// Split after hyphens that sit between letters (break_on_hyphens).
		r := []rune(w)
		start := 0
		for i := 1; i < len(r)-1; i++ {
			if r[i] == '-' && isWordRune(r[i-1]) && isWordRune(r[i+1]) {
				chunks = append(chunks, string(r[start:i+1]))
				start = i + 1
			}
		}
		chunks = append(chunks, string(r[start:]))
		chunks = append(chunks, " ")
	}
	if len(chunks) > 0 {
		chunks = chunks[:len(chunks)-1]
	}
	// Reverse-free greedy fill, as TextWrapper._wrap_chunks does.
	var lines []string
	i := 0
	for i < len(chunks) {
		var cur []string
		curLen := 0
		if chunks[i] == " " {
			i++
		}
		for i < len(chunks) {
			l := runeLen(chunks[i])
			if curLen+l <= width {
				cur = append(cur, chunks[i])
				curLen += l
				i++
				continue
			}
			break
		}
		if i < len(chunks) && runeLen(chunks[i]) > width {
			// Break the long word to fill the line.
			space := width - curLen
			if space < 1 {
				space = 1
			}
			if curLen == 0 || space > 0 {
				r := []rune(chunks[i])
				if space < len(r) && (curLen < width) {
					cur = append(cur, string(r[:space]))
					curLen += space
					chunks[i] = string(r[space:])
				}
			}
		}
		for len(cur) > 0 && strings.TrimSpace(cur[len(cur)-1]) == "" {
			curLen -= runeLen(cur[len(cur)-1])
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, ""))
		}
	}
	return lines
}

func isWordRune(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r > 127
}
