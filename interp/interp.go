package interp

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaegi "github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"

	"github.com/toyml/toy/kernels"
	"github.com/toyml/toy/toy/display"
	"github.com/toyml/toy/toy/engine"
)

//go:generate go run ./internal/gensyms -out .

// Symbols holds the generated symbol tables: toy's public packages and the
// standard-library overlay (see internal/symgen).
var Symbols = map[string]map[string]reflect.Value{}

// Preloaded are the packages every interpreter imports before the first cell,
// so `m, err := toy.Load(path)` works as a first line. Importing one of them
// again is accepted and does nothing.
var Preloaded = []string{
	"fmt", "math", "os", "strings", "time", "errors",
	"github.com/toyml/toy/toy",
	"github.com/toyml/toy/toy/tensor",
	"github.com/toyml/toy/toy/sample",
	"github.com/toyml/toy/toy/engine",
	"github.com/toyml/toy/toy/gguf",
	"github.com/toyml/toy/toy/nn",
	"github.com/toyml/toy/toy/tokenizer",
	"github.com/toyml/toy/toy/display",
}

// builtins are Go 1.21 builtins yaegi v0.16.1 lacks, written as generic Go
// that it interprets.
const builtins = `
type _toyOrdered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~string
}

func min[T _toyOrdered](x T, y ...T) T {
	for _, v := range y {
		if v < x {
			x = v
		}
	}
	return x
}

func max[T _toyOrdered](x T, y ...T) T {
	for _, v := range y {
		if v > x {
			x = v
		}
	}
	return x
}
`

// Options configures an interpreter. Zero values mean the process's streams.
type Options struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Display receives what display.Show, display.Plot … publish. Nil prints
	// the bundle's text to Stdout.
	Display func(display.Bundle)
	// NoPreload skips the Preloaded imports (scripts with their own imports).
	NoPreload bool
	// Args is what os.Args reads inside the interpreter: a script's path
	// followed by its arguments, as go run gives a program its binary and
	// arguments. Nil means the process's os.Args.
	Args []string
}

// Interp is a yaegi interpreter with toy's packages, evaluating cells: any
// mix of imports, declarations and statements, the value of a final
// expression returned for display.
type Interp struct {
	mu      sync.Mutex
	y       *yaegi.Interpreter
	opts    Options
	imports map[string]string // package name in scope → import path
	names   map[string]string // import path → package name, for every known package
	nmain   int
	funcs   map[string]int // results of the cells' functions, by name (cross.go)
	methods map[string]int // … of their methods, -1 where two differ
	ntemp   int            // temporaries named by assignEdits
	pf      *panicFilter
	nsrc    int             // cells and files evaluated; the current one's number
	files   map[int]string  // the paths of the files among them, by number
	scopes  map[int][]scope // the scopes of each, by number (place.go)
}

// panicFilter takes the lines yaegi writes to stderr while a panic unwinds
// ("_toy3/_.go:3:5: panic: f(...)", one per frame, the innermost first) out
// of the output; the first gives the PanicError its place.
type panicFilter struct {
	w     io.Writer
	mu    sync.Mutex
	first *panicSite
}

// panicSite is where a panic was raised: a position as yaegi tells it (see
// place) and the function.
type panicSite struct {
	src, line, col int
	fn             string
}

var panicLine = regexp.MustCompile(`^` + yaegiPlace + `panic: (.*)\n?$`)

func (f *panicFilter) Write(p []byte) (int, error) {
	if m := panicLine.FindSubmatch(p); m != nil {
		f.mu.Lock()
		if f.first == nil {
			src, _ := strconv.Atoi(string(m[1]))
			line, _ := strconv.Atoi(string(m[2]))
			col, _ := strconv.Atoi(string(m[3]))
			f.first = &panicSite{src, line, col, strings.TrimSuffix(string(m[4]), "(...)")}
		}
		f.mu.Unlock()
		return len(p), nil
	}
	return f.w.Write(p)
}

func (f *panicFilter) take() *panicSite {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.first
	f.first = nil
	return s
}

// stdioMu serialises the YAEGI_SPECIAL_STDIO switch around yaegi.New.
var stdioMu sync.Mutex

