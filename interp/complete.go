// Completion, documentation and input completeness, for the REPL's
// continuation lines and :doc and the kernel's is_complete, complete and
// inspect requests.

package interp

import (
	"fmt"
	"go/token"
	"reflect"
	"sort"
	"strings"
)

// IsComplete reports whether src can be evaluated as is ("complete"), needs
// more lines ("incomplete": an open bracket, string or statement), or can not
// be fixed by more input ("invalid").
func IsComplete(src string) string {
	if strings.TrimSpace(src) == "" {
		return "complete"
	}
	chunks, err := split(src)
	if err != nil {
		if se, ok := err.(*SyntaxError); ok && se.EOF {
			return "incomplete"
		}
		// An unclosed bracket can also end in a different parse error.
		if depth(src) > 0 {
			return "incomplete"
		}
		return "invalid"
	}
	_ = chunks
	if depth(src) > 0 {
		return "incomplete"
	}
	return "complete"
}

// depth counts brackets left open in src, outside strings and comments.
func depth(src string) int {
	d := 0
	var s scannerLite
	s.init(src)
	for tok := s.next(); tok != token.EOF; tok = s.next() {
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			d++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			d--
		}
	}
	return d
}

var keywords = []string{"break", "case", "chan", "const", "continue", "default", "defer", "else",
	"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package",
	"range", "return", "select", "struct", "switch", "type", "var"}

var builtinNames = []string{"append", "cap", "close", "complex", "copy", "delete", "imag", "len",
	"make", "max", "min", "new", "panic", "print", "println", "real", "recover",
	"bool", "byte", "complex128", "complex64", "error", "float32", "float64", "int", "int16",
	"int32", "int64", "int8", "rune", "string", "uint", "uint16", "uint32", "uint64", "uint8",
	"uintptr", "any", "true", "false", "nil", "iota"}

// token returns the identifier or selector chain ("toy.Lo", "m.Gen") ending at
// cursor (a byte offset into code), and where it starts.
func wordAt(code string, cursor int) (word string, start int) {
	if cursor > len(code) {
		cursor = len(code)
	}
	start = cursor
	for start > 0 {
		c := code[start-1]
		if c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			start--
			continue
		}
		break
	}
	return code[start:cursor], start
}

// Complete returns the names that can complete the word ending at cursor:
// members of a package ("tensor.Mat"), fields and methods of a variable
// ("m.Gen"), or names in scope, packages, keywords and builtins. start and
// end delimit the text the matches replace.
func (in *Interp) Complete(code string, cursor int) (matches []string, start, end int) {
	word, start := wordAt(code, cursor)
	end = start + len(word)
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		base, prefix := word[:i], word[i+1:]
		for _, n := range in.members(base) {
			if strings.HasPrefix(n, prefix) {
				matches = append(matches, base+"."+n)
			}
		}
		return matches, start, end
	}
	seen := map[string]bool{}
	add := func(n string) {
		if strings.HasPrefix(n, word) && !seen[n] && !strings.HasPrefix(n, "_toy") {
			seen[n] = true
			matches = append(matches, n)
		}
	}
	in.mu.Lock()
	for n := range in.y.Globals() {
		add(n)
	}
	for n := range in.imports {
		add(n)
	}
	in.mu.Unlock()
	for _, n := range keywords {
		add(n)
	}
	for _, n := range builtinNames {
		add(n)
	}
	sort.Strings(matches)
	return matches, start, end
}

// members lists the exported names of the package or value named base.
func (in *Interp) members(base string) []string {
	in.mu.Lock()
	path, isPkg := in.imports[base]
	in.mu.Unlock()
	var out []string
	if isPkg {
		name := in.names[path]
		for _, m := range []map[string]map[string]reflect.Value{Symbols, stdSymbols()} {
			for k := range m[path+"/"+name] {
				if !strings.HasPrefix(k, "_") {
					out = append(out, k)
				}
			}
		}
		sort.Strings(out)
		return dedupe(out)
	}
	if !pure(parseExpr(base)) {
		return nil
	}
	in.mu.Lock()
	v, err := in.y.Eval(base)
	in.mu.Unlock()
	if err != nil || !v.IsValid() {
		return nil
	}
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		out = append(out, t.Method(i).Name)
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
		if pt := reflect.PointerTo(st); pt != t {
			for i := 0; i < pt.NumMethod(); i++ {
				out = append(out, pt.Method(i).Name)
			}
		}
	}
	if st.Kind() == reflect.Struct {
		for i := 0; i < st.NumField(); i++ {
			if f := st.Field(i); f.IsExported() {
				out = append(out, f.Name)
			}
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Doc returns the documentation of name: "toy.Load", "tensor.Tensor.Reshape",
// a method through a variable ("m.Generate"), a package ("tensor"), or the
// type and value of a variable.
func (in *Interp) Doc(name string) (string, bool) {
	name = strings.TrimSpace(name)
	if d, ok := docs[name]; ok {
		return d, true
	}
	parts := strings.Split(name, ".")
	// A method reached through a variable: find its type's package and name.
	if len(parts) >= 2 && pure(parseExpr(strings.Join(parts[:len(parts)-1], "."))) {
		in.mu.Lock()
		_, isPkg := in.imports[parts[0]]
		in.mu.Unlock()
		if !isPkg {
			in.mu.Lock()
			v, err := in.y.Eval(strings.Join(parts[:len(parts)-1], "."))
			in.mu.Unlock()
			if err == nil && v.IsValid() {
				t := v.Type()
				for t.Kind() == reflect.Pointer {
					t = t.Elem()
				}
				pkg := t.PkgPath()
				key := in.names[pkg] + "." + t.Name() + "." + parts[len(parts)-1]
				if d, ok := docs[key]; ok {
					return d, true
				}
			}
		}
	}
	if pure(parseExpr(name)) {
		in.mu.Lock()
		_, isPkg := in.imports[name]
		in.mu.Unlock()
		if !isPkg {
			in.mu.Lock()
			v, err := in.y.Eval(name)
			in.mu.Unlock()
			if err == nil && v.IsValid() {
				return fmt.Sprintf("%s %s = %s", name, v.Type(), Format(v).Text), true
			}
		}
	}
	return "", false
}

// Inspect documents the word at cursor.
func (in *Interp) Inspect(code string, cursor int) (string, bool) {
	word, start := wordAt(code, cursor)
	// Extend to the end of the identifier under the cursor.
	end := start + len(word)
	for end < len(code) {
		c := code[end]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			end++
			continue
		}
		break
	}
	word = strings.Trim(code[start:end], ".")
	if word == "" {
		return "", false
	}
	return in.Doc(word)
}
