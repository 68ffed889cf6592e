"""Renders the chat templates in toy/chat/testdata/jinja2/templates (current
models' templates, as llama.cpp's models/templates/ carries them, and the
ollama-* ones as the GGUF files of Ollama's library carry them) over a set of
conversations with Python's Jinja2, set up as transformers'
apply_chat_template sets it up, and writes toy/chat/testdata/jinja2/golden.json.gz,
which `go test ./toy/chat -run TestJinja2` compares toy's output with; and
the one-line templates of snippets.txt, the Jinja2 semantics one at a time.

    /usr/bin/python3 tests/chat/render_jinja2.py     # Debian's python3-jinja2

The environment is transformers' (src/transformers/utils/chat_template_utils.py):
an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the
loopcontrols extension, its {% generation %} marker (which renders its body),
tojson as json.dumps without ASCII escapes (indent, separators, sort_keys),
and the globals raise_exception and strftime_now (the clock fixed at
2024-07-26 12:00, as toy's test fixes chat.Options.Now).
"""
import datetime
import gzip
import json
import pathlib

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

here = pathlib.Path(__file__).resolve().parent
root = here.parents[1]
out_dir = root / "toy/chat/testdata/jinja2"


class TemplateError(jinja2.exceptions.TemplateError):
    """raise_exception's error, told apart from Jinja2's own."""


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class AssistantTracker(Extension):
    """transformers' {% generation %}…{% endgeneration %}: renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[AssistantTracker, jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: datetime.datetime(2024, 7, 26, 12, 0, 0).strftime(fmt)

conversations = json.loads((here / "conversations.json").read_text())
# Reasoning (reasoning_content, as OpenAI-compatible servers and transformers
# pass it), a tool call made while thinking, and arguments left as a JSON string.
conversations["reasoning"] = [
    {"role": "system", "content": "Reason before answering."},
    {"role": "user", "content": "Is 17 prime?"},
    {"role": "assistant", "reasoning_content": "17 has no divisor between 2 and 4.", "content": "Yes, 17 is prime."},
    {"role": "user", "content": "And 21?"},
]
conversations["reasoning-tool"] = [
    {"role": "user", "content": "Weather in Oslo for 3 days?"},
    {"role": "assistant", "reasoning_content": "I need the forecast tool.", "content": "",
     "tool_calls": [{"id": "callOslo01", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"place": "Oslo", "days": 3}}}]},
    {"role": "tool", "content": "{\"forecast\": [\"snow\", \"sun\", \"sun\"]}", "tool_call_id": "callOslo01", "name": "get_weather"},
    {"role": "assistant", "reasoning_content": "Summarise it.", "content": "Snow, then two sunny days."},
    {"role": "user", "content": "Thanks."},
]
# Content as a list of parts (OpenAI's and transformers' multimodal form, text
# only here), and tool-call arguments left as a JSON string.
conversations["content-parts"] = [
    {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
    {"role": "user", "content": [{"type": "text", "text": "Describe "}, {"type": "text", "text": "Paris."}]},
    {"role": "assistant", "content": [{"type": "text", "text": "A city."}]},
    {"role": "user", "content": [{"type": "text", "text": "More?"}]},
]
conversations["tool-call-string-args"] = [
    {"role": "user", "content": "Search for cats."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "callCats01", "type": "function",
        "function": {"name": "search", "arguments": "{\"query\": \"cats\", \"limit\": 2}"}}]},
    {"role": "tool", "content": "Cats are small felines.", "tool_call_id": "callCats01"},
]

tools = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather at a place.",
        "parameters": {"type": "object", "properties": {
            "place": {"type": "string", "description": "City, \"Country\""},
            "days": {"type": "integer", "description": "Days ahead, 1–7", "enum": [1, 2, 3]}},
            "required": ["place"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "number", "default": 5},
            "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"]}}},
]

# bos_token and eos_token: a model family's own where the file name tells it.
special = [
    ("llama-3", "<|begin_of_text|>", "<|eot_id|>"), ("Llama-3", "<|begin_of_text|>", "<|eot_id|>"),
    ("Hermes-3", "<|begin_of_text|>", "<|eot_id|>"), ("Hermes-2", "<|begin_of_text|>", "<|im_end|>"),
    ("Qwen", "", "<|im_end|>"), ("gemma", "<bos>", "<eos>"), ("DeepSeek", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("deepseek", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"), ("gpt-oss", "<|startoftext|>", "<|return|>"),
    ("GLM", "", "<|endoftext|>"), ("granite", "", "<|end_of_text|>"), ("Phi", "", "<|endoftext|>"),
    ("Kimi", "", "[EOS]"), ("CohereForAI", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("ollama-llama4", "<|begin_of_text|>", "<|eot|>"), ("ollama-llama3", "<|begin_of_text|>", "<|eot_id|>"),
    ("ollama-hermes3", "<|begin_of_text|>", "<|im_end|>"), ("ollama-qw", "", "<|im_end|>"),
    ("ollama-phi", "", "<|endoftext|>"), ("ollama-command", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("ollama-aya", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
]


def tokens(name):
    for key, bos, eos in special:
        if key in name:
            return bos, eos
    return "<s>", "</s>"


def inputs():
    for conv in conversations:
        with_tools = conv.startswith("tool") or conv == "reasoning-tool"
        for gen in (True, False):
            yield {"conversation": conv, "add_generation_prompt": gen, "tools": with_tools}
    yield {"conversation": "user", "add_generation_prompt": True, "tools": True}
    yield {"conversation": "reasoning", "add_generation_prompt": True, "tools": False, "enable_thinking": False}


def main():
    cases = []
    names = sorted(p.name[:-len(".jinja")] for p in (out_dir / "templates").glob("*.jinja"))
    for name in names:
        source = (out_dir / "templates" / (name + ".jinja")).read_text()
        bos, eos = tokens(name)
        try:
            template = env.from_string(source)
        except jinja2.TemplateSyntaxError as e:
            cases.append({"template": name, "syntax_error": str(e)})
            continue
        for inp in inputs():
            vars = {"messages": conversations[inp["conversation"]], "add_generation_prompt": inp["add_generation_prompt"],
                    "bos_token": bos, "eos_token": eos}
            if inp["tools"]:
                vars["tools"] = tools
            if "enable_thinking" in inp:
                vars["enable_thinking"] = inp["enable_thinking"]
            c = {"template": name, **inp, "bos_token": bos, "eos_token": eos}
            try:
                c["output"] = template.render(**vars)
            except TemplateError as e:
                c["raised"] = str(e)
            except Exception as e:  # Jinja2 itself refused: toy must fail too
                c["error"] = f"{type(e).__name__}: {e}"
            cases.append(c)
    snippets = []
    for line in (here / "snippets.txt").read_text().splitlines():
        if not line or line.startswith("# "):
            continue
        c = {"source": line.replace("⏎", "\n")}
        try:
            c["output"] = env.from_string(c["source"]).render(messages=conversations["tool-call"], tools=tools)
        except TemplateError as e:
            c["raised"] = str(e)
        except Exception as e:
            c["error"] = f"{type(e).__name__}: {e}"
        snippets.append(c)
    golden = {"generator": f"tests/chat/render_jinja2.py with Jinja2 {jinja2.__version__}",
              "conversations": conversations, "tools": tools, "cases": cases, "snippets": snippets}
    # gzip (mtime 0, so the same renders give the same bytes): 3 MB of text, 110 kB this way.
    data = (json.dumps(golden, indent=1, ensure_ascii=False) + "\n").encode()
    (out_dir / "golden.json.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"{len(names)} templates, {len(cases)} cases: {sum('output' in c for c in cases)} outputs, "
          f"{sum('raised' in c for c in cases)} raise_exception, {sum('error' in c for c in cases)} Jinja2 errors; "
          f"{len(snippets)} snippets")


if __name__ == "__main__":
    main()