// New returns an interpreter with the standard library, toy's packages and
// the Preloaded imports.
func New(opts Options) (*Interp, error) {
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	// os.Stdout inside scripts follows Options.Stdout only with this switch
	// when Stdout is not an *os.File (a notebook's stream).
	stdioMu.Lock()
	old, had := os.LookupEnv("YAEGI_SPECIAL_STDIO")
	_, isFile := opts.Stdout.(*os.File)
	if !isFile {
		os.Setenv("YAEGI_SPECIAL_STDIO", "1")
	}
	pf := &panicFilter{w: opts.Stderr}
	y := yaegi.New(yaegi.Options{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: pf, Unrestricted: true, Args: opts.Args})
	if had {
		os.Setenv("YAEGI_SPECIAL_STDIO", old)
	} else {
		os.Unsetenv("YAEGI_SPECIAL_STDIO")
	}
	stdioMu.Unlock()

	in := &Interp{y: y, opts: opts, pf: pf, imports: map[string]string{}, names: map[string]string{}, files: map[int]string{}, scopes: map[int][]scope{}}
	if err := y.Use(stdlib.Symbols); err != nil {
		return nil, err
	}
	if err := y.Use(in.symbols()); err != nil {
		return nil, err
	}
	if err := y.Use(instanceSymbols); err != nil {
		return nil, err
	}
	if err := y.Use(asSymbols()); err != nil {
		return nil, err
	}
	for _, src := range genericSources {
		if _, err := y.Compile(src); err != nil {
			return nil, fmt.Errorf("interp: generic overlay: %w", err)
		}
	}
	for _, m := range []map[string]map[string]reflect.Value{stdlib.Symbols, Symbols} {
		for k := range m {
			if i := strings.LastIndexByte(k, '/'); i > 0 {
				in.names[k[:i]] = k[i+1:]
			}
		}
	}
	if _, err := y.Eval(builtins); err != nil {
		return nil, fmt.Errorf("interp: builtins: %w", err)
	}
	if _, err := y.Eval(fmt.Sprintf("import %s %q", asName, asPath)); err != nil {
		return nil, fmt.Errorf("interp: %s: %w", asName, err)
	}
	if !opts.NoPreload {
		if err := in.importPaths(context.Background(), Preloaded); err != nil {
			return nil, fmt.Errorf("interp: preload: %w", err)
		}
	}
	return in, nil
}

// symbols returns Symbols with package display bound to this interpreter's
// Display function, so two kernels in one process do not share a sink.
func (in *Interp) symbols() map[string]map[string]reflect.Value {
	const key = "github.com/toyml/toy/toy/display/display"
	out := make(map[string]map[string]reflect.Value, len(Symbols))
	for k, v := range Symbols {
		out[k] = v
	}
	d := &display.Display{Publish: in.opts.Display}
	if in.opts.Display == nil {
		w := in.opts.Stdout
		d.Publish = func(b display.Bundle) { fmt.Fprintln(w, b.Text) }
	}
	m := map[string]reflect.Value{}
	for k, v := range Symbols[key] {
		m[k] = v
	}
	m["Default"] = reflect.ValueOf(&d).Elem()
	m["Show"] = reflect.ValueOf(d.Show)
	m["PNG"] = reflect.ValueOf(d.PNG)
	m["HTML"] = reflect.ValueOf(d.HTML)
	m["Plot"] = reflect.ValueOf(d.Plot)
	m["Heatmap"] = reflect.ValueOf(d.Heatmap)
	m["Table"] = reflect.ValueOf(d.Table)
	m["NewLivePlot"] = reflect.ValueOf(d.NewLivePlot)
	out[key] = m
	return out
}

// Result is what a cell evaluated to.
type Result struct {
	// Values holds the value(s) of the cell's final expression statement;
	// empty when the cell ends otherwise or the call returns nothing.
	Values []reflect.Value
}

// Eval evaluates a cell. Cancelling ctx interrupts it: loops in interpreted
// code stop at their next iteration, and ctx is the process's interrupt
// context while the cell runs (engine.SetInterrupt), so toy's long compiled
// calls made without a context — m.Generate, m.GenerateText — stop at their
// next token. Other compiled calls run to their end in the background.
// Panics in the cell come back as errors; see Describe. Errors give their
// places as the cell's lines and columns.
func (in *Interp) Eval(ctx context.Context, src string) (Result, error) {
	return in.evalSource(ctx, "", src)
}

