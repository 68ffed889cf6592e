// Renders every chat template in toy/chat/testdata/templates over the
// conversations in conversations.json with @huggingface/jinja (the Jinja
// that transformers.js uses for apply_chat_template), and writes the outputs
// to toy/chat/testdata/golden.json, which `go test ./toy/chat` reads.
//
//	cd tests/chat && npm ci && node render.mjs
import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";

// strftime_now reads the clock (gpt-oss prints today's date): the golden's
// clock is fixed at 2024-07-26, as toy's test sets chat.Options.Now.
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) { super(...(args.length ? args : [2024, 6, 26, 12, 0, 0])); }
  static now() { return new RealDate(2024, 6, 26, 12, 0, 0).getTime(); }
};

const root = path.resolve(import.meta.dirname, "../..");
const dir = path.join(root, "toy/chat/testdata/templates");
const conversations = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "conversations.json"), "utf8"));

// The special tokens each model's tokenizer_config.json names (Qwen has no BOS).
const tokens = {
  llama2: ["<s>", "</s>"], mistral: ["<s>", "</s>"], "mistral-v0.3": ["<s>", "</s>"], tinyllama: ["<s>", "</s>"],
  llama3: ["<|begin_of_text|>", "<|eot_id|>"], "llama3.1": ["<|begin_of_text|>", "<|eot_id|>"], "llama3.2": ["<|begin_of_text|>", "<|eot_id|>"],
  smollm2: ["<|im_start|>", "<|im_end|>"], "qwen2.5": [null, "<|im_end|>"], qwen3: [null, "<|im_end|>"], "qwen3.5": [null, "<|im_end|>"],
  "glm4.6": [null, "<|endoftext|>"], gemma2: ["<bos>", "<eos>"], olmoe: ["<|endoftext|>", "<|endoftext|>"], "gpt-oss": ["<|startoftext|>", "<|return|>"],
};

// The tools offered: with the "user" conversation, and with the "tool-…" ones
// whose assistant messages call them (arguments as objects, as transformers expects).
const tools = [{
  type: "function",
  function: {
    name: "get_weather", description: "Get the weather at a place.",
    parameters: { type: "object", properties: { place: { type: "string", description: "City, \"Country\"" }, days: { type: "integer" } }, required: ["place"] },
  },
}];

const cases = [];
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".jinja")).sort()) {
  const name = file.slice(0, -".jinja".length);
  const source = fs.readFileSync(path.join(dir, file), "utf8");
  const template = new Template(source);
  const [bos, eos] = tokens[name];
  const inputs = [];
  for (const conv of Object.keys(conversations)) {
    // The tool-calling conversations ("tool-…") are rendered with the tools they call.
    const withTools = conv.startsWith("tool") ? { tools: true } : {};
    for (const gen of [true, false]) inputs.push({ conversation: conv, add_generation_prompt: gen, ...withTools });
  }
  inputs.push({ conversation: "user", add_generation_prompt: true, tools: true });
  for (const input of inputs) {
    const vars = {
      messages: conversations[input.conversation],
      add_generation_prompt: input.add_generation_prompt,
      bos_token: bos, eos_token: eos,
      date_string: "26 Jul 2024", // Llama 3.x would otherwise print today's date
    };
    if (input.tools) vars.tools = tools;
    const c = { template: name, ...input, bos_token: bos, eos_token: eos };
    try {
      c.output = template.render(vars);
    } catch (e) {
      c.error = String(e.message);
    }
    cases.push(c);
  }
}
const golden = {
  generator: "tests/chat/render.mjs with @huggingface/jinja 0.5.11",
  conversations, tools, date_string: "26 Jul 2024", cases,
};
fs.writeFileSync(path.join(root, "toy/chat/testdata/golden.json"), JSON.stringify(golden, null, 1) + "\n");
console.log(`${cases.length} cases, ${cases.filter((c) => c.error).length} errors`);
