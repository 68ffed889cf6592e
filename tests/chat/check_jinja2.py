"""Cross-checks golden.json (from @huggingface/jinja) against Python's Jinja2
set up as transformers' apply_chat_template sets it up: a sandboxed
environment with trim_blocks and lstrip_blocks, tojson without ASCII escapes,
and raise_exception. Prints the cases where the two disagree.

    python3 tests/chat/check_jinja2.py
"""
import json
import pathlib

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

root = pathlib.Path(__file__).resolve().parents[2]
golden = json.loads((root / "toy/chat/testdata/golden.json").read_text())


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
# strftime_now at the golden's fixed clock, 2024-07-26 (render.mjs).
env.globals["strftime_now"] = lambda fmt: __import__("datetime").datetime(2024, 7, 26, 12, 0, 0).strftime(fmt)
same = differ = 0
for c in golden["cases"]:
    source = (root / "toy/chat/testdata/templates" / (c["template"] + ".jinja")).read_text()
    vars = dict(messages=golden["conversations"][c["conversation"]], add_generation_prompt=c["add_generation_prompt"],
                bos_token=c["bos_token"], eos_token=c["eos_token"], date_string=golden["date_string"])
    if c.get("tools"):
        vars["tools"] = golden["tools"]
    try:
        got = {"output": env.from_string(source).render(**vars)}
    except TemplateError as e:
        got = {"error": str(e)}
    want = {k: c[k] for k in ("output", "error") if k in c}
    if got == want:
        same += 1
    else:
        differ += 1
        print(f"{c['template']} {c['conversation']} gen={c['add_generation_prompt']} tools={c.get('tools', False)}:\n  jinja2: {got!r}\n  hf:     {want!r}")
print(f"{same} cases agree, {differ} differ")
