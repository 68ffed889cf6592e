// Load on `toy serve` as it starts by default (toy's default model, no
// template, default slots and queue): 64 concurrent streams through the
// OpenAI client, 20 more that hang up mid-stream, and one raw TCP client that
// stops reading. The 64 must all succeed and end with [DONE]; afterwards the
// server's memory, open files (and goroutines, where /metrics shows them)
// are back to where they were and a new request is answered promptly.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import OpenAI from "openai";
import { startServer, serveHelp, rssMiB, metric } from "./server.mjs";

const model = "toy-go";
const help = serveHelp();
const writeTimeout = /-write-timeout\b/.test(help);
// 64 + 20 + 1 requests at once pass 4 slots and a queue of 64 (the
// defaults): with --queue the server holds them all; without it the
// hang-ups start once 21 of the 64 are done.
const queueFlag = /-queue\b/.test(help);
let server, openai;

before(async () => {
  server = await startServer([...(writeTimeout ? ["--write-timeout", "3s"] : []), ...(queueFlag ? ["--queue", "96"] : [])]);
  openai = new OpenAI({ baseURL: server.url + "/v1", apiKey: "none", maxRetries: 0, timeout: 120_000 });
});
after(async () => { await server?.stop(); });

const messages = [{ role: "user", content: "func main() {" }];
const openFiles = () => readdirSync(`/proc/${server.pid}/fd`).length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// stream runs one streamed chat through the SDK and reads the raw
// server-sent events: every event JSON, a finish_reason, then [DONE].
async function stream(i, maxTokens) {
  const res = await openai.chat.completions
    .create({ model, messages, stream: true, max_tokens: maxTokens, temperature: 0.8, seed: i })
    .asResponse();
  assert.equal(res.status, 200);
  const events = (await res.text()).split("\n\n").filter((e) => e.trim() !== "");
  assert.equal(events.at(-1), "data: [DONE]", `stream ${i} did not end with [DONE]: ${events.at(-1)}`);
  let finish = null, text = "";
  for (const e of events.slice(0, -1)) {
    assert.ok(e.startsWith("data: "), e);
    const chunk = JSON.parse(e.slice(6));
    assert.ok(!chunk.error, JSON.stringify(chunk.error));
    for (const c of chunk.choices) {
      text += c.delta?.content ?? "";
      finish = c.finish_reason ?? finish;
    }
  }
  assert.ok(["stop", "length"].includes(finish), `stream ${i}: finish_reason ${finish}`);
  return text;
}

// hangUp starts a long stream and aborts it once the first text came.
async function hangUp(i) {
  const ac = new AbortController();
  const s = await openai.chat.completions.create({ model, messages, stream: true, max_tokens: 100, temperature: 0.8, seed: 100 + i },
    { signal: ac.signal });
  let got = 0;
  try {
    for await (const chunk of s) {
      if (chunk.choices[0]?.delta?.content && ++got === 2) ac.abort();
    }
  } catch (e) {
    if (!(e instanceof OpenAI.APIUserAbortError) && e.name !== "AbortError") throw e;
  }
  return got;
}

// stall opens a raw connection, asks for long streams of large chunks
// (n=16, 20 top log-probs each token: 2.5 MB a reply) and never reads a byte
// of them. Three requests are pipelined on it, more than the kernel's socket
// buffers hold (4 MB at most to send here), so the server's writes block.
function stall() {
  const body = JSON.stringify({ model, messages, stream: true, n: 16, max_tokens: 100, logprobs: true, top_logprobs: 20 });
  const sock = net.connect(new URL(server.url).port, "127.0.0.1");
  sock.setNoDelay(true);
  sock.on("connect", () => {
    const req = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    sock.write(req.repeat(3));
    sock.pause();
  });
  sock.on("error", () => {});
  return sock;
}

// serverSide is the server's end of the connection from localPort, as ss
// (iproute2) shows it: {state, sendQ}; undefined without ss, null once gone.
function serverSide(port, localPort) {
  try {
    const out = execFileSync("ss", ["-tanH", `sport = :${port} and dport = :${localPort}`], { encoding: "utf8" });
    const f = out.trim().split(/\s+/);
    return f.length >= 3 ? { state: f[0], sendQ: Number(f[2]) } : null;
  } catch {
    return undefined;
  }
}