// evalSource evaluates src, a cell or (file not "") a file's text.
func (in *Interp) evalSource(ctx context.Context, file, src string) (res Result, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.nsrc++
	if file != "" {
		in.files[in.nsrc] = file
	}
	key := fmt.Sprintf("_toy%d/%s", in.nsrc, yaegiFile)
	defer engine.SetInterrupt(ctx)()
	var chunks []*chunk
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r}
		}
		err = in.placeErr(err, chunks)
	}()
	chunks, err = split(src)
	if err != nil {
		return res, err
	}
	for _, c := range chunks {
		c.key = key
	}
	in.scopes[in.nsrc] = scopes(chunks)
	for i, c := range chunks {
		if err := ctx.Err(); err != nil {
			return res, interrupted(err)
		}
		last := i == len(chunks)-1
		if c.kind != importChunk {
			c = in.crossRewrite(c)
		}
		switch c.kind {
		case importChunk:
			var paths []string
			for _, s := range c.file.Imports {
				p, _ := strconv.Unquote(s.Path.Value)
				if s.Name != nil {
					p = s.Name.Name + " " + p
				}
				paths = append(paths, p)
			}
			if err := in.importPaths(ctx, paths); err != nil {
				return res, in.fixErr(err, c.line)
			}
		case declChunk:
			if err := in.evalDecls(ctx, c); err != nil {
				return res, err
			}
		case stmtChunk:
			res, err = in.evalStmts(ctx, c, last)
			if err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// EvalFile evaluates a Go source file as one cell: a package clause is
// dropped, and a func main is called once after the declarations. Errors
// name the file (path:line:col).
func (in *Interp) EvalFile(ctx context.Context, path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	return in.evalSource(ctx, path, dropPackage(string(b)))
}

// dropPackage blanks a leading package clause, keeping line numbers.
func dropPackage(src string) string {
	var s scannerLite
	s.init(src)
	off, tok := s.pos()
	if tok != token.PACKAGE {
		return src
	}
	end, name := s.pos()
	if name != token.IDENT {
		return src
	}
	for end < len(src) && src[end] != '\n' && src[end] != ';' {
		end++
	}
	if end < len(src) && src[end] == ';' {
		end++
	}
	return src[:off] + strings.Repeat(" ", end-off) + src[end:]
}

// importPaths imports specs ("path" or "name path") not yet in scope.
func (in *Interp) importPaths(ctx context.Context, specs []string) error {
	var b strings.Builder
	var added [][2]string
	for _, s := range specs {
		name, path := "", s
		if i := strings.IndexByte(s, ' '); i >= 0 {
			name, path = s[:i], s[i+1:]
		}
		if name == "" {
			name = in.names[path]
			if name == "" {
				name = path[strings.LastIndexByte(path, '/')+1:]
			}
		}
		if name == "_" || name == "." {
			fmt.Fprintf(&b, "import %s %q\n", name, path)
			continue
		}
		if in.imports[name] == path {
			continue // re-importing is an error in yaegi
		}
		fmt.Fprintf(&b, "import %s %q\n", name, path)
		added = append(added, [2]string{name, path})
	}
	if b.Len() == 0 {
		return nil
	}
	if _, err := in.eval(ctx, b.String()); err != nil {
		return err
	}
	for _, a := range added {
		in.imports[a[0]] = a[1]
	}
	return nil
}

// evalDecls evaluates declarations, renaming func main (yaegi would rerun it
// on every later evaluation) and calling it once instead. Every range
// without a value over an expression that may be an integer is rewritten
// (see rangeIntEdits) — yaegi cannot say which are without failing, and its
// failure writes to the process's log — and the chunk evaluated again
// without the rewrite of a range the interpreter then cannot convert to int
// (over a slice, map, string …).
func (in *Interp) evalDecls(ctx context.Context, c *chunk) error {
	c2, err := c.rewrite(c.loopVarEdits())
	if err != nil {
		return err
	}
	skip := map[int]bool{} // cell lines of ranges not to rewrite
	for {
		err := in.evalDeclsOnce(ctx, c2, func(s *ast.RangeStmt) bool {
			line, _ := c2.pos(s.For)
			return isIntExpr(s.X) || maybeInt(s.X) && !skip[line]
		})
		var ee *EvalError
		if err == nil || !errors.As(err, &ee) || !strings.Contains(ee.Msg, "cannot convert") {
			return err
		}
		if ee.Line <= 0 || skip[ee.Line] || !c2.rangeOnLine(ee.Line) {
			return err
		}
		skip[ee.Line] = true
	}
}

// rangeOnLine reports whether a range statement starts on line of the cell.
func (c *chunk) rangeOnLine(line int) bool {
	found := false
	ast.Inspect(c.file, func(n ast.Node) bool {
		if s, ok := n.(*ast.RangeStmt); ok {
			l, _ := c.pos(s.For)
			found = found || l == line
		}
		return !found
	})
	return found
}

// evalDeclsOnce evaluates c with the ranges pick chooses rewritten.
func (in *Interp) evalDeclsOnce(ctx context.Context, c *chunk, pick func(*ast.RangeStmt) bool) error {
	c2, err := c.rewrite(c.rangeIntEditsFunc(pick))
	if err != nil {
		return err
	}
	var edits []edit
	runMain := ""
	for _, d := range c2.file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Recv == nil && f.Name.Name == "main" {
			in.nmain++
			runMain = fmt.Sprintf("_toyMain%d", in.nmain)
			at := c2.offset(f.Name.Pos())
			edits = append(edits, edit{at, at + len("main"), runMain})
		}
	}
	src, at := applyAt(c2.src, c2.at, edits)
	if _, err := in.eval(ctx, annotate(src, at, c.key)); err != nil {
		if compileFailure(err) { // nothing ran: see define.go
			if d, ok := varAsDefine(c2); ok {
				_, err = in.evalRetry(ctx, in.prepare(d, false), d)
				return err
			}
		}
		return in.fixErr(err, 0)
	}
	if runMain != "" {
		if _, err := in.eval(ctx, ";"+runMain+"()"); err != nil {
			return in.fixErr(err, 0)
		}
	}
	return nil
}

var printFuncs = map[string]bool{"Print": true, "Println": true, "Printf": true, "Fprint": true, "Fprintln": true, "Fprintf": true}

// noValue are builtins called for their effect: yaegi answers a call to them
// with a stale value.
var noValue = map[string]bool{"print": true, "println": true, "panic": true, "delete": true, "close": true, "clear": true}

// evalStmts evaluates statements; when last, a final expression's values are
// returned.
func (in *Interp) evalStmts(ctx context.Context, c *chunk, last bool) (Result, error) {
	stmts := c.stmts()
	code := in.prepare(c, false)
	var expr ast.Expr
	if es, ok := stmts[len(stmts)-1].(*ast.ExprStmt); ok && len(stmts) == 1 && last {
		expr = es.X
	}
	if expr == nil {
		_, err := in.evalRetry(ctx, code, c)
		return Result{}, in.fixErr(err, 0)
	}
	nout := -1 // unknown
	if call, ok := expr.(*ast.CallExpr); ok {
		nout = in.results(c, call)
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && printFuncs[sel.Sel.Name] {
			if id, ok := sel.X.(*ast.Ident); ok && in.imports[id.Name] == "fmt" {
				nout = 0 // fmt.Println(…) shows its output, not its byte count
			}
		}
	}
	switch {
	case nout == 0:
		_, err := in.eval(ctx, code)
		return Result{}, in.fixErr(err, 0)
	case nout > 1:
		// Bind every result, then read them back.
		var names []string
		for i := 0; i < nout; i++ {
			names = append(names, fmt.Sprintf("_toyR%d", i))
		}
		if _, err := in.eval(ctx, ";"+strings.Join(names, ", ")+" := "+c.code()); err != nil {
			return Result{}, in.fixErr(err, 0)
		}
		var r Result
		for _, n := range names {
			v, err := in.eval(ctx, n)
			if err != nil {
				return Result{}, in.fixErr(err, 0)
			}
			r.Values = append(r.Values, v)
		}
		return r, nil
	}
	v, err := in.evalRetry(ctx, code, c)
	if err != nil {
		return Result{}, in.fixErr(err, 0)
	}
	if !v.IsValid() || (nout < 0 && v.Type() == reflect.TypeOf((*any)(nil))) {
		return Result{}, nil
	}
	return Result{Values: []reflect.Value{v}}, nil
}

// evalRetry evaluates code; if yaegi fails on a range over an integer it
// could not see syntactically, it retries with such ranges rewritten, and
// if it fails to type a define, it works around that (evalEach).
func (in *Interp) evalRetry(ctx context.Context, code string, c *chunk) (reflect.Value, error) {
	v, err := in.eval(ctx, code)
	if err == nil {
		return v, nil
	}
	if strings.Contains(err.Error(), "nil type") || strings.Contains(err.Error(), "cannot range") {
		if len(c.rangeIntEdits(true)) > 0 {
			if v2, err2 := in.eval(ctx, in.prepare(c, true)); err2 == nil {
				return v2, nil
			}
		}
	}
	if compileFailure(err) { // nothing ran: see define.go
		return in.evalEach(ctx, c, err)
	}
	return v, err
}

// prepare rewrites a statement chunk for yaegi: ranges over integers become
// three-clause loops (all: every range over a name), captured loop variables
// get per-iteration copies, and a lone if, for, switch … runs inside a
// function literal — it declares nothing outside itself, and yaegi runs it
// more faithfully there than at top level, where a type switch panics it and
// a per-iteration copy of a loop variable is the loop variable itself.
// The leading ";" keeps yaegi from reading a leading func literal as a
// declaration (it would define main and rerun it on every evaluation).
func (in *Interp) prepare(c *chunk, all bool) string {
	src, at := applyAt(c.src, c.at, c.rangeIntEdits(all))
	if c2, err := parseText(src, c.line); err == nil {
		src, at = applyAt(src, at, c2.loopVarEdits())
	}
	code := annotate(src, at, c.key)
	if stmts := c.stmts(); len(stmts) == 1 && blockStmt(stmts[0]) {
		code = "func() {" + code + "\n}()"
	}
	return ";" + code
}

// results returns how many results the function a call expression calls
// returns, or -1 when that cannot be told without running anything.
func (in *Interp) results(c *chunk, call *ast.CallExpr) int {
	fun := call.Fun
	if id, ok := fun.(*ast.Ident); ok && noValue[id.Name] {
		return 0
	}
	if !pure(fun) {
		return -1
	}
	text := c.src[c.offset(fun.Pos()):c.offset(fun.End())]
	v, err := in.eval(context.Background(), text)
	if err != nil || !v.IsValid() || v.Kind() != reflect.Func {
		return -1
	}
	return v.Type().NumOut()
}

// pure reports whether evaluating e has no effect: identifiers and selector
// chains on them.
func pure(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return pure(x.X)
	case *ast.ParenExpr:
		return pure(x.X)
	}
	return false
}

