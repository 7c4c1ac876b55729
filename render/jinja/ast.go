package jinja

// Expr is an expression node.
type Expr interface{ exprLine() int }

// Node is a statement node.
type Node interface{ nodeLine() int }

type pos struct{ Line int }

func (p pos) exprLine() int { return p.Line }
func (p pos) nodeLine() int { return p.Line }

type (
	// expressions
	constExpr struct {
		pos
		Val any
	}
	nameExpr struct {
		pos
		Name string
	}
	tupleExpr struct {
		pos
		Items []Expr
	}
	listExpr struct {
		pos
		Items []Expr
	}
	dictExpr struct {
		pos
		Keys, Vals []Expr
	}
	getattrExpr struct {
		pos
		Obj  Expr
		Attr string
	}
	getitemExpr struct {
		pos
		Obj, Key Expr
	}
	sliceExpr struct {
		pos
		Start, Stop, Step Expr
	}
	binExpr struct {
		pos
		Op   string
		L, R Expr
	}
	unaryExpr struct {
		pos
		Op string // "not", "-", "+"
		X  Expr
	}
	compareExpr struct {
		pos
		First Expr
		Ops   []string // "==", "in", "notin", ...
		Rest  []Expr
	}
	condExpr struct {
		pos
		Test, Then, Else Expr // Else may be nil
	}
	concatExpr struct {
		pos
		Items []Expr
	}
	callArgs struct {
		Args     []Expr
		KwNames  []string
		KwVals   []Expr
		DynArgs  Expr
		DynKwarg Expr
	}
	callExpr struct {
		pos
		Fn Expr
		callArgs
	}
	filterExpr struct {
		pos
		X    Expr // nil in filter blocks
		Name string
		callArgs
	}
	testExpr struct {
		pos
		X    Expr
		Name string
		callArgs
	}
	// nsRefExpr is a namespace attribute target in set: ns.attr
	nsRefExpr struct {
		pos
		Name, Attr string
	}
)

type (
	outputNode struct {
		pos
		Items []Node
	}
	dataNode struct {
		pos
		Text string
	}
	printNode struct {
		pos
		X Expr
		// Text is the output Jinja2's compiler computed from a constant
		// X at compile time (nil when X is evaluated at run time)
		Text *string
		// Safe: the constant was Markup (autoescape leaves it as it is)
		Safe bool
	}
	ifNode struct {
		pos
		Test  Expr
		Body  []Node
		Elifs []ifNode
		Else  []Node
	}
	forNode struct {
		pos
		Target    Expr
		Iter      Expr
		Body      []Node
		Else      []Node
		Test      Expr
		Recursive bool
	}
	setNode struct {
		pos
		Target Expr
		X      Expr
	}
	setBlockNode struct {
		pos
		Target Expr
		Filter *filterExpr // chain: Filter.X is another filterExpr or nil
		Body   []Node
	}
	macroNode struct {
		pos
		Name     string
		Args     []string
		Defaults []Expr // aligned to the last len(Defaults) args
		Body     []Node
	}
	callBlockNode struct {
		pos
		Call     *callExpr
		Args     []string
		Defaults []Expr
		Body     []Node
	}
	filterBlockNode struct {
		pos
		Filter *filterExpr
		Body   []Node
	}
	withNode struct {
		pos
		Targets []Expr
		Values  []Expr
		Body    []Node
	}
	doNode struct {
		pos
		X Expr
	}
	loopCtlNode struct {
		pos
		Break bool
	}
	includeNode struct {
		pos
		Template      Expr
		IgnoreMissing bool
		WithContext   bool
	}
	importNode struct {
		pos
		Template    Expr
		Target      string
		WithContext bool
	}
	fromImportNode struct {
		pos
		Template    Expr
		Names       []string
		Aliases     []string
		WithContext bool
	}
	extendsNode struct {
		pos
		Template Expr
		// Nested: inside an if (or autoescape) at the top level, where
		// Jinja2 decides at run time whether the template extends
		Nested bool
	}
	blockNode struct {
		pos
		Name     string
		Body     []Node
		Scoped   bool
		Required bool
	}
	scopeNode struct { // autoescape blocks
		pos
		Autoescape Expr
		Body       []Node
	}
	// extNode is a statement parsed by an extension tag.
	extNode struct {
		pos
		Tag  string
		Data any
		Body []Node
	}
)