test("64 streams beside 20 that hang up and one that stops reading", async () => {
  const tStart = Date.now();
  // Warm up, then the baseline.
  await Promise.all(Array.from({ length: 8 }, (_, i) => stream(1000 + i, 8)));
  await sleep(300);
  console.log(`warm-up done at ${((Date.now() - tStart) / 1000).toFixed(1)} s`);
  const rss0 = rssMiB(server.pid), files0 = openFiles(), goroutines0 = await metric(server.url, "go_goroutines");

  const stalled = stall();
  // Until the server's writes to it block: its unsent bytes stop growing.
  for (let last = -1, i = 0; i < 40; i++) {
    await sleep(250);
    const q = serverSide(new URL(server.url).port, stalled.localPort)?.sendQ;
    if (process.env.DEBUG) console.log(i, q);
    if (q === undefined || (q > 1 << 20 && q === last)) break;
    last = q;
  }
  const t0 = Date.now();
  let done = 0, room;
  const roomForHangUps = queueFlag ? Promise.resolve() : new Promise((r) => { room = r; });
  const streams = Array.from({ length: 64 }, (_, i) => stream(i, 16).finally(() => { if (++done === 21) room?.(); }));
  const hangUps = Array.from({ length: 20 }, (_, i) => roomForHangUps.then(() => hangUp(i)));
  const results = await Promise.allSettled([...streams, ...hangUps]);
  const loadSeconds = (Date.now() - t0) / 1000;
  const errors = results.slice(0, 64).filter((r) => r.status === "rejected").map((r) => String(r.reason?.message ?? r.reason));
  assert.deepEqual(errors, [], `${errors.length} of the 64 streams failed`);
  const hung = results.slice(64);
  for (const r of hung) assert.equal(r.status, "fulfilled", String(r.reason));
  assert.ok(hung.every((r) => r.value >= 1), "a hanging-up client got no text before it hung up");
  const rssPeak = rssMiB(server.pid);
  const port = new URL(server.url).port;
  const unsent = serverSide(port, stalled.localPort)?.sendQ;

  if (writeTimeout && unsent !== undefined) {
    // The server gives up on the client that does not read: it closes its
    // end (FIN-WAIT-1, the FIN queued behind the unread bytes) or it is gone.
    let side = serverSide(port, stalled.localPort);
    for (let i = 0; i < 100 && side?.state === "ESTAB"; i++) {
      await sleep(100);
      side = serverSide(port, stalled.localPort);
    }
    assert.notEqual(side?.state, "ESTAB", "--write-timeout 3s: the server still holds the stalled connection open");
  }
  stalled.destroy();

  if (process.env.DEBUG) console.log(`stalled closed at ${((Date.now() - tStart) / 1000).toFixed(1)} s`);
  // Afterwards: a request is answered promptly, and the server holds what it held.
  const t1 = Date.now();
  const r = await openai.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0 });
  const followUp = Date.now() - t1;
  assert.ok(r.choices[0].message.content.length > 0);
  assert.ok(followUp < 2000, `the follow-up request took ${followUp} ms`);
  let files1 = openFiles(), goroutines1 = await metric(server.url, "go_goroutines");
  for (let i = 0; i < 100 && (files1 > files0 + 2 || goroutines1 > goroutines0 + 5); i++) {
    await sleep(100); // the client's idle keep-alive connections close after 4 s
    files1 = openFiles();
    goroutines1 = await metric(server.url, "go_goroutines");
  }
  const rss1 = rssMiB(server.pid);
  console.log(`load: 64 streams + 20 hang-ups in ${loadSeconds.toFixed(1)} s; follow-up ${followUp} ms; ` +
    `RSS ${rss0.toFixed(0)} → peak ${rssPeak.toFixed(0)} → ${rss1.toFixed(0)} MiB; open files ${files0} → ${files1}; ` +
    `goroutines ${goroutines0 ?? "n/a"} → ${goroutines1 ?? "n/a"}; unread by the stalled client ${unsent ?? "n/a"} bytes`);
  if (unsent !== undefined) assert.ok(unsent > 1 << 20, `the stalled client's socket holds only ${unsent} bytes: the server never blocked`);
  assert.ok(files1 <= files0 + 2, `open files ${files0} → ${files1}: connections leak`);
  if (goroutines0 !== undefined) assert.ok(goroutines1 <= goroutines0 + 5, `goroutines ${goroutines0} → ${goroutines1}`);
  assert.ok(rss1 <= rss0 + 64, `RSS ${rss0.toFixed(0)} → ${rss1.toFixed(0)} MiB`);
});