// eval runs yaegi with cancellation, turning panics (including yaegi's own)
// into errors.
func (in *Interp) eval(ctx context.Context, code string) (v reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r}
		}
	}()
	in.pf.take()
	v, err = in.y.EvalWithContext(ctx, code)
	var p yaegi.Panic
	if errors.As(err, &p) {
		val := p.Value
		if rv, ok := val.(reflect.Value); ok && rv.IsValid() && rv.CanInterface() {
			val = rv.Interface() // yaegi hands over panic(x) as reflect.ValueOf(x)
		}
		pe := &PanicError{Value: val, compile: compileStack(p.Stack)}
		in.placePanic(pe, in.pf.take(), siteKind(p.Stack))
		err = pe
	}
	if ctx.Err() != nil && err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		err = interrupted(err)
	}
	return v, err
}

// PanicError is a panic raised while evaluating a cell.
type PanicError struct {
	Value any
	// Where is the place the panic was raised, when yaegi told: "line 3,
	// in main.f(...)" in a cell, "path/to/file.go:3:9, in main.f(...)" in a
	// file run by EvalFile. The function is left out at a cell's top level.
	Where string
	// File, Line and Col are that place: File is "" in a cell, Line 0 when
	// yaegi did not tell.
	File      string
	Line, Col int

	src     int  // the number of the cell or file (Interp.nsrc)
	compile bool // raised by yaegi compiling the cell: nothing of it ran
}

