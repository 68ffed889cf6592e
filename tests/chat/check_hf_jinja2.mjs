// Renders the cases of toy/chat/testdata/jinja2/golden.json.gz (Python's Jinja2,
// render_jinja2.py) with @huggingface/jinja, the Jinja of transformers.js,
// and counts where the two agree: the same output, or both refusing. It
// writes nothing; it tells how far a JavaScript renderer is from Jinja2.
//
//	cd tests/chat && npm ci && node check_hf_jinja2.mjs [-v]
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { Template } from "@huggingface/jinja";

const RealDate = Date; // strftime_now at the golden's clock, 2024-07-26 12:00
globalThis.Date = class extends RealDate {
  constructor(...args) { super(...(args.length ? args : [2024, 6, 26, 12, 0, 0])); }
  static now() { return new RealDate(2024, 6, 26, 12, 0, 0).getTime(); }
};

const dir = path.resolve(import.meta.dirname, "../../toy/chat/testdata/jinja2");
const golden = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, "golden.json.gz"))).toString("utf8"));
const verbose = process.argv.includes("-v");
const templates = {};
const byTemplate = {};
let same = 0;
for (const c of golden.cases) {
  const t = (byTemplate[c.template] ??= { same: 0, differ: 0 });
  let got;
  try {
    templates[c.template] ??= new Template(fs.readFileSync(path.join(dir, "templates", c.template + ".jinja"), "utf8"));
    const vars = { messages: golden.conversations[c.conversation], add_generation_prompt: c.add_generation_prompt,
      bos_token: c.bos_token, eos_token: c.eos_token };
    if (c.tools) vars.tools = golden.tools;
    if ("enable_thinking" in c) vars.enable_thinking = c.enable_thinking;
    got = { output: templates[c.template].render(vars) };
  } catch (e) {
    got = { error: String(e.message) };
  }
  const ok = "output" in c ? got.output === c.output : "error" in got;
  if (ok) { same++; t.same++; } else {
    t.differ++;
    if (verbose) console.log(`${c.template} ${c.conversation} gen=${c.add_generation_prompt}: ${JSON.stringify(got).slice(0, 300)}`);
  }
}
for (const [name, t] of Object.entries(byTemplate)) if (t.differ) console.log(`${name}: ${t.differ} of ${t.same + t.differ} differ`);
console.log(`@huggingface/jinja agrees with Jinja2 on ${same} of ${golden.cases.length} cases over ${Object.keys(byTemplate).length} templates`);
