// The chat page (GET /) in a real browser: Debian's chromium driven by
// puppeteer-core. Type a message, watch the reply stream in, check what the
// page sent; with --api-key, the key field.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import puppeteer from "puppeteer-core";
import { startServer, serveHelp } from "./server.mjs";

const chromium = process.env.CHROMIUM || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const hasKey = /-api-key\b/.test(serveHelp());
const key = "toy-browser-secret";
let server, browser;

before(async () => {
  assert.ok(chromium, "no chromium (.ci/install.d/chromium.sh installs it)");
  server = await startServer(hasKey ? ["--api-key", key] : []);
  browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

// openPage loads the chat page, collecting the page's errors and the chat
// requests it sends.
async function openPage() {
  const page = await browser.newPage();
  const problems = [], chats = [];
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console: " + m.text()); });
  page.on("request", (r) => {
    if (r.url().endsWith("/v1/chat/completions")) chats.push({ headers: r.headers(), body: JSON.parse(r.postData()) });
  });
  const res = await page.goto(server.url + "/", { waitUntil: "load" });
  assert.equal(res.status(), 200);
  assert.match(res.headers()["content-type"], /^text\/html/);
  return { page, problems, chats };
}

// send types text and sends it with Enter; it resolves to the assistant
// bubble's text once the reply is done, and how many times it changed.
async function send(page, text) {
  await page.evaluate(() => {
    window.__updates = 0; // a MutationObserver counts the reply's updates as they stream in
    new MutationObserver((records) => {
      for (const r of records) {
        const n = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (n?.closest?.(".msg.assistant.streaming")) window.__updates++;
      }
    }).observe(document.getElementById("log"), { childList: true, subtree: true, characterData: true });
  });
  const before = await page.$$eval(".msg.assistant", (ms) => ms.length);
  await page.type("#input", text);
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".msg.assistant.done").length > n, { timeout: 60_000 }, before);
  return page.evaluate(() => {
    const ms = document.querySelectorAll(".msg.assistant");
    const last = ms[ms.length - 1];
    const meta = last.querySelector(".meta")?.textContent ?? "";
    return { text: last.textContent.slice(0, last.textContent.length - meta.length), meta, updates: window.__updates,
      errors: [...document.querySelectorAll(".msg.error")].map((e) => e.textContent) };
  });
}

test("the chat page streams a reply with its settings", async () => {
  const { page, problems, chats } = await openPage();
  if (hasKey) {
    await page.waitForFunction(() => /401/.test(document.getElementById("model").textContent));
    await page.type("#apikey", key);
    await page.$eval("#apikey", (e) => e.dispatchEvent(new Event("change")));
  }
  await page.waitForFunction(() => document.getElementById("model").textContent === "toy-go", { timeout: 10_000 });

  await page.type("#system", "You write Go.");
  for (const [id, v] of [["temperature", "0"], ["top_p", "0.9"], ["max_tokens", "24"]]) {
    await page.$eval("#" + id, (e, v) => { e.value = v; }, v);
  }
  const r = await send(page, "func main() {");
  assert.deepEqual(r.errors, []);
  assert.ok(r.text.length > 0, "no reply text");
  assert.ok(r.updates >= 3, `the reply appeared in ${r.updates} updates, not streamed`);
  assert.match(r.meta, /finish: (stop|length)/);
  assert.match(r.meta, /\d+ tokens/);

  assert.equal(chats.length, 1);
  const { headers, body } = chats[0];
  assert.equal(body.stream, true);
  assert.deepEqual(body.messages, [{ role: "system", content: "You write Go." }, { role: "user", content: "func main() {" }]);
  assert.equal(body.temperature, 0);
  assert.equal(body.top_p, 0.9);
  assert.equal(body.max_tokens, 24);
  assert.equal(body.stop, undefined);
  assert.equal(headers["content-type"], "application/json");
  assert.equal(headers["authorization"], hasKey ? "Bearer " + key : undefined);

  // The same greedy request through the API gives the text the page shows.
  const api = await fetch(server.url + "/v1/chat/completions", { method: "POST",
    headers: { "Content-Type": "application/json", ...(hasKey ? { Authorization: "Bearer " + key } : {}) },
    body: JSON.stringify({ ...body, stream: false }) });
  assert.equal(r.text, (await api.json()).choices[0].message.content);

  // A second turn carries the first; a stop string is sent and honoured.
  const stop = r.text.trim().slice(0, 1);
  await page.$eval("#stop", (e, v) => { e.value = v; }, stop);
  const r2 = await send(page, "more");
  assert.deepEqual(r2.errors, []);
  assert.equal(chats[1].body.stop, stop);
  assert.deepEqual(chats[1].body.messages.slice(1), [{ role: "user", content: "func main() {" },
    { role: "assistant", content: r.text }, { role: "user", content: "more" }]);
  assert.ok(!r2.text.includes(stop), `the reply ${JSON.stringify(r2.text)} holds the stop string ${stop}`);
  // The one failed load a browser logs: /v1/models before the key was typed.
  assert.deepEqual(problems.filter((p) => !(hasKey && /status of 401/.test(p))), []);
  await page.close();
});

test("the chat page shows an error the server gives", async () => {
  const { page, problems } = await openPage();
  if (hasKey) await page.$eval("#apikey", (e, k) => { e.value = k; }, key);
  await page.$eval("#temperature", (e) => { e.value = "-1"; });
  const r = await send(page, "hello");
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0], /400: temperature/);
  assert.deepEqual(problems.filter((p) => !/status of 400/.test(p) && !(hasKey && /status of 401/.test(p))), []);
  await page.close();
});
