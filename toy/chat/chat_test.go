package chat

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestExpressions checks the interpreter on small templates whose output can
// be worked out by hand (each as Python's Jinja2 prints it).
func TestExpressions(t *testing.T) {
	msgs := []any{
		NewDict().Set("role", "system").Set("content", " sys "),
		NewDict().Set("role", "user").Set("content", "hi"),
		NewDict().Set("role", "assistant").Set("content", "<think>r</think>\n\nok"),
	}
	cases := []struct{ src, want string }{
		{"{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ -3 // 2 }}", "7 3 1 1024 3.5 -2"},
		{"{{ 'a' ~ 1 ~ none }} {{ 'ab' * 2 }} {{ [1] + [2] }}", "a1None abab [1, 2]"},
		{"{{ messages[0]['role'] }} {{ messages[-1].role }} {{ messages[1:] | length }} {{ messages[5] is defined }}", "system assistant 2 False"},
		{"{% for m in messages[::-1] %}{{ loop.index0 }}{{ m.role[0] }}{% if not loop.last %},{% endif %}{% endfor %}", "0a,1u,2s"},
		{"{% for m in messages if m.role != 'system' %}{{ loop.index }}/{{ loop.length }} {% endfor %}", "1/2 2/2 "},
		{"{% for x in [] %}a{% else %}empty{% endfor %}", "empty"},
		{"{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% set local = 1 %}{% endfor %}{{ ns.n }} {{ local is defined }}", "3 False"},
		{"{{ messages[0].content | trim | upper }}|{{ ' x '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a,b,c'.split(',')[1] }}", "SYS|x|axx|b"},
		{"{{ messages[2].content.split('</think>')[-1].lstrip('\\n') }}", "ok"},
		{"{{ 'ab' in 'cabd' }} {{ 'role' in messages[0] }} {{ 3 not in [1, 2] }} {{ 'hi'.startswith(('x', 'h')) }}", "True True True True"},
		{"{{ 'yes' if messages | length > 2 else 'no' }} {{ none or 'd' }} {{ 0 and 1 }}", "yes d 0"},
		{"{{ {'b': 1, 'a': [true, none, 'é\"']} | tojson }}", `{"b": 1, "a": [true, null, "é\""]}`},
		{"{{ {'a': [1]} | tojson(indent=2) }}", "{\n  \"a\": [\n    1\n  ]\n}"},
		{"{% for k, v in {'x': 1, 'y': 2} | items %}{{ k }}={{ v }};{% endfor %}", "x=1;y=2;"},
		{"{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join('+') }}", "hi"},
		{"{{ ['a', 'code', 'b'] | reject('equalto', 'code') | join(', ') }}", "a, b"},
		{"{{ missing | default('dflt') }} {{ missing is not defined }} {{ x }}", "dflt True "},
		{"{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}{{ greet('bo') }} {{ greet('al', punct='?') }}", "hi bo! hi al?"},
		{"{% set block %}in{{ 1 }}{% endset %}{{ block }}", "in1"},
		{"{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}", "02"},
		{"{{ 'hello world'.title() }} {{ 'ABC' | lower }} {{ 'abc' | capitalize }} {{ 'x' | string }}", "Hello World abc Abc x"},
		{"{# a comment #}{{ 1 }}  {#- trimmed -#}  {{ 2 }}", "12"},
		{"a\n  {% if true %}\n  b\n  {% endif %}\nc", "a\n  b\nc"},
		{"a  {%- if true -%}  b  {%- endif -%}  c", "abc"},
		{"{{ strftime_now('%d %b %Y') }}", "26 Jul 2024"},
		{"{{ true }} {{ 1.0 }} {{ [1, 'a'] }} {{ {'k': none} }}", "True 1.0 [1, 'a'] {'k': None}"},
		// Jinja2's Undefined, dict methods before keys, number keys, tojson's
		// arguments, markupsafe's Markup, iterators, filter and generation blocks.
		{"{% for x in missing %}x{% endfor %}{{ missing | length }} {{ 'a' in missing }} {{ missing is iterable }} [{{ missing | trim }}] {{ missing | items | list }}", "0 False True [] []"},
		{"{% set d = {'type': 'array', 'items': {'type': 'string'}} %}{{ d.items is callable }} {{ d['items'].type }} {{ d | dictsort | first | first }}", "True string items"},
		{"{% for k, v in {512: 'b', 0: 'a', 64: 'c'} | dictsort %}{{ k + 1 }}{{ v }} {% endfor %}{{ {2: 1} }}", "1a 65c 513b {2: 1}"},
		{"{{ 'Ü' | tojson }} {{ 'Ü😀' | tojson(ensure_ascii=True) }} {{ {'b': 1, 'a': 2} | tojson(sort_keys=True, separators=(',', ':')) }} {{ [1] | tojson(indent='\t') }}", "\"Ü\" \"\\u00dc\\ud83d\\ude00\" {\"a\":2,\"b\":1} [\n\t1\n]"},
		{"{{ '<a>'|safe + '\"x\" & y' }} {{ ('<b>'|safe + '<i>') | length }} {{ 'q' ~ ('<'|safe) }}", "<a>&#34;x&#34; &amp; y 12 q<"},
		{"{{ none | map('upper') | list }} {{ ['b', 'A', 'a'] | unique | list }} {{ ['b', 'a'] | reverse | join }} {{ [{'n': 2}, {'n': 1}] | sort(attribute='n') | map(attribute='n') | list }}", "[] ['b', 'A'] ab [1, 2]"},
		{"x\r\ny\n\n", "x\ny\n"}, // line breaks as "\n", one dropped at the end
		{"{% filter upper %}ab{{ 1 }}{% endfilter %}|{% generation %}kept{% endgeneration %}", "AB1|kept"},
	}
	now := func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }
	for _, c := range cases {
		tmpl, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		got, err := tmpl.Execute(map[string]any{"messages": msgs}, now)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		want error
		msg  string
	}{
		{"{% if x %}never closed", ErrSyntax, "without {% endif %}"},
		{"line 1\n{{ 1 + }}", ErrSyntax, "line 2"},
		{"{% frobnicate %}", ErrSyntax, "unknown tag"},
		{"{{ 'unterminated }}", ErrSyntax, "not closed"},
		{"{{ nothing.here }}", ErrRender, "'nothing' is undefined"},
		{"{{ 'a' + 1 }}", ErrRender, "unsupported operand"},
		{"{{ x | nofilter }}", ErrRender, "unknown filter"},
		{"{{ raise_exception('no system role') }}", ErrRender, "no system role"},
		// Jinja2's map, select and reverse give iterators: no JSON, no length, not reversible.
		{"{{ [1] | map('string') | tojson }}", ErrRender, "not JSON serializable"},
		{"{{ ([1] | select) | length }}", ErrRender, "generator has no length"},
		{"{{ ['a'] | map('upper') | last }}", ErrRender, "cannot be reversed"},
		{"{% set l = [] %}{{ l.append(1) }}", ErrRender, ""}, // the sandbox's immutable lists
	} {
		tmpl, err := Parse(c.src)
		if err == nil {
			_, err = tmpl.Render(nil, Options{})
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: got %v, want %v containing %q", c.src, err, c.want, c.msg)
		}
	}
	var te *TemplateError
	_, err := MustParse("{{ raise_exception('System role not supported') }}").Render(nil, Options{})
	if !errors.As(err, &te) || te.Message != "System role not supported" {
		t.Errorf("raise_exception: got %v, want a *TemplateError", err)
	}
}

func TestPlain(t *testing.T) {
	got := Plain([]Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "func main() {"}})
	if want := "Be brief.\nfunc main() {"; got != want {
		t.Errorf("Plain = %q, want %q", got, want)
	}
}
