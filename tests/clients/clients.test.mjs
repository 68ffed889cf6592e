// toy serve against the official OpenAI and Ollama JavaScript clients, on
// toy's default model (toy-go) with tests/clients/tools.jinja as its chat
// template (toy-go ships none; the template writes Hermes <tool_call>s, so
// tools work), the default model again as the embedding model (--embed
// toy-go: its hidden states), and an API key when this build has --api-key.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { Ollama } from "ollama";
import { startServer, serveHelp, here } from "./server.mjs";

const model = "toy-go";
const key = "toy-clients-secret";
const hasKey = /-api-key\b/.test(serveHelp());
let server, openai, ollama;

before(async () => {
  const args = ["--chat-template-file", `${here}/tools.jinja`, "--embed", "toy-go"];
  if (hasKey) args.push("--api-key", key);
  server = await startServer(args);
  openai = new OpenAI({ baseURL: server.url + "/v1", apiKey: key, maxRetries: 0, timeout: 60_000 });
  ollama = new Ollama({ host: server.url, headers: { Authorization: "Bearer " + key } });
});
after(async () => { await server?.stop(); });

const user = (content) => [{ role: "user", content }];
const prompt = user("func main() {");

test("openai: chat", async () => {
  const r = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 12, temperature: 0 });
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices.length, 1);
  const c = r.choices[0];
  assert.equal(c.message.role, "assistant");
  assert.ok(c.message.content.length > 0, "empty reply");
  assert.ok(["stop", "length"].includes(c.finish_reason), c.finish_reason);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 12, JSON.stringify(r.usage));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  const again = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 12, temperature: 0 });
  assert.equal(again.choices[0].message.content, c.message.content, "greedy replies differ");
});

test("openai: streaming gives the same greedy reply", async () => {
  const whole = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 16, temperature: 0 });
  const stream = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 16, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  let text = "", chunks = 0, finish = null, usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    for (const c of chunk.choices) {
      text += c.delta.content ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
    chunks++;
  }
  assert.ok(chunks > 2, `only ${chunks} chunks`);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.equal(usage?.completion_tokens, whole.usage.completion_tokens);
});

test("openai: n choices", async () => {
  const r = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 10, temperature: 1, seed: 7, n: 3 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  for (const c of r.choices) assert.ok(c.message.content.length > 0 && c.finish_reason);
  assert.ok(new Set(r.choices.map((c) => c.message.content)).size > 1, "three seeds, one reply");
  const again = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 10, temperature: 1, seed: 7, n: 3 });
  assert.deepEqual(again.choices.map((c) => c.message.content), r.choices.map((c) => c.message.content), "seeded n not reproducible");
  // Streamed, each chunk names its choice.
  const stream = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 10, temperature: 1, seed: 7, n: 3, stream: true });
  const texts = ["", "", ""];
  for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.delta.content ?? "";
  assert.deepEqual(texts, r.choices.map((c) => c.message.content));
});

test("openai: logprobs", async () => {
  const r = await openai.chat.completions.create({ model, messages: prompt, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 3 });
  const c = r.choices[0];
  const lps = c.logprobs.content;
  assert.ok(lps.length > 0 && lps.length <= 8);
  assert.equal(lps.map((l) => l.token).join(""), c.message.content);
  for (const l of lps) {
    assert.ok(l.logprob <= 0, `logprob ${l.logprob}`);
    assert.equal(l.top_logprobs.length, 3);
    for (let i = 1; i < 3; i++) assert.ok(l.top_logprobs[i - 1].logprob >= l.top_logprobs[i].logprob, "top_logprobs unsorted");
    assert.equal(l.top_logprobs[0].token, l.token, "greedy token is not the most likely one");
    assert.ok(Math.abs(l.top_logprobs[0].logprob - l.logprob) < 1e-9);
    assert.deepEqual(l.bytes, [...Buffer.from(l.token)]);
  }
});

const tools = [{ type: "function", function: { name: "get_weather", description: "the weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
{ type: "function", function: { name: "get_time", description: "the time in a zone",
  parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } } }];

for (const [what, toolChoice, names] of [
  ["required", "required", ["get_weather", "get_time"]],
  ["named", { type: "function", function: { name: "get_time" } }, ["get_time"]],
]) {
  test(`openai: tools, a forced call (tool_choice ${what})`, async () => {
    for (const seed of [1, 2, 3]) {
      const r = await openai.chat.completions.create({ model, messages: user("What is the weather in Paris?"), tools,
        tool_choice: toolChoice, max_tokens: 48, temperature: 0.8, seed });
      const c = r.choices[0];
      assert.equal(c.finish_reason, "tool_calls", `seed ${seed}: ${JSON.stringify(c.message)}`);
      const call = c.message.tool_calls?.[0];
      assert.ok(call, "no tool_calls");
      assert.equal(call.type, "function");
      assert.ok(names.includes(call.function.name), call.function.name);
      const args = JSON.parse(call.function.arguments);
      const param = call.function.name === "get_weather" ? "city" : "zone";
      assert.equal(typeof args[param], "string", call.function.arguments);
    }
  });
}

test("openai: json_schema response_format", async () => {
  const schema = { type: "object", properties: { ok: { type: "boolean" }, n: { type: "integer", minimum: 0, maximum: 9 } },
    required: ["ok", "n"], additionalProperties: false };
  for (const seed of [1, 2]) {
    const r = await openai.chat.completions.create({ model, messages: user("Answer in JSON."), max_tokens: 64, temperature: 0.8, seed,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } } });
    const c = r.choices[0];
    assert.equal(c.finish_reason, "stop", c.message.content);
    const v = JSON.parse(c.message.content);
    assert.deepEqual(Object.keys(v).sort(), ["n", "ok"]);
    assert.equal(typeof v.ok, "boolean");
    assert.ok(Number.isInteger(v.n) && v.n >= 0 && v.n <= 9, c.message.content);
  }
});