func (e *PanicError) Error() string {
	if e.Where != "" {
		return fmt.Sprintf("panic: %v [%s]", e.Value, e.Where)
	}
	return fmt.Sprintf("panic: %v", e.Value)
}

// Unwrap exposes a panic raised with an error value (a NativeCallError …).
func (e *PanicError) Unwrap() error { err, _ := e.Value.(error); return err }

// ErrInterrupted is returned when an evaluation's context is cancelled.
var ErrInterrupted = errors.New("interrupted")

func interrupted(err error) error { return fmt.Errorf("%w (%v)", ErrInterrupted, err) }

// EvalError is an error reported by the interpreter (compile errors, errors
// from the cell) at its place in the cell or file.
type EvalError struct {
	File      string // the file EvalFile ran; "" in a cell
	Line, Col int    // the place; 0 where not known
	Msg       string // what is wrong
	Err       error  // yaegi's error, when it reported this one
}

// Error reads "line:col: msg" in a cell and "file:line:col: msg" in a file.
func (e *EvalError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, "%d:", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	return b.String() + e.Msg
}

func (e *EvalError) Unwrap() error { return e.Err }

// Describe names an evaluation error for display: "SyntaxError",
// "Interrupted", "NativeCallError" (a native kernel library is missing; the
// message says what to do), "panic" or "error", with its message. A nil
// error gives "", "".
func Describe(err error) (name, msg string) {
	if err == nil {
		return "", ""
	}
	var se *SyntaxError
	var ne *kernels.NativeCallError
	var pe *PanicError
	switch {
	case errors.As(err, &se):
		return "SyntaxError", err.Error()
	case errors.Is(err, ErrInterrupted):
		return "Interrupted", "interrupted"
	case errors.As(err, &ne):
		return "NativeCallError", ne.Error()
	case errors.As(err, &pe):
		return "panic", err.Error()
	}
	return "error", err.Error()
}

// Globals returns the names the cells have defined.
func (in *Interp) Globals() map[string]reflect.Value {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.y.Globals()
}