test("openai: embeddings", async () => {
  // The SDK asks for base64 unless told otherwise, and decodes it.
  const r = await openai.embeddings.create({ model, input: ["for i := range n {", "return nil, err"] });
  assert.equal(r.data.length, 2);
  assert.deepEqual(r.data.map((d) => d.index), [0, 1]);
  const [a, b] = r.data.map((d) => d.embedding);
  assert.ok(a.length > 8 && a.length === b.length);
  assert.ok(a.every(Number.isFinite));
  assert.notDeepEqual(a, b);
  const floats = await openai.embeddings.create({ model, input: "for i := range n {", encoding_format: "float" });
  const f = floats.data[0].embedding;
  assert.equal(f.length, a.length);
  for (let i = 0; i < f.length; i++) assert.ok(Math.abs(f[i] - a[i]) < 1e-6, `float and base64 differ at ${i}`);
});

test("openai: a bad body is a BadRequestError (400)", async () => {
  for (const body of [
    { model, messages: prompt, temperature: -1 },
    { model, messages: prompt, top_p: 2 },
    { model, messages: prompt, n: 0 },
    { model, messages: prompt, max_tokens: -1 },
    { model, messages: [] },
    { model, messages: prompt, temprature: 0 }, // a misspelt field
  ]) {
    await assert.rejects(openai.chat.completions.create(body), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${e}`);
      assert.equal(e.status, 400);
      assert.equal(e.error?.type, "invalid_request_error");
      assert.ok(e.message.length > 10);
      return true;
    });
  }
  // Not JSON at all: the SDK sends what it is given as the body.
  await assert.rejects(openai.post("/chat/completions", { body: "{not json", headers: { "Content-Type": "application/json" } }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /JSON/i.test(e.message));
  await assert.rejects(openai.embeddings.create({ model, input: [] }), (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
});

test("openai: auth (--api-key)", { skip: !hasKey && "this build has no --api-key" }, async () => {
  for (const apiKey of ["wrong-key", ""]) {
    const anon = new OpenAI({ baseURL: server.url + "/v1", apiKey: apiKey || "x", maxRetries: 0,
      defaultHeaders: apiKey ? {} : { Authorization: null } });
    await assert.rejects(anon.chat.completions.create({ model, messages: prompt, max_tokens: 2 }), (e) => {
      assert.ok(e instanceof OpenAI.AuthenticationError, String(e));
      assert.equal(e.status, 401);
      return true;
    });
    await assert.rejects(anon.models.list(), (e) => e.status === 401);
  }
  const models = await openai.models.list();
  assert.ok(models.data.some((m) => m.id === model));
  const health = await fetch(server.url + "/health");
  assert.equal(health.status, 200, "GET /health needs no key");
  const bad = new Ollama({ host: server.url, headers: { Authorization: "Bearer wrong-key" } });
  await assert.rejects(bad.list(), (e) => e.status_code === 401);
});

test("ollama: chat and streaming", async () => {
  const r = await ollama.chat({ model, messages: prompt, options: { num_predict: 12, temperature: 0 } });
  assert.equal(r.done, true);
  assert.equal(r.message.role, "assistant");
  assert.ok(r.message.content.length > 0);
  assert.ok(r.eval_count > 0 && r.eval_count <= 12);
  const stream = await ollama.chat({ model, messages: prompt, options: { num_predict: 12, temperature: 0 }, stream: true });
  let text = "", parts = 0, last;
  for await (const part of stream) { text += part.message.content; parts++; last = part; }
  assert.ok(parts > 2);
  assert.equal(last.done, true);
  assert.equal(text, r.message.content);
  const g = await ollama.generate({ model, prompt: "func main() {", raw: true, options: { num_predict: 8, temperature: 0 } });
  assert.ok(g.done && g.response.length > 0);
});

test("ollama: structured output (format: a schema)", async () => {
  const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false };
  const r = await ollama.chat({ model, messages: user("JSON please"), format: schema, options: { num_predict: 48, temperature: 0.8, seed: 3 } });
  assert.equal(typeof JSON.parse(r.message.content).ok, "boolean", r.message.content);
});

test("ollama: logprobs", async () => {
  const r = await ollama.chat({ model, messages: prompt, logprobs: true, top_logprobs: 2, options: { num_predict: 6, temperature: 0 } });
  assert.ok(Array.isArray(r.logprobs) && r.logprobs.length > 0, JSON.stringify(r).slice(0, 300));
  assert.equal(r.logprobs.map((l) => l.token).join(""), r.message.content);
  for (const l of r.logprobs) {
    assert.ok(l.logprob <= 0);
    assert.equal(l.top_logprobs.length, 2);
    assert.equal(l.top_logprobs[0].token, l.token);
  }
});

test("ollama: embed, list, errors", async () => {
  const e = await ollama.embed({ model, input: ["for i := range n {", "return nil, err"] });
  assert.equal(e.embeddings.length, 2);
  assert.ok(e.embeddings[0].length > 8 && e.embeddings[0].length === e.embeddings[1].length);
  const tags = await ollama.list();
  assert.ok(tags.models.some((m) => m.name.startsWith(model)), JSON.stringify(tags));
  await assert.rejects(ollama.chat({ model, messages: prompt, options: { temperature: -1 } }), (err) => {
    assert.equal(err.name, "ResponseError", String(err));
    assert.equal(err.status_code, 400);
    return true;
  });
});
